"""CUDA-only CMake sub-projects nothing else builds (context.standalone_cuda): one finding at
their `project()`; anything another build may reach stays reported line by line."""

from __future__ import annotations

import json

from conftest import lint_json

ROOT_SETUP = """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
setup(name="q", ext_modules=[CUDAExtension("q_ops", sources=["csrc/ops.cu"])],
      cmdclass={"build_ext": BuildExtension})
"""
HARNESS = """cmake_minimum_required(VERSION 3.20)
project(q_kernel_checks LANGUAGES CXX CUDA)
find_package(GTest REQUIRED)
add_subdirectory(unpack)
"""
UNPACK = """function(q_check name)
  add_executable(${name} ${name}.cu)
  target_link_libraries(${name} GTest::gtest_main)
endfunction()
q_check(unpack_int4)
"""
TEST_SOURCE = """#include <cuda_runtime.h>
#include <gtest/gtest.h>
TEST(Unpack, Int4) {
  int* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, 64), cudaSuccess);
  cudaDeviceSynchronize();
  cudaFree(buf);
}
"""
OPS = "#include <torch/extension.h>\n__device__ int lane() { return threadIdx.x % 32; }\n"


def _lint(tmp_path):
    found = lint_json(tmp_path)
    reported = [(d["path"], d["rule"], d["line"]) for d in found if not d.get("guarded")]
    guarded = {(d["path"], d["rule"]): d["guarded"] for d in found if d.get("guarded")}
    return reported, guarded, found


def _project(write, **overrides):
    files = {
        "setup.py": ROOT_SETUP,
        "csrc/ops.cu": OPS,
        "checks/cpp/CMakeLists.txt": HARNESS,
        "checks/cpp/unpack/CMakeLists.txt": UNPACK,
        "checks/cpp/unpack/unpack_int4.cu": TEST_SOURCE,
    }
    files.update(overrides)
    for path, text in files.items():
        if text is not None:
            write(path, text)


def _harness(reported):
    return [r for r in reported if r[0].startswith("checks/")]


def test_a_cuda_project_nothing_builds_is_one_finding_at_its_project_line(cli, write, tmp_path):
    _project(write)
    reported, guarded, _ = _lint(tmp_path)
    assert _harness(reported) == [("checks/cpp/CMakeLists.txt", "cuda-only-component", 2)]
    why = guarded[("checks/cpp/unpack/unpack_int4.cu", "hip-include")]
    assert "`checks/cpp/`" in why and "project(" in why
    assert ("csrc/ops.cu", "warp-size-32", 2) in reported  # the extension ROCm builds


def test_a_harness_another_build_adds_stays_reported(cli, write, tmp_path):
    _project(write, **{"checks/CMakeLists.txt": "add_subdirectory(cpp)\n"})
    reported, _, _ = _lint(tmp_path)
    assert ("checks/cpp/unpack/unpack_int4.cu", "hip-include", 1) in reported
    assert not [r for r in reported if r[1] == "cuda-only-component"]


def test_a_harness_a_python_build_names_stays_reported(cli, write, tmp_path):
    runner = 'import subprocess\nsubprocess.run(["cmake", "-S", "checks/cpp", "-B", "b"])\n'
    _project(write, **{"tools/build_checks.py": runner})
    reported, _, _ = _lint(tmp_path)
    assert ("checks/cpp/unpack/unpack_int4.cu", "hip-include", 1) in reported


def test_a_harness_with_a_rocm_path_or_ported_sources_stays_reported(cli, write, tmp_path):
    hip = HARNESS + "if(Q_USE_HIP)\n  enable_language(HIP)\nendif()\n"
    _project(write, **{"checks/cpp/CMakeLists.txt": hip})
    reported, _, _ = _lint(tmp_path)
    assert ("checks/cpp/unpack/unpack_int4.cu", "hip-include", 1) in reported
    ported = "#ifdef __HIP_PLATFORM_AMD__\n#include <hip/hip_runtime.h>\n#endif\n" + TEST_SOURCE
    _project(write, **{"checks/cpp/unpack/unpack_int4.cu": ported})
    reported, _, _ = _lint(tmp_path)
    assert not [r for r in reported if r[1] == "cuda-only-component"]


def test_not_a_cuda_project_or_the_run_root_is_no_component(cli, write, tmp_path):
    cxx = HARNESS.replace("LANGUAGES CXX CUDA", "LANGUAGES CXX")
    _project(write, **{"checks/cpp/CMakeLists.txt": cxx})
    reported, _, _ = _lint(tmp_path)
    assert ("checks/cpp/unpack/unpack_int4.cu", "hip-include", 1) in reported
    _project(write)
    out = cli(
        "lint", "--no-cache", "--format", "json", "--exit-zero", "checks/cpp", cwd=tmp_path
    ).stdout
    rules = {d["rule"] for d in json.loads(out)["diagnostics"]}
    assert "hip-include" in rules and "cuda-only-component" not in rules
