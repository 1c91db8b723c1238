"""CMake flow: vendor selectors, FATAL_ERROR, sources through globs and custom functions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuda2rocm.context.build import cmake_dead_lines, membership
from cuda2rocm.context.cmake_flow import build_flow

SELECTORS = """\
set(FLAVOR_NV "nv")
set(FLAVOR_AMD "rocm")
set(FLAVOR_HOST "host")
if(MY_FLAVOR STREQUAL FLAVOR_AMD)
  set(X 1)
endif()
if(${BACKEND} STREQUAL "hip")
  set(Y 1)
endif()
foreach(lang CXX CUDA HIP)
  if(lang STREQUAL "HIP")
    set(Z 1)
  endif()
endforeach()
if(clang STREQUAL HIP_COMPILER)
endif()
"""


def _truth(condition: str, vendor: str) -> bool | None:
    return build_flow([SELECTORS]).truth(condition, lambda w: None, vendor)


def test_only_variables_compared_with_a_rocm_value_are_selectors():
    assert build_flow([SELECTORS]).selectors == {
        "MY_FLAVOR": frozenset({"rocm"}),
        "BACKEND": frozenset({"hip"}),
    }  # not the loop variable `lang`, not `clang STREQUAL HIP_COMPILER`


@pytest.mark.parametrize(
    ("condition", "rocm", "cuda"),
    [
        ("MY_FLAVOR STREQUAL FLAVOR_AMD", True, False),
        ("MY_FLAVOR STREQUAL FLAVOR_NV", False, None),
        ("NOT MY_FLAVOR STREQUAL FLAVOR_NV", True, None),
        ("NOT MY_FLAVOR STREQUAL FLAVOR_AMD", False, True),
        ('${MY_FLAVOR} STREQUAL "cuda"', False, None),
        ('"${BACKEND}" STREQUAL "hip"', True, False),
        ('BACKEND STREQUAL "cpu"', False, None),
        ("NOT MY_FLAVOR STREQUAL FLAVOR_HOST AND NOT MY_FLAVOR STREQUAL FLAVOR_AMD", False, None),
        ("(MY_FLAVOR STREQUAL FLAVOR_NV) AND (CUDA_VERSION VERSION_GREATER 12)", False, None),
        ("MY_FLAVOR STREQUAL FLAVOR_NV OR SOMETHING", None, None),
        ("MY_FLAVOR STREQUAL FLAVOR_AMD OR SOMETHING", True, None),
        # AND/OR bind equally, left to right: (A OR B) AND C
        ("MY_FLAVOR STREQUAL FLAVOR_AMD OR X AND MY_FLAVOR STREQUAL FLAVOR_NV", False, None),
        ('lang STREQUAL "HIP"', None, None),  # not a selector
        ("OTHER STREQUAL FLAVOR_AMD", None, None),  # never compared with a ROCm value: unknown
    ],
)
def test_selector_tests_in_three_valued_logic(condition, rocm, cuda):
    assert _truth(condition, "rocm") is rocm
    assert _truth(condition, "cuda") is cuda


def test_dead_lines_under_a_selector_test():
    text = SELECTORS + "if(MY_FLAVOR STREQUAL FLAVOR_NV)\n  add_subdirectory(nv)\nendif()\n"
    flow = build_flow([text])
    (region,) = [r for r in cmake_dead_lines(text, None, flow=flow) if r[0] > 16]
    assert region[:2] == (18, 18)
    assert "`if(MY_FLAVOR STREQUAL FLAVOR_NV)` (line 17)" in region[2]
    assert [r for r in cmake_dead_lines(text) if r[0] > 16] == []  # without the flow: unknown


def test_the_condition_of_a_branch_rocm_never_takes_is_guarded(tmp_path):
    # A finding at the `if(...)` of the CUDA side of a vendor selector (cmake-cuda-language's
    # "CUDA-only branch with no ROCm counterpart") is about code a ROCm configure never runs.
    text = SELECTORS + "if(MY_FLAVOR STREQUAL FLAVOR_NV)\n  enable_language(CUDA)\nendif()\n"
    text += "if(WITH_CUDA)\n  enable_language(CUDA)\nendif()\n"
    files = _project(tmp_path, {"CMakeLists.txt": text})
    reason = membership(files, tmp_path).cmake_reason(text)
    assert "the condition of a branch `if(MY_FLAVOR STREQUAL FLAVOR_NV)` (line 17)" in reason(17)
    assert "which a ROCm configure never takes" in reason(17)
    assert reason(20) == ""  # `if(WITH_CUDA)`: unknown on ROCm, stays reported
    assert reason(16) == ""


def _project(tmp_path: Path, files: dict[str, str]) -> list[tuple[Path, str, str, bytes]]:
    out = []
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name.endswith(("CMakeLists.txt", ".cmake")):
            out.append((path, name, "cmake", text.encode()))
    return out


KERNEL = "__global__ void k() {}\n"
FATAL = """\
set(FLAVOR_NV "nv")
set(FLAVOR_AMD "rocm")
if(MY_FLAVOR STREQUAL FLAVOR_AMD)
  set(Q 1)
endif()
if(PART STREQUAL "one")
  if(NOT MY_FLAVOR STREQUAL FLAVOR_NV)
    message(FATAL_ERROR "part one needs NVIDIA")
  endif()
  add_subdirectory(one)
elseif(PART STREQUAL "two")
  if(SOME_OPTION)
    message(FATAL_ERROR "not known to run")
  endif()
  add_subdirectory(two)
endif()
add_subdirectory(three)
"""


def test_fatal_error_true_on_rocm_ends_the_enclosing_branch(tmp_path):
    files = _project(
        tmp_path,
        {"CMakeLists.txt": FATAL, **{f"{d}/CMakeLists.txt": "" for d in ("one", "two", "three")}},
    )
    found = membership(files, tmp_path).components
    assert [c.root.name for c in found] == ["one"]
    assert "`message(FATAL_ERROR)` (line 8)" in found[0].why
    assert "`if(NOT MY_FLAVOR STREQUAL FLAVOR_NV)` (line 7)" in found[0].why
    regions = cmake_dead_lines(FATAL, None, flow=build_flow([FATAL]))
    assert [(a, b) for a, b, _ in regions] == [(9, 10)]


HELPERS = """\
function(print_lines)
  foreach(x IN LISTS ARGN)
    message("${x}")
  endforeach()
endfunction()

function(collect out_var)
  file(GLOB found ${ARGN})
  set(${out_var} ${found} PARENT_SCOPE)
endfunction()

function(pick_sources)
  cmake_parse_arguments(opt "" "NAME" "COMMON;NV_ONLY;AMD_ONLY;MAYBE" ${ARGN})
  set(all ${opt_COMMON} ${opt_MAYBE})
  if(NOT GPU_KIND STREQUAL KIND_AMD)
    list(APPEND all ${opt_NV_ONLY})
  endif()
  if(GPU_KIND STREQUAL KIND_AMD)
    list(APPEND all ${opt_AMD_ONLY})
  endif()
  set(${opt_NAME}_all ${all} PARENT_SCOPE)
endfunction()

function(make_lib)
  set(multi COMMON NV_ONLY AMD_ONLY MAYBE)
  cmake_parse_arguments(lib "" "NAME" "${multi}" ${ARGN})
  pick_sources(NAME ${lib_NAME} COMMON ${lib_COMMON} NV_ONLY ${lib_NV_ONLY}
               AMD_ONLY ${lib_AMD_ONLY} MAYBE ${lib_MAYBE})
  print_lines("nv:" ${lib_NV_ONLY})
  add_library(${lib_NAME} ${${lib_NAME}_all})
endfunction()
"""
TOP = """\
set(KIND_NV "nv")
set(KIND_AMD "rocm")
include(cmake/Helpers.cmake)
if(GPU_KIND STREQUAL KIND_AMD)
  set(Q 1)
endif()
collect(common_srcs kernels/common/*.cu)
file(GLOB_RECURSE nv_srcs kernels/nv_only/*.cu)
file(GLOB_RECURSE shared_nv kernels/shared/*.cu)
file(GLOB_RECURSE other_nv kernels/other/*.cu)
file(GLOB maybe_srcs kernels/maybe/*.cu)
if(GPU_KIND STREQUAL KIND_NV)
  collect(extra kernels/extra/*.cu)
endif()
make_lib(NAME k COMMON ${common_srcs} kernels/shared/s.cu NV_ONLY ${nv_srcs} ${shared_nv}
         MAYBE ${maybe_srcs})
make_lib(NAME j NV_ONLY ${other_nv})
set(copied ${other_nv})
"""
SOURCES = {
    "cmake/Helpers.cmake": HELPERS,
    "CMakeLists.txt": TOP,
    "kernels/common/c.cu": KERNEL,
    "kernels/nv_only/a.cu": KERNEL,
    "kernels/nv_only/deep/b.cu": KERNEL,
    "kernels/nv_only/deep/b.cuh": KERNEL,
    "kernels/shared/s.cu": KERNEL,
    "kernels/other/o.cu": KERNEL,
    "kernels/maybe/m.cu": KERNEL,
    "kernels/extra/e.cu": KERNEL,
}


def test_sources_passed_only_under_a_cuda_only_keyword(tmp_path):
    found = {c.label: c for c in membership(_project(tmp_path, SOURCES), tmp_path).components}
    # nv_only/ (recursive glob, headers beside it too) and extra/ (globbed only on CUDA);
    # not shared/ (also listed for every vendor), other/ (copied into another variable),
    # maybe/ (a keyword used on ROCm), common/.
    assert set(found) == {"`kernels/nv_only`", "`kernels/extra`"}
    nv = found["`kernels/nv_only`"]
    assert nv.holds((tmp_path / "kernels/nv_only/deep/b.cuh").resolve())
    assert "`make_lib(NV_ONLY ...)`" in nv.why
    assert "`pick_sources()`" in nv.why and "`NV_ONLY`" in nv.why
    assert "`if(NOT GPU_KIND STREQUAL KIND_AMD)` (line 15)" in nv.why
    assert "`if(GPU_KIND STREQUAL KIND_NV)` (line 12)" in found["`kernels/extra`"].why


def test_a_keyword_used_by_rocm_code_is_not_cuda_only(tmp_path):
    helpers = HELPERS.replace('print_lines("nv:" ${lib_NV_ONLY})', "set(seen ${lib_NV_ONLY})")
    files = _project(tmp_path, {**SOURCES, "cmake/Helpers.cmake": helpers})
    assert [c.label for c in membership(files, tmp_path).components] == ["`kernels/extra`"]


def test_an_unknown_live_glob_keeps_files_reported(tmp_path):
    top = TOP + "file(GLOB_RECURSE mystery ${SOMEWHERE}/nv_only/*.cu)\nadd_library(m ${mystery})\n"
    files = _project(tmp_path, {**SOURCES, "CMakeLists.txt": top})
    labels = [c.label for c in membership(files, tmp_path).components]
    assert "`kernels/nv_only`" not in labels


def test_an_unknown_glob_that_only_feeds_searches_and_loops_cancels_nothing(tmp_path):
    # A toolkit finder globbing install folders: the list reaches find_program hints, a loop
    # and a message, through a derived variable; no target is built from it.
    finder = (
        "file(GLOB hints ${SOMEWHERE}/nv_only/*.cu)\n"
        "list(TRANSFORM hints PREPEND x)\n"
        "set(where ${hints})\n"
        "foreach(h ${where})\n  message(STATUS ${h})\nendforeach()\n"
        "find_program(TOOL nvdis HINTS ${where})\n"
    )
    files = _project(tmp_path, {**SOURCES, "CMakeLists.txt": TOP + finder})
    labels = [c.label for c in membership(files, tmp_path).components]
    assert "`kernels/nv_only`" not in labels  # TRANSFORM is not modelled: it may build
    finder = finder.replace("list(TRANSFORM hints PREPEND x)\n", "list(SORT hints)\n")
    files = _project(tmp_path, {**SOURCES, "CMakeLists.txt": TOP + finder})
    labels = [c.label for c in membership(files, tmp_path).components]
    assert "`kernels/nv_only`" in labels
    built = finder + "add_library(m ${h_list} ${where})\n"
    files = _project(tmp_path, {**SOURCES, "CMakeLists.txt": TOP + built})
    labels = [c.label for c in membership(files, tmp_path).components]
    assert "`kernels/nv_only`" not in labels


def test_cli_reports_one_component_and_guards_the_findings(cli, tmp_path):
    files = dict(SOURCES)
    files["kernels/nv_only/a.cu"] = "#include <cuda_runtime.h>\nvoid f() { cudaFree(0); }\n"
    files["kernels/common/c.cu"] = files["kernels/nv_only/a.cu"]
    _project(tmp_path, files)
    result = cli("lint", "--format", "json", "--show-guarded", "--no-cache", str(tmp_path))
    found = json.loads(result.stdout)["diagnostics"]
    in_nv = [d for d in found if "nv_only" in d["path"]]
    assert in_nv and all("NV_ONLY" in (d.get("guarded") or "") for d in in_nv)
    assert any("common" in d["path"] and not d.get("guarded") for d in found)
    components = [d for d in found if d["rule"] == "cuda-only-component"]
    assert any("kernels/nv_only" in d["message"] for d in components)


@pytest.mark.parametrize(
    "extra",
    [
        "  add_library(${lib_NAME}_raw ${ARGN})\n",  # the raw arguments reach a target
        "  foreach(kind NV_ONLY)\n    list(APPEND x ${lib_${kind}})\n  endforeach()\n",
    ],
)
def test_arguments_read_another_way_keep_files_reported(tmp_path, extra):
    helpers = HELPERS.replace("  add_library(${lib_NAME} ${${lib_NAME}_all})\n", extra)
    files = _project(tmp_path, {**SOURCES, "cmake/Helpers.cmake": helpers})
    assert [c.label for c in membership(files, tmp_path).components] == ["`kernels/extra`"]


def test_a_macro_reading_the_keyword_keeps_files_reported(tmp_path):
    helpers = HELPERS + "macro(peek)\n  add_library(peeked ${lib_NV_ONLY})\nendmacro()\n"
    files = _project(tmp_path, {**SOURCES, "cmake/Helpers.cmake": helpers})
    assert [c.label for c in membership(files, tmp_path).components] == ["`kernels/extra`"]


def test_a_fatal_error_in_a_function_or_loop_body_ends_nothing(tmp_path):
    for body in (
        "function(check)\n{}endfunction()\n",
        "foreach(x IN LISTS ITEMS)\n{}endforeach()\n",
    ):
        check = "if(NOT MY_FLAVOR STREQUAL FLAVOR_NV)\n  message(FATAL_ERROR no)\nendif()\n"
        text = (
            FATAL.replace("add_subdirectory(three)\n", body.format(check))
            + "add_subdirectory(three)\n"
        )
        files = _project(tmp_path, {"CMakeLists.txt": text, "three/CMakeLists.txt": ""})
        assert [c.root.name for c in membership(files, tmp_path).components] == []


def test_a_helper_that_exports_its_arguments_is_no_printer(tmp_path):
    helpers = HELPERS.replace(
        '    message("${x}")\n', '    message("${x}")\n    set(printed ${ARGN} PARENT_SCOPE)\n'
    )
    files = _project(tmp_path, {**SOURCES, "cmake/Helpers.cmake": helpers})
    assert [c.label for c in membership(files, tmp_path).components] == ["`kernels/extra`"]


@pytest.mark.parametrize("value", ["$ENV{GPU_KIND}", "${GPU_KIND_DEFAULT}", "$CACHE{GPU_KIND}"])
def test_a_value_read_from_a_reference_is_no_constant(tmp_path, value):
    # `set(KIND "$ENV{...}")` holds whatever the environment says, not the text "$ENV{...}":
    # a test of KIND against a word is unknown, so the HIP arm of the chain stays live and the
    # arm before it is the one a ROCm configure skips.
    text = f"""\
set(KIND "{value}")
if(KIND STREQUAL "nvidia")
  enable_language(CUDA)
  set(SRC_GPU kernels/nv_path.cu)
elseif(KIND STREQUAL "radeon")
  enable_language(HIP)
  set(GPU_ON_AMD ON)
  set(SRC_GPU kernels/amd_path.hip)
endif()
add_library(core ${{SRC_GPU}})
"""
    flow = build_flow([text])
    assert "KIND" not in flow.constants
    assert flow.truth('KIND STREQUAL "radeon"', lambda w: None, "rocm") is None
    dead = cmake_dead_lines(text, None, flow=flow)
    assert [r[:2] for r in dead] == [(3, 4)]
    files = _project(
        tmp_path,
        {"CMakeLists.txt": text, "kernels/nv_path.cu": KERNEL, "kernels/amd_path.hip": KERNEL},
    )
    found = membership(files, tmp_path)
    assert found.companions.get("GPU_ON_AMD") is not False  # set in the live HIP arm
    assert [sorted(f.name for f in c.files) for c in found.components] == [["nv_path.cu"]]
