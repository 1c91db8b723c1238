"""Sources no build of the run compiles (context.unbuilt), and the headers only they include.

The fixture mirrors a vendored upstream example folder: the project's CMake compiles the
folder's `fmha_*.cu` through a glob, and the folder's own (upstream) CMakeLists.txt, which
nothing adds, lists example programs.
"""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.context.unbuilt import unbuilt_sources
from cuda2rocm.engine import Linter

ROOT_CMAKE = """\
cmake_minimum_required(VERSION 3.21)
project(demo LANGUAGES CXX)
add_subdirectory(ops)
"""
OPS_CMAKE = """\
file(GLOB ops_sources attention/*.cu attention/vendored/fmha_*.cu)
add_library(ops SHARED ${ops_sources})
"""
VENDORED_CMAKE = """\
# upstream's example build: the function comes from the upstream project
upstream_add_example(example_fwd example_fwd.cu)
upstream_add_example(example_bwd example_bwd.cu)
"""
HEADER = "#pragma once\n#include <cutlass/cutlass.h>\n"
FMHA = """\
#ifndef __HIP_PLATFORM_AMD__
#include "kernel.hpp"
#endif
int fmha() { return 0; }
"""
EXAMPLE = '#include <cutlass/cutlass.h>\n#include "kernel.hpp"\nint main() { return 0; }\n'


def _tree(root: Path, **changes: str) -> None:
    files = {
        "CMakeLists.txt": ROOT_CMAKE,
        "ops/CMakeLists.txt": OPS_CMAKE,
        "ops/attention/vendored/CMakeLists.txt": VENDORED_CMAKE,
        "ops/attention/vendored/kernel.hpp": HEADER,
        "ops/attention/vendored/fmha_fwd.cu": FMHA,
        "ops/attention/vendored/example_fwd.cu": EXAMPLE,
        "ops/attention/vendored/example_bwd.cu": EXAMPLE,
    }
    files.update(changes)
    write_tree(root, files)


def _unbuilt(root: Path) -> set[str]:
    cmake = [
        (p, str(p), p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.name == "CMakeLists.txt" or p.suffix == ".cmake"
    ]
    return {p.relative_to(root.resolve()).as_posix() for p in unbuilt_sources(cmake)}


def _lint(root: Path):
    specs = [r for r in load_catalogue() if r.id == "hip-include"]
    result = runner.run(Linter(specs), [root])

    def rel(d):
        return Path(d.path).resolve().relative_to(root.resolve()).as_posix()

    reported = {rel(d) for d in result.diagnostics if d.rule == "hip-include"}
    guarded = {rel(d): d.guarded for d in result.guarded}
    return reported, guarded


def test_sources_only_an_unadded_cmake_file_lists_are_unbuilt(tmp_path):
    _tree(tmp_path)
    assert _unbuilt(tmp_path) == {
        "ops/attention/vendored/example_fwd.cu",
        "ops/attention/vendored/example_bwd.cu",
    }


def test_header_included_only_by_unbuilt_and_skipped_code_is_guarded(tmp_path):
    _tree(tmp_path)
    reported, guarded = _lint(tmp_path)
    assert reported == set()
    assert (
        "no build of the run compiles this file" in guarded["ops/attention/vendored/example_fwd.cu"]
    )
    why = guarded["ops/attention/vendored/kernel.hpp"]
    assert "never includes this header" in why and "no build of the run compiles" in why


def test_a_source_another_build_file_names_is_built(tmp_path):
    # The project's glob also takes example_*.cu: built (for ROCm too), reported.
    ops = OPS_CMAKE.replace("fmha_*.cu", "*.cu")
    _tree(tmp_path, **{"ops/CMakeLists.txt": ops})
    assert _unbuilt(tmp_path) == set()
    reported, guarded = _lint(tmp_path)
    # The examples include CUTLASS themselves and the header below them: reported there, the
    # header following that decision (context.library_users).
    assert "ops/attention/vendored/example_fwd.cu" in reported
    assert "needs CUTLASS" in guarded["ops/attention/vendored/kernel.hpp"]


def test_a_recursive_glob_of_a_parent_folder_builds_it(tmp_path):
    ops = OPS_CMAKE.replace("file(GLOB ", "file(GLOB_RECURSE ").replace(
        "attention/vendored/fmha_*.cu", ""
    )
    _tree(tmp_path, **{"ops/CMakeLists.txt": ops})
    assert _unbuilt(tmp_path) == set()


def test_an_added_folder_or_a_computed_add_subdirectory_keeps_it_reported(tmp_path):
    added = OPS_CMAKE + "add_subdirectory(attention/vendored)\n"
    _tree(tmp_path, **{"ops/CMakeLists.txt": added})
    assert _unbuilt(tmp_path) == set()
    # A folder given from outside (-DEXAMPLES_DIR=...) may be any folder: unknown.
    computed = OPS_CMAKE + 'add_subdirectory("${EXAMPLES_DIR}")\n'
    _tree(tmp_path, **{"ops/CMakeLists.txt": computed})
    assert _unbuilt(tmp_path) == set()
    # One the run sets to another folder is not this one.
    other = (
        OPS_CMAKE
        + 'set(DEP_DIR "${CMAKE_SOURCE_DIR}/external/dep")\nadd_subdirectory("${DEP_DIR}")\n'
    )
    _tree(tmp_path, **{"ops/CMakeLists.txt": other})
    assert len(_unbuilt(tmp_path)) == 2


def test_an_included_cmakelists_or_an_external_project_source_dir_builds_it(tmp_path):
    included = (
        OPS_CMAKE + "include(${CMAKE_CURRENT_SOURCE_DIR}/attention/vendored/CMakeLists.txt)\n"
    )
    _tree(tmp_path, **{"ops/CMakeLists.txt": included})
    assert _unbuilt(tmp_path) == set()
    external = OPS_CMAKE + (
        "ExternalProject_Add(examples SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/attention/vendored)\n"
    )
    _tree(tmp_path, **{"ops/CMakeLists.txt": external})
    assert _unbuilt(tmp_path) == set()
    literal = OPS_CMAKE + "ExternalProject_Add(examples SOURCE_DIR attention/vendored)\n"
    _tree(tmp_path, **{"ops/CMakeLists.txt": literal})
    assert _unbuilt(tmp_path) == set()


def test_without_the_project_root_in_the_run_nothing_is_unbuilt(tmp_path):
    # Linting the sub-folder alone: the build that adds (or not) the folder is not in the run.
    _tree(tmp_path)
    sub = tmp_path / "ops"
    cmake = [(p, str(p), p.read_bytes()) for p in sub.rglob("CMakeLists.txt")]
    assert unbuilt_sources(cmake) == {}
    # A folder's CMakeLists.txt with project() of its own may be configured alone.
    _tree(tmp_path, **{"ops/attention/vendored/CMakeLists.txt": "project(ex)\n" + VENDORED_CMAKE})
    assert _unbuilt(tmp_path) == set()


def test_a_source_torch_builds_is_built(tmp_path):
    _tree(tmp_path)
    cmake = [(p, str(p), p.read_bytes()) for p in tmp_path.rglob("CMakeLists.txt")]
    names = {p.name for p in unbuilt_sources(cmake, lambda path: path.endswith("example_fwd.cu"))}
    assert names == {"example_bwd.cu"}


def test_a_cached_run_sees_a_cmake_edit_that_builds_the_vendored_folder(tmp_path):
    # The macros are kept across runs by what they read: the unbuilt sources are part of it,
    # so adding the folder to the build reports its header again, as an uncached run does.
    from click.testing import CliRunner

    from cuda2rocm.cli import main

    root = tmp_path / "t"
    root.mkdir()
    _tree(root)

    def lint(*extra: str) -> list[str]:
        args = ["lint", "--format", "json", "--select", "hip-include", "-j", "1", *extra]
        out = CliRunner().invoke(main, [*args, str(root)])
        assert out.exit_code in (0, 1), out.output
        return out.output

    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert "example_fwd.cu" not in lint(*cache)
    _tree(root, **{"ops/CMakeLists.txt": OPS_CMAKE + "add_subdirectory(attention/vendored)\n"})
    cached = lint(*cache)
    assert "example_fwd.cu" in cached
    assert cached == lint("--no-cache")
