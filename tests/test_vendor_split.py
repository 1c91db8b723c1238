"""Vendor-split siblings (context/vendor_split.py): a CUDA backend beside its ROCm twin."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from conftest import lint_rules, write_tree

from cuda2rocm.cli import main
from cuda2rocm.context import vendor_split
from cuda2rocm.context.vendor_split import pairs, twin_of

RULES = ("hip-stream", "hip-include", "inline-ptx", "cuda-only-component")
STREAM = (
    "#include <cuda_runtime.h>\n"
    "__global__ void fill(int* p, int v) { p[threadIdx.x] = v; }\n"
    "void quux_fill(int* p, int v, cudaStream_t s) { fill<<<1, 64, 0, s>>>(p, v); }\n"
)
HIP = "#include <hip/hip_runtime.h>\n__global__ void fill(int* p, int v) { p[threadIdx.x] = v; }\n"
CHAIN = (
    "cmake_minimum_required(VERSION 3.21)\nproject(quux LANGUAGES CXX)\n"
    'set(QUUX_GPU "none" CACHE STRING "nvidia, amd or none")\n'
    'if(QUUX_GPU STREQUAL "nvidia")\n  add_subdirectory(engine/cuda)\n'
    'elseif(QUUX_GPU STREQUAL "amd")\n  add_subdirectory(engine/hip)\nendif()\n'
)


def _split(result, folder: str) -> tuple[list, list]:
    """(reported, guarded-by-vendor-split) findings under `folder` (summaries left out)."""
    inside = [
        d
        for d in [*result.diagnostics, *result.guarded]
        if f"/{folder}/" in Path(d.path).as_posix() and d.rule != "cuda-only-component"
    ]
    guarded = [d for d in inside if d.guarded and "the CUDA sibling of" in d.guarded]
    reported = [d for d in inside if not d.guarded]
    return reported, guarded


def _chain(root: Path, twin: str = HIP, extra: dict[str, str] | None = None) -> None:
    files = {
        "CMakeLists.txt": CHAIN,
        "engine/cuda/CMakeLists.txt": "add_library(quux_gpu fill.cu)\n",
        "engine/cuda/fill.cu": STREAM,
        "engine/hip/CMakeLists.txt": "enable_language(HIP)\nadd_library(quux_gpu fill.hip)\n",
        "engine/hip/fill.hip": twin,
    }
    files.update(extra or {})
    write_tree(root, files)


# -- names -------------------------------------------------------------------------------------
def test_siblings_differ_only_by_one_vendor_word(tmp_path: Path) -> None:
    names = [
        "ops/cuda/a.cu", "ops/rocm/a.cpp",
        "backend/cuda/b.cu", "backend/hip/b.hip",
        "lib-cu/c.cu", "lib-amd/CMakeLists.txt",
        "src/cuda_operations.cc", "src/hip_operations.cc",
        "src/scan_cuda.cu", "src/scan_hip.cpp",
        "src/cub/d.cuh", "src/hip/e.h",  # `cub` is no vendor word
        "src/cuda_alpha.cu", "src/hip_beta.cpp",  # differ by more than the vendor word
        "src/nv_gemm.cu", "docs/amd_gemm.md",  # not two sources of one folder
    ]  # fmt: skip
    write_tree(tmp_path, dict.fromkeys(names, "x\n"))
    root = tmp_path.resolve()
    found = {(c.relative_to(root).as_posix(), r.relative_to(root).as_posix()) for c, r in
             pairs([root / n for n in names], root)}  # fmt: skip
    assert found == {
        ("ops/cuda", "ops/rocm"),
        ("backend/cuda", "backend/hip"),
        ("lib-cu", "lib-amd"),
        ("src/cuda_operations.cc", "src/hip_operations.cc"),
        ("src/scan_cuda.cu", "src/scan_hip.cpp"),
    }
    assert twin_of(root / "src/hip", [root / "src/cub"]) is None


# -- guarded -----------------------------------------------------------------------------------
def test_the_branch_beside_the_twins_is_guarded_with_the_deciding_line(tmp_path: Path) -> None:
    # `"amd"` is no ROCm value of a selector the build model knows: the chain decides.
    _chain(tmp_path)
    result = lint_rules(tmp_path, *RULES)
    reported, guarded = _split(result, "engine/cuda")
    assert not reported and {d.rule for d in guarded} == {"hip-stream", "hip-include"}
    why = guarded[0].guarded
    assert "`engine/hip/`" in why and "CMakeLists.txt:5" in why and "CMakeLists.txt:7" in why
    summary = [d for d in result.diagnostics if d.rule == "cuda-only-component"]
    assert len(summary) == 1 and summary[0].severity.value == "info"  # the twin is the port


def test_a_file_pair_in_source_lists(tmp_path: Path) -> None:
    top = CHAIN.replace("add_subdirectory(engine/cuda)", "add_library(quux cuda_ops.cu)")
    # A `.hip` source would mark the branch as HIP's (cmake_branches); a `.cpp` one does not.
    top = top.replace("add_subdirectory(engine/hip)", "add_library(quux hip_ops.cpp)")
    write_tree(tmp_path, {"CMakeLists.txt": top, "cuda_ops.cu": STREAM, "hip_ops.cpp": HIP})
    result = lint_rules(tmp_path, *RULES)
    guarded = [d for d in result.guarded if d.guarded and "the CUDA sibling of" in d.guarded]
    assert {Path(d.path).name for d in guarded} == {"cuda_ops.cu"}
    assert "`hip_ops.cpp`" in guarded[0].guarded
    assert not [d for d in result.diagnostics if d.path.endswith("cuda_ops.cu")]


def test_a_compat_header_decided_by_its_includes(tmp_path: Path) -> None:
    # `#ifdef USE_ROCM` / `#include "hip_compat.h"` / `#else` / `#include "cu_compat.h"`: which
    # lines a HIP pass compiles decides (the runner asks the preprocessor model).
    use = (
        '#ifdef USE_ROCM\n#include "compat/hip_compat.h"\n#else\n'
        '#include "compat/cu_compat.h"\n#endif\nint k();\n'
    )
    write_tree(
        tmp_path,
        {
            "compat/cu_compat.h": "typedef cudaStream_t quux_stream;\n",
            "compat/hip_compat.h": "typedef hipStream_t quux_stream;\n",
            "kernels/k.cu": use,
        },
    )
    root = tmp_path.resolve()
    sources = [(root / n, n, (root / n).read_bytes()) for n in
               ("compat/cu_compat.h", "compat/hip_compat.h", "kernels/k.cu")]  # fmt: skip

    def decide(reachable):
        return vendor_split.components([], sources, root, None, reachable)

    (found,) = decide(lambda shown, line: not (shown == "kernels/k.cu" and line == 4))
    assert found.files == {root / "compat/cu_compat.h"}
    assert "kernels/k.cu:4" in found.reason and "`compat/hip_compat.h`" in found.reason
    assert decide(None) == []  # every include may be compiled: the header stays reported


# -- stays reported ----------------------------------------------------------------------------
def test_a_twin_without_sources_guards_nothing(tmp_path: Path) -> None:
    _chain(tmp_path)
    (tmp_path / "engine/hip/fill.hip").unlink()
    (tmp_path / "engine/hip/README.md").write_text("AMD support: planned\n")
    reported, guarded = _split(lint_rules(tmp_path, *RULES), "engine/cuda")
    assert reported and not guarded


def test_a_rocm_build_compiling_the_cuda_folder_keeps_it(tmp_path: Path) -> None:
    # The HIP twin compiles the CUDA sources through a vendor header: they are ROCm's too.
    hip = (
        "enable_language(HIP)\nfile(GLOB QUUX_SRC ../cuda/*.cu)\n"
        "set_source_files_properties(${QUUX_SRC} PROPERTIES LANGUAGE HIP)\n"
        "add_library(quux_gpu ${QUUX_SRC})\n"
    )
    _chain(tmp_path, extra={"engine/hip/CMakeLists.txt": hip})
    reported, guarded = _split(lint_rules(tmp_path, *RULES), "engine/cuda")
    assert reported and not guarded


def test_a_twin_that_includes_a_cuda_sibling_file_keeps_it(tmp_path: Path) -> None:
    _chain(tmp_path, twin='#include "../cuda/fill.cu"\n' + HIP)
    reported, guarded = _split(lint_rules(tmp_path, *RULES), "engine/cuda")
    assert reported and not guarded


def test_an_unknown_build_keeps_the_pair_reported(tmp_path: Path) -> None:
    # Nothing of the run says how either sibling is built (a computed add_subdirectory).
    top = "project(quux CXX)\nforeach(v ${QUUX_VENDORS})\n  add_subdirectory(${v})\nendforeach()\n"
    write_tree(tmp_path, {"CMakeLists.txt": top, "cuda/fill.cu": STREAM, "hip/fill.hip": HIP})
    reported, guarded = _split(lint_rules(tmp_path, *RULES), "cuda")
    assert reported and not guarded


def test_a_listing_outside_the_chain_keeps_it(tmp_path: Path) -> None:
    # A second, unconditional listing of the CUDA folder: a ROCm configure may run it.
    _chain(tmp_path)
    text = (tmp_path / "CMakeLists.txt").read_text() + "add_library(quux_all engine/cuda/fill.cu)\n"
    (tmp_path / "CMakeLists.txt").write_text(text)
    reported, guarded = _split(lint_rules(tmp_path, *RULES), "engine/cuda")
    assert reported and not guarded


def test_a_common_file_including_one_header_keeps_that_header(tmp_path: Path) -> None:
    header = "#include <cuda_runtime.h>\ninline void quux_sync(cudaStream_t s) {}\n"
    api = '#include "../engine/cuda/sync.h"\nint api();\n'
    _chain(tmp_path, extra={"engine/cuda/sync.h": header, "common/api.cpp": api})
    reported, guarded = _split(lint_rules(tmp_path, *RULES), "engine/cuda")
    assert {Path(d.path).name for d in reported} == {"sync.h"}
    assert {Path(d.path).name for d in guarded} == {"fill.cu"}


# -- warm facts --------------------------------------------------------------------------------
def test_a_cached_run_keeps_the_sibling_guarded(tmp_path: Path) -> None:
    _chain(tmp_path / "t")
    args = ["lint", "--format", "json", "--show-guarded", "-j", "1", str(tmp_path / "t")]
    cached = [*args[:-1], "--cache-dir", str(tmp_path / "cache"), args[-1]]
    cold = CliRunner().invoke(main, cached).output
    warm = CliRunner().invoke(main, cached).output
    plain = CliRunner().invoke(main, [*args[:-1], "--no-cache", args[-1]]).output
    assert cold == warm == plain
    found = json.loads(warm)["diagnostics"]
    assert any("the CUDA sibling of" in (d.get("guarded") or "") for d in found)
    # Editing the twin's listing away re-derives the facts: the sibling is reported again.
    (tmp_path / "t/CMakeLists.txt").write_text(CHAIN.replace("add_subdirectory(engine/hip)", ""))
    after = json.loads(CliRunner().invoke(main, cached).output)["diagnostics"]
    assert not any("the CUDA sibling of" in (d.get("guarded") or "") for d in after)


def test_a_recursive_glob_that_reaches_it_keeps_it(tmp_path: Path) -> None:
    # The glob names neither sibling, but compiles the CUDA one's sources wherever it runs.
    _chain(tmp_path)
    text = (tmp_path / "CMakeLists.txt").read_text()
    text += "file(GLOB_RECURSE QUUX_ALL ${PROJECT_SOURCE_DIR}/engine/*.cu)\n"
    text += "add_library(quux_all ${QUUX_ALL})\n"
    (tmp_path / "CMakeLists.txt").write_text(text)
    reported, guarded = _split(lint_rules(tmp_path, *RULES), "engine/cuda")
    assert reported and not guarded


def test_a_header_list_is_no_listing(tmp_path: Path) -> None:
    # Headers globbed for an install or a header list are compiled by their includers only.
    _chain(tmp_path, extra={"engine/cuda/fill.cuh": "typedef cudaStream_t quux_stream;\n"})
    text = (tmp_path / "CMakeLists.txt").read_text()
    text += "file(GLOB_RECURSE QUUX_HEADERS ${PROJECT_SOURCE_DIR}/engine/*.cuh)\n"
    text += "install(FILES ${QUUX_HEADERS} DESTINATION include)\n"
    (tmp_path / "CMakeLists.txt").write_text(text)
    reported, guarded = _split(lint_rules(tmp_path, *RULES), "engine/cuda")
    assert not reported and {Path(d.path).name for d in guarded} == {"fill.cu", "fill.cuh"}
