"""CMake definitions in their project context: sub-directories added on vendor paths, and
definitions inside helper functions, take the value of where they run (build_defines)."""

from __future__ import annotations

from pathlib import Path

from cuda2rocm.context import build_defines
from tests.conftest import lint_json, write_tree

TREE = {
    "CMakeLists.txt": (
        "project(vec CXX)\n"
        "option(VEC_ENABLE_CUDA OFF)\noption(VEC_WITH_HIP OFF)\n"
        "include(cmake/helpers.cmake)\n"
        "if(VEC_ENABLE_CUDA)\n  add_subdirectory(nvgpu)\nendif()\n"
        "if(VEC_WITH_HIP)\n  add_subdirectory(amdgpu)\nendif()\n"
        "add_subdirectory(common)\n"
    ),
    "cmake/helpers.cmake": (
        "function(vec_device_target name)\n"
        "  add_library(${name} ${ARGN})\n"
        "  target_compile_definitions(${name} PRIVATE VEC_TARGETS_NV=1)\n"
        "endfunction()\n"
        "function(vec_unused_helper name)\n"
        "  target_compile_definitions(${name} PRIVATE VEC_NEVER=1)\n"
        "endfunction()\n"
    ),
    "nvgpu/CMakeLists.txt": "vec_device_target(vec_nv kernels.cu)\n",
    "nvgpu/kernels.cu": "__global__ void k() {}\n",
    "amdgpu/CMakeLists.txt": (
        "add_library(vec_amd kernels.hip.cpp)\n"
        "target_compile_definitions(vec_amd PRIVATE VEC_TARGETS_AMD)\n"
    ),
    "amdgpu/kernels.hip.cpp": '#include "../common/stream.hpp"\n',
    "common/CMakeLists.txt": "add_library(vec_common INTERFACE)\n",
    "common/stream.hpp": (
        "#pragma once\n"
        "#if defined(VEC_TARGETS_NV)\n"
        "#include <cuda_runtime.h>\n"
        "inline void wait(cudaStream_t s) { cudaStreamSynchronize(s); }\n"
        "#elif defined(VEC_TARGETS_AMD)\n"
        "#include <hip/hip_runtime.h>\n"
        "inline void wait(hipStream_t s) { hipStreamSynchronize(s); }\n"
        "#endif\n"
    ),
}


def _write(root: Path) -> list[tuple[Path, str, bytes]]:
    write_tree(root, TREE)
    cmake = [n for n in TREE if n.endswith(("CMakeLists.txt", ".cmake"))]
    return [(root / n, n, TREE[n].encode()) for n in cmake]


def test_definitions_take_the_value_of_where_they_run(tmp_path):
    defines = build_defines.index([], cmake=_write(tmp_path))
    # only called from a sub-directory added under the CUDA switch: CUDA-only
    assert "VEC_TARGETS_NV" in defines.cuda_only
    assert "helpers.cmake:3" in defines.cuda_only["VEC_TARGETS_NV"]
    # in a sub-directory added under the HIP switch: defined for ROCm
    assert defines.rocm["VEC_TARGETS_AMD"].defined
    # a helper nobody calls defines nothing
    assert "VEC_NEVER" not in defines.rocm and "VEC_NEVER" not in defines.unknown
    # read alone, a definition in a function body is unknown: the call decides
    alone = build_defines.BuildDefines()
    build_defines.cmake_defines(TREE["cmake/helpers.cmake"], "helpers.cmake", alone)
    assert "VEC_TARGETS_NV" in alone.unknown


def test_the_cuda_arm_of_the_header_is_guarded(tmp_path):
    _write(tmp_path)
    found = [d for d in lint_json(tmp_path) if d["path"].endswith("stream.hpp")]
    assert found, "the CUDA arm still gets its findings, guarded"
    assert all("guarded" in d for d in found if d["line"] in (3, 4))
