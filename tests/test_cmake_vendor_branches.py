"""CMake vendor chains: tests before the chain's HIP branch are false on a ROCm configure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import write_tree

from cuda2rocm.context.build import _commands, cmake_dead_lines
from cuda2rocm.context.cmake_branches import rocm_false_tests

LANES = '__global__ void k(int* o) { int v; asm("mov.u32 %0, %%laneid;" : "=r"(v)); o[0] = v; }\n'


def _lint(root: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "cuda2rocm", "lint", "--no-cache", "--format", "json"]
    cmd += ["--show-guarded", "--exit-zero", str(root)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root, check=True)
    return json.loads(proc.stdout)["diagnostics"]


def _tree(root: Path, chain: str) -> None:
    write_tree(
        root,
        {
            "CMakeLists.txt": "cmake_minimum_required(VERSION 3.21)\nproject(quill CXX)\n" + chain,
            "green/CMakeLists.txt": "add_library(quill_green lanes.cu)\n",
            "green/lanes.cu": LANES,
            "red/CMakeLists.txt": "add_library(quill_red lanes.cpp)\n",
            "red/lanes.cpp": "int lanes() { return 64; }\n",
        },
    )


def _ptx(root: Path) -> list[dict]:
    return [d for d in _lint(root) if d["rule"] == "inline-ptx"]


def test_folder_added_before_the_hip_branch_is_not_built_on_rocm(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        "if(QUILL_GREEN)\n  add_subdirectory(green)\n"
        "elseif(QUILL_RED)\n  enable_language(HIP)\n  add_subdirectory(red)\nendif()\n",
    )
    found = _lint(tmp_path)
    ptx = [d for d in found if d["rule"] == "inline-ptx"]
    assert len(ptx) == 1 and "guarded" in ptx[0]
    gate = [d for d in found if d["rule"] == "cuda-only-component"]
    assert len(gate) == 1 and "HIP branch `elseif(QUILL_RED)`" in gate[0]["message"]


def test_a_chain_with_no_hip_branch_changes_nothing(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        "if(QUILL_GREEN)\n  add_subdirectory(green)\n"
        "elseif(QUILL_RED)\n  add_subdirectory(red)\nendif()\n",
    )
    ptx = _ptx(tmp_path)
    assert len(ptx) == 1 and "guarded" not in ptx[0]


def test_branches_after_the_hip_branch_say_nothing(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        "if(QUILL_RED)\n  find_package(hipblas REQUIRED)\n  add_subdirectory(red)\n"
        "else()\n  add_subdirectory(green)\nendif()\n",
    )
    ptx = _ptx(tmp_path)
    assert len(ptx) == 1 and "guarded" not in ptx[0]


def _false(text: str) -> set[int]:
    return set(rocm_false_tests(_commands(text, every=True)))


def test_which_branch_is_the_hip_one() -> None:
    # The body marks it: HIP language, a ROCm package, hip_add_library, HIP sources, targets.
    for body in (
        "find_package(rocprim)",
        "hip_add_library(x a.cu)",
        "set_source_files_properties(a.cu PROPERTIES LANGUAGE HIP)",
        "add_library(x a.hip)",
        "set(CMAKE_HIP_ARCHITECTURES gfx90a)",
        "if(Q)\n set(GPU_TARGETS gfx942)\nendif()",  # nested still counts
    ):
        assert _false(f"if(A)\nelseif(B)\nelseif(C)\n{body}\nendif()\n") == {1, 2}, body
    # The condition marks it: a ROCm switch, a found package, a ROCm value.
    for test in ("USE_ROCM", "TERN_HIP", "hip_FOUND", 'MODE STREQUAL "rocm"', "CMAKE_HIP_COMPILER"):
        assert _false(f"if(A)\nelseif({test})\nendif()\n") == {1}, test


def test_what_is_no_hip_branch() -> None:
    assert _false("if(NOT USE_ROCM)\nelse()\nendif()\n") == set()  # the other side
    assert _false("if(A)\nelseif(TERN_HIP_GRAPHS)\nendif()\n") == set()  # a HIP feature
    assert _false("if(A)\nelseif(B)\nfind_package(CUDAToolkit)\nendif()\n") == set()
    # Two HIP branches: which one a ROCm configure takes is unknown.
    two = "if(A)\nelseif(B)\nenable_language(HIP)\nelse()\nfind_package(hip)\nendif()\n"
    assert _false(two) == set()
    # The first branch is HIP's: nothing before it.
    assert _false("if(USE_HIP)\nelseif(A)\nelse()\nendif()\n") == set()


def test_dead_lines_name_the_hip_branch() -> None:
    text = "if(FOO)\n  set(X a.cu)\nelseif(BAR)\n  enable_language(HIP)\nendif()\n"
    (region,) = cmake_dead_lines(text)
    assert region[:2] == (2, 2) and "`elseif(BAR)` (line 3)" in region[2]


def test_a_listing_file_counts_when_its_parent_computes_the_path(tmp_path: Path) -> None:
    chain = "if(QUILL_GREEN)\n  add_library(q lanes.cu)\nelse()\n  enable_language(HIP)\n"
    write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(quill CXX)\nadd_subdirectory(${QUILL_PART}/kern)\n",
            "deep/kern/CMakeLists.txt": chain + "  add_library(q lanes_amd.cpp)\nendif()\n",
            "deep/kern/lanes.cu": LANES,
            "deep/kern/lanes_amd.cpp": "int lanes() { return 64; }\n",
        },
    )
    ptx = _ptx(tmp_path)
    assert len(ptx) == 1 and "guarded" in ptx[0]
    # Another CMake file naming the same source may build it for ROCm: reported.
    (tmp_path / "tests" / "CMakeLists.txt").parent.mkdir()
    (tmp_path / "tests" / "CMakeLists.txt").write_text("add_executable(t ../deep/kern/lanes.cu)\n")
    ptx = _ptx(tmp_path)
    assert len(ptx) == 1 and "guarded" not in ptx[0]


def test_a_glob_macro_appending_to_its_caller_variable_names_sources(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "project(quill CXX)\n"
            "macro(GATHER OUT)\n  file(GLOB _found ${ARGN})\n  list(APPEND ${OUT} ${_found})\n"
            "endmacro()\n"
            "if(QUILL_WITH_CUDA)\n  gather(SRCS ${CMAKE_CURRENT_SOURCE_DIR}/nv/*.cu)\nendif()\n"
            "if(QUILL_WITH_HIP)\n  gather(SRCS ${CMAKE_CURRENT_SOURCE_DIR}/amd/*.cpp)\nendif()\n"
            "add_library(quill ${SRCS})\n",
            "nv/lanes.cu": LANES,
            "amd/lanes.cpp": "int lanes() { return 64; }\n",
        },
    )
    ptx = _ptx(tmp_path)
    assert len(ptx) == 1 and "guarded" in ptx[0]
