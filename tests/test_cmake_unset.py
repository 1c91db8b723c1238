"""Project variables a ROCm configure never sets (context.cmake_unset): `if(<var>)` is false
there in every file of the run; anything that may define the variable keeps it unknown."""

from __future__ import annotations

from conftest import lint_json

TOP = """cmake_minimum_required(VERSION 3.18)
project(relay LANGUAGES CXX)
set(RELAY_GPU "" CACHE STRING "CUDA or ROCM")
if(RELAY_GPU STREQUAL "CUDA")
  enable_language(CUDA)
  set(HAVE_GPU_NV TRUE)
elseif(RELAY_GPU STREQUAL "ROCM")
  find_package(hip REQUIRED)
  set(HAVE_GPU_AMD TRUE)
endif()
{extra}add_subdirectory(src)
"""
SRC = """set(SOURCES core.cc)
if(HAVE_GPU_NV)
  add_subdirectory(ops/nv)
  list(APPEND SOURCES ops/nv_ops.cc)
endif()
if(HAVE_GPU_AMD)
  add_subdirectory(ops/amd)
endif()
add_library(relay ${SOURCES})
"""
NV_KERNEL = (
    "#include <cuda_runtime.h>\n"
    "__global__ void k(float* x) { x[0] = __shfl_xor_sync(0xffffffff, x[0], 1); }\n"
)
NV_OPS = "#include <cuda_runtime.h>\nvoid wait(cudaStream_t s) { cudaStreamSynchronize(s); }\n"


def _project(write, extra: str = "", **more) -> None:
    write("CMakeLists.txt", TOP.format(extra=extra))
    write("src/CMakeLists.txt", SRC)
    write("src/core.cc", "int core() { return 0; }\n")
    write("src/ops/nv/CMakeLists.txt", "add_library(relay_nv kernels.cu)\n")
    write("src/ops/nv/kernels.cu", NV_KERNEL)
    write("src/ops/nv_ops.cc", NV_OPS)
    write("src/ops/amd/CMakeLists.txt", "add_library(relay_amd kernels.hip)\n")
    write("src/ops/amd/kernels.hip", "#include <hip/hip_runtime.h>\n")
    for path, text in more.items():
        write(path, text)


def _lint(tmp_path):
    found = lint_json(tmp_path)
    reported = {(d["path"], d["rule"]) for d in found if not d.get("guarded")}
    guarded = {(d["path"], d["rule"]): d["guarded"] for d in found if d.get("guarded")}
    return reported, guarded


def test_a_flag_set_only_in_the_cuda_branch_is_false_on_rocm(cli, write, tmp_path):
    _project(write)
    reported, guarded = _lint(tmp_path)
    assert "`if(HAVE_GPU_NV)` (line 2)" in guarded[("src/ops/nv/kernels.cu", "warp-mask-32bit")]
    assert ("src/ops/nv_ops.cc", "hip-stream") in guarded
    assert not {r for r in reported if r[0].startswith("src/ops/")} - {
        ("src/CMakeLists.txt", "cuda-only-component")
    }


def test_a_flag_something_else_may_define_stays_unknown(cli, write, tmp_path):
    for extra in (
        "set(HAVE_GPU_NV ${SOMETHING})\n",  # a set() a ROCm configure may run
        'option(HAVE_GPU_NV "NVIDIA path" OFF)\n',  # the user may pass -D
        "list(APPEND HAVE_GPU_NV extra)\n",  # written by another command
    ):
        _project(write, extra)
        reported, _ = _lint(tmp_path)
        assert ("src/ops/nv/kernels.cu", "warp-mask-32bit") in reported, extra
        assert ("src/ops/nv_ops.cc", "hip-stream") in reported, extra


def test_a_build_script_that_passes_the_flag_keeps_it_unknown(cli, write, tmp_path):
    script = 'import subprocess\nsubprocess.run(["cmake", "-DHAVE_GPU_NV=ON", "."])\n'
    _project(write, **{"tools/configure.py": script})
    reported, _ = _lint(tmp_path)
    assert ("src/ops/nv/kernels.cu", "warp-mask-32bit") in reported
