"""NVIDIA-only code by design or decision (context.vendor_only): one finding, not one a line;
unknown stays reported."""

from __future__ import annotations

import json

import pytest

ROOT_SETUP = """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
setup(name="x", ext_modules=[CUDAExtension("x_ops", sources=["csrc/ops.cu"])],
      cmdclass={"build_ext": BuildExtension})
"""
COMPONENT_SETUP = """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, IS_HIP_EXTENSION
{flags}
setup(name="fa", ext_modules=[CUDAExtension("fa._C", sources=["kernel.cu"],
      extra_compile_args={{"nvcc": ["-O3"] + cc_flag}})], cmdclass={{"build_ext": BuildExtension}})
"""
KERNEL = "__device__ float f(float v) { return __shfl_sync(0xffffffff, v, 0); }\n"
ARCH_ENV = 'export TORCH_CUDA_ARCH_LIST="8.0;9.0"\npython setup.py bdist_wheel\n'  # a note
GPU_RUN = "docker run --gpus=all img python test.py\n"  # an error


def _lint(cli, tmp_path, *paths):
    out = cli(
        "lint", "--no-cache", "--format", "json", "--show-guarded", "--exit-zero",
        *(str(tmp_path / p) for p in paths or (".",)), cwd=tmp_path,
    ).stdout  # fmt: skip
    found = json.loads(out)["diagnostics"]
    reported = [(d["path"], d["rule"]) for d in found if not d.get("guarded")]
    guarded = {(d["path"], d["rule"]): d["guarded"] for d in found if d.get("guarded")}
    return reported, guarded, found


def _component(write, flags):
    write("setup.py", ROOT_SETUP)
    write("csrc/ops.cu", KERNEL)
    write("fa3/setup.py", COMPONENT_SETUP.format(flags=flags))
    write("fa3/kernel.cu", KERNEL)
    write("fa3/iface.py", 'import torch\nMAJOR = torch.version.cuda.split(".")[0]\n')
    write("fa3/tests/test_fa3.py", 'import subprocess\nsubprocess.run(["nvidia-smi"])\n')
    # A module with a ROCm path (a Triton fallback under torch.version.hip) may run on ROCm.
    write(
        "fa3/rocm_iface.py",
        "import torch\nif torch.version.hip is not None:\n    import fa3_triton as impl\n"
        'MAJOR = torch.version.cuda.split(".")[0]\n',
    )


def test_component_built_only_for_an_arch_specific_target_is_one_finding(cli, write, tmp_path):
    _component(write, 'cc_flag = ["-gencode", "arch=compute_90a,code=sm_90a"]')
    reported, guarded, found = _lint(cli, tmp_path)
    why = guarded[("fa3/kernel.cu", "warp-mask-32bit")]
    assert "fa3/setup.py compiles only for CUDA" in why and "compute_90a" in why
    summary = [d for d in found if d["rule"] == "cuda-only-component" and not d.get("guarded")]
    assert [d["path"] for d in summary] == ["fa3/setup.py"]
    assert "decision" in summary[0]["message"] and "3 findings in 3 files" in summary[0]["message"]
    # No ROCm build in the project: whether to port it is still to decide (an action).
    assert summary[0]["severity"] == "warning"
    # Its Python (interface, tests) exercises the NVIDIA-only extension: guarded with it.
    assert "compute_90a" in guarded[("fa3/iface.py", "torch-version-cuda")]
    assert "compute_90a" in guarded[("fa3/tests/test_fa3.py", "nvml-smi")]
    # Unknown stays reported: a module that names a ROCm path; the root build the user ports.
    assert ("fa3/rocm_iface.py", "torch-version-cuda") in reported
    assert ("csrc/ops.cu", "warp-mask-32bit") in reported


def test_arch_specific_component_of_a_project_with_a_rocm_build_is_a_note(cli, write, tmp_path):
    _component(write, 'cc_flag = ["-gencode", "arch=compute_90a,code=sm_90a"]')
    # The root build already has a ROCm path: it leaves `csrc/cuda_only` out on ROCm.
    write(
        "setup.py",
        "from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION\n"
        "if not IS_HIP_EXTENSION:\n"
        '    ext = CUDAExtension("x_cuda", sources=["csrc/cuda_only/k.cu"])\n'
        'ext2 = CUDAExtension("x_ops", sources=["csrc/ops.cu"])\n',
    )
    write("csrc/cuda_only/k.cu", KERNEL)
    _, _, found = _lint(cli, tmp_path)
    summary = {
        d["path"]: d for d in found if d["rule"] == "cuda-only-component" and not d.get("guarded")
    }
    assert set(summary) == {"fa3/setup.py", "setup.py"}
    assert {d["severity"] for d in summary.values()} == {"info"}
    assert all("already leaves it out" in d["message"] for d in summary.values())


def test_component_build_file_with_a_rocm_path_guards_only_its_nvidia_build(cli, write, tmp_path):
    write("setup.py", ROOT_SETUP)
    write("fa3/kernel.cu", KERNEL)
    write(
        "fa3/setup.py",
        "import os, subprocess\nfrom torch.utils.cpp_extension import CUDAExtension, CUDA_HOME\n"
        'SKIP_CUDA_BUILD = os.getenv("FA_TRITON_AMD") == "TRUE"  # ROCm: Triton\n'
        "if not SKIP_CUDA_BUILD:\n"
        "    smi()\n"
        '    cc_flag = ["-gencode", "arch=compute_90a,code=sm_90a"]\n'
        '    ext = CUDAExtension("fa._C", ["kernel.cu"], extra_compile_args={"nvcc": cc_flag})\n'
        'print(subprocess.check_output(["nvidia-smi"]))\n'
        "def smi():\n"
        '    subprocess.run(["nvidia-smi"])\n'
        "def info():\n"
        '    subprocess.run(["nvidia-smi"])\n'
        "info()\n",
    )
    reported, _, found = _lint(cli, tmp_path)
    lines = {d["line"]: d.get("guarded", "") for d in found if d["rule"] == "nvml-smi"}
    assert "compute_90a" in lines[10]  # a function only the NVIDIA build statement calls
    assert lines[8] == "" and lines[12] == ""  # outside it: may run on ROCm
    assert ("fa3/setup.py", "cuda-only-component") in reported


@pytest.mark.parametrize(
    "flags",
    [
        'cc_flag = ["-gencode", "arch=compute_80,code=sm_80"]',  # a plain target: to be ported
        # prose is no target
        '"""One day: sm_90a."""\ncc_flag = ["-gencode", "arch=compute_80,code=sm_80"]',
        'cc_flag = ["-gencode", "arch=compute_90a,code=sm_90a", "--offload-arch=gfx942"]',
        # the ROCm build replaces the NVIDIA target: a ROCm variant exists
        'cc_flag = ["-O3"] if IS_HIP_EXTENSION else ["-gencode", "arch=compute_90a,code=sm_90a"]',
    ],
)
def test_component_with_a_rocm_or_plain_target_stays_reported(cli, write, tmp_path, flags):
    _component(write, flags)
    reported, guarded, _ = _lint(cli, tmp_path)
    assert ("fa3/kernel.cu", "warp-mask-32bit") in reported
    assert not any(path.startswith("fa3/") for path, _ in guarded)
    assert not any(rule == "cuda-only-component" for _, rule in reported)


def test_cmake_component_with_arch_specific_architectures(cli, write, tmp_path):
    write("CMakeLists.txt", "project(x)\nadd_subdirectory(sm100)\n")
    write("sm100/CMakeLists.txt", "set_target_properties(k PROPERTIES CUDA_ARCHITECTURES 100a)\n")
    write("sm100/k.cu", KERNEL)
    _, guarded, _ = _lint(cli, tmp_path)
    assert "100a" in guarded[("sm100/k.cu", "warp-mask-32bit")]
    write(
        "sm100/CMakeLists.txt",
        "if(USE_ROCM)\nelse()\nset(CMAKE_CUDA_ARCHITECTURES 100a)\nendif()\n",
    )
    reported, _, _ = _lint(cli, tmp_path)
    assert ("sm100/k.cu", "warp-mask-32bit") in reported  # has a ROCm branch: unknown


def test_declared_cuda_only_paths_are_guarded(cli, write, tmp_path):
    write("cuda2rocm.toml", 'cuda-only = ["tools/ci/"]\n')
    smi = 'import subprocess\nsubprocess.run(["nvidia-smi"])\n'
    write("tools/ci/run.py", smi)
    write("tools/run.py", smi)
    reported, guarded, _ = _lint(cli, tmp_path, "tools")
    assert guarded[("tools/ci/run.py", "nvml-smi")].startswith("declared CUDA-only in ")
    assert guarded[("tools/ci/run.py", "nvml-smi")].endswith("cuda2rocm.toml")
    assert reported == [("tools/run.py", "nvml-smi")]


def test_declared_cuda_only_is_validated_and_shown(cli, write, tmp_path):
    write("cuda2rocm.toml", 'cuda-only = "tools/ci/"\n')
    write("a.py", "x = 1\n")
    failed = cli("lint", "a.py", cwd=tmp_path)
    assert "'cuda-only' must be a list of strings" in failed.stdout + failed.stderr
    write("cuda2rocm.toml", 'cuda-only = ["tools/ci/"]\n')
    shown = cli("lint", "--show-settings", "a.py", cwd=tmp_path).stdout
    assert "cuda-only" in shown and "tools/ci/" in shown


CASE = """#!/bin/bash
case "$CU_VERSION" in
  cu121|cu12*)
    export TORCH_CUDA_ARCH_LIST="8.0;9.0"
    docker run --gpus=all img python test.py
    ;;
{extra}  cpu)
    unset FORCE_CUDA
    ;;
esac
"""


def test_cuda_case_arm_with_a_rocm_arm_is_guarded(cli, write, tmp_path):
    write("build.sh", CASE.format(extra="  rocm6.2)\n    export ROCM_HOME=/opt/rocm\n    ;;\n"))
    reported, guarded, _ = _lint(cli, tmp_path)
    assert "CUDA arm of the `case` at line 2" in guarded[("build.sh", "docker-gpu-flags")]
    assert ("build.sh", "rocm-arch-env") in guarded
    assert reported == []  # the ROCm variant exists: nothing to add


def test_cuda_case_arm_without_rocm_arm_is_one_finding(cli, write, tmp_path):
    write("build.sh", CASE.format(extra=""))
    reported, guarded, found = _lint(cli, tmp_path)
    assert ("build.sh", "docker-gpu-flags") in guarded
    assert reported == [("build.sh", "cuda-only-component")]
    (summary,) = [d for d in found if not d.get("guarded")]
    assert summary["line"] == 2 and "no ROCm variant" in summary["message"]
    assert "its 2 findings" in summary["message"]


def test_guarded_notes_alone_add_no_finding(cli, write, tmp_path):
    write("build.sh", "case $CU in\n  cu121)\n    " + ARCH_ENV + "    ;;\nesac\n")
    write(".github/workflows/cuda/env.sh", ARCH_ENV)
    reported, guarded, _ = _lint(cli, tmp_path)
    assert reported == []
    assert set(guarded) == {
        ("build.sh", "rocm-arch-env"),
        (".github/workflows/cuda/env.sh", "rocm-arch-env"),
    }


def test_case_arm_that_names_no_cuda_variant_stays_reported(cli, write, tmp_path):
    write("build.sh", 'case "$MODE" in\n  release)\n    ' + GPU_RUN + "    ;;\nesac\n")
    write("cuda.sh", GPU_RUN)  # a file named cuda outside CI/packaging folders
    reported, guarded, _ = _lint(cli, tmp_path)
    assert sorted(reported) == [("build.sh", "docker-gpu-flags"), ("cuda.sh", "docker-gpu-flags")]
    assert guarded == {}


def test_ci_file_of_the_cuda_variant(cli, write, tmp_path):
    write(".github/workflows/cuda/env.sh", GPU_RUN)
    write(".github/workflows/env.sh", GPU_RUN)  # not a CUDA variant: unknown
    reported, guarded, _ = _lint(cli, tmp_path)
    assert "CUDA variant (`cuda`)" in guarded[(".github/workflows/cuda/env.sh", "docker-gpu-flags")]
    assert sorted(reported) == [
        (".github/workflows/cuda/env.sh", "cuda-only-component"),
        (".github/workflows/env.sh", "docker-gpu-flags"),
    ]
    write(".github/workflows/rocm/env.sh", "export ROCM_HOME=/opt/rocm\n")
    reported, guarded, _ = _lint(cli, tmp_path)
    assert (
        "ROCm variant beside it" in guarded[(".github/workflows/cuda/env.sh", "docker-gpu-flags")]
    )
    assert reported == [(".github/workflows/env.sh", "docker-gpu-flags")]


def test_script_of_a_variant_matrix_outside_ci_folders(cli, write, tmp_path):
    docker = "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN pip install torch\n"
    write("jobs/gpu/cuda124.Dockerfile", docker)
    write("jobs/gpu/run-cu124.sh", GPU_RUN)
    write("jobs/gpu/run-main.sh", GPU_RUN)  # names no variant: stays reported
    write("tools/cuda_check.py", SMI)  # a Python source is no job of a matrix
    reported, guarded, _ = _lint(cli, tmp_path)
    assert ("jobs/gpu/cuda124.Dockerfile", "docker-nvidia-base") in reported  # no ROCm sibling
    write("jobs/gpu/rocm-6-4.Dockerfile", "FROM rocm/pytorch:latest\n")
    write("tools/rocm_check.py", "x = 1\n")
    reported, guarded, _ = _lint(cli, tmp_path)
    why = guarded[("jobs/gpu/cuda124.Dockerfile", "docker-nvidia-base")]
    assert "CUDA variant (`cuda124.Dockerfile`)" in why and "ROCm variant beside it" in why
    assert ("jobs/gpu/run-cu124.sh", "docker-gpu-flags") in guarded
    assert sorted(reported) == [
        ("jobs/gpu/run-main.sh", "docker-gpu-flags"),
        ("tools/cuda_check.py", "nvml-smi"),
    ]


CUDA_MAJOR = 'import torch\nMAJOR = torch.version.cuda.split(".")[0]\n'
SMI = 'import subprocess\nsubprocess.run(["nvidia-smi"])\n'


def test_cute_dsl_package_and_its_tests_are_one_finding_each(cli, write, tmp_path):
    write("setup.py", ROOT_SETUP)
    write("mylib/dsl/__init__.py", "import cutlass\n")
    write("mylib/dsl/fwd.py", "import cutlass.cute as cute\n" + CUDA_MAJOR)
    write("mylib/dsl/helpers.py", CUDA_MAJOR)  # no DSL import, but part of the DSL package
    write("tests/dsl/test_fwd.py", "from mylib.dsl import fwd\n" + SMI)
    write("tests/dsl/test_bwd.py", "from mylib.dsl.fwd import MAJOR\n" + SMI)
    write("tests/dsl/conftest.py", SMI)
    # names a ROCm path: may run on ROCm, stays reported
    write(
        "tests/dsl/test_rocm.py",
        "from mylib.dsl import fwd\nimport torch\n" + SMI + "HIP = torch.version.hip\n",
    )
    reported, guarded, found = _lint(cli, tmp_path)
    for path, rule in [
        ("mylib/dsl/fwd.py", "torch-version-cuda"),
        ("mylib/dsl/helpers.py", "torch-version-cuda"),
        ("tests/dsl/test_fwd.py", "nvml-smi"),
        ("tests/dsl/conftest.py", "nvml-smi"),
    ]:
        assert "CuTe DSL" in guarded[(path, rule)], path
    assert ("tests/dsl/test_rocm.py", "nvml-smi") in reported
    summary = sorted((d["path"], d["line"]) for d in found if d["rule"] == "cuda-only-component")
    assert summary == [("mylib/dsl/__init__.py", 1), ("tests/dsl/test_bwd.py", 1)]


def test_cute_dsl_unknown_stays_reported(cli, write, tmp_path):
    write("setup.py", ROOT_SETUP)
    # optional import (try/except): the file runs without the DSL
    write(
        "tools/opt.py", "try:\n    import cutlass\nexcept ImportError:\n    cutlass = None\n" + SMI
    )
    # one DSL script among ordinary ones: the folder is not DSL code
    write("bench/dsl_one.py", "import cutlass.cute\n")
    write("bench/b.py", SMI)
    write("bench/c.py", CUDA_MAJOR)
    # a package named like the DSL's but not it
    write("other/cutlass_like.py", "import cutlass_library\n" + SMI)
    reported, guarded, _ = _lint(cli, tmp_path)
    assert not guarded
    assert {("tools/opt.py", "nvml-smi"), ("bench/b.py", "nvml-smi")} <= set(reported)
    assert ("bench/c.py", "torch-version-cuda") in reported
    assert ("other/cutlass_like.py", "nvml-smi") in reported
    assert not any(rule == "cuda-only-component" for _, rule in reported)


def test_the_project_root_is_never_a_dsl_component(cli, write, tmp_path):
    write("__init__.py", "import cutlass\n")
    write("fwd.py", "import cutlass.cute as cute\n" + SMI)
    reported, guarded, _ = _lint(cli, tmp_path)
    assert ("fwd.py", "nvml-smi") in reported and not guarded
