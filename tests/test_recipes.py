"""NVIDIA container recipes: one finding per recipe; notes in a project that builds for ROCm."""

import json

DOCKERFILE = """FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
RUN pip install torch --index-url https://download.pytorch.org/whl/cu121
RUN pip install triton==3.0.0
"""
LAUNCH = """docker build -t train -f docker/Dockerfile .
docker run --gpus all train
"""
ROCM_SETUP = """from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION
if not IS_HIP_EXTENSION:
    ext = CUDAExtension("x_cuda", sources=["csrc/cuda_only/k.cu"])
"""
KERNEL = "__device__ float f(float v) { return __shfl_sync(0xffffffff, v, 0); }\n"


def _lint(cli, tmp_path):
    out = cli("lint", "--no-cache", "--format", "json", "--exit-zero", ".", cwd=tmp_path).stdout
    return {
        (d["path"], d["line"], d["rule"]): (d["severity"], d["message"])
        for d in json.loads(out)["diagnostics"]
    }


def test_an_nvidia_recipe_is_one_finding(cli, write, tmp_path):
    write("docker/Dockerfile", DOCKERFILE)
    write("scripts/launch.sh", LAUNCH)
    found = _lint(cli, tmp_path)
    actions = {k: v for k, v in found.items() if v[0] != "info"}
    assert list(actions) == [("docker/Dockerfile", 1, "docker-nvidia-base")]
    assert "3 more finding(s)" in actions[("docker/Dockerfile", 1, "docker-nvidia-base")][1]
    # The others stay visible as notes that point to the recipe: nothing is dropped.
    notes = {k[2] for k, v in found.items() if v[0] == "info" and "docker/Dockerfile:1" in v[1]}
    assert notes == {"torch-cuda-wheel", "rocm-variant-packages", "docker-gpu-flags"}


def test_in_a_project_with_a_rocm_build_the_recipe_is_a_note(cli, write, tmp_path):
    write("docker/Dockerfile", DOCKERFILE)
    write("setup.py", ROCM_SETUP)
    write("csrc/cuda_only/k.cu", KERNEL)
    found = _lint(cli, tmp_path)
    recipe = {k: v for k, v in found.items() if k[0] == "docker/Dockerfile"}
    assert recipe and {v[0] for v in recipe.values()} == {"info"}
    base = recipe[("docker/Dockerfile", 1, "docker-nvidia-base")]
    assert "add a ROCm recipe beside it" in base[1]


def test_a_recipe_that_is_not_nvidias_keeps_its_findings(cli, write, tmp_path):
    write("docker/Dockerfile", "FROM rocm/pytorch:latest\nRUN pip install triton==3.0.0\n")
    write("scripts/launch.sh", LAUNCH)
    found = _lint(cli, tmp_path)
    assert found[("scripts/launch.sh", 2, "docker-gpu-flags")][0] != "info"
    assert found[("docker/Dockerfile", 2, "rocm-variant-packages")][0] != "info"


def test_a_setup_py_that_branches_on_rocm_makes_the_recipe_a_note(cli, write, tmp_path):
    write("docker/Dockerfile", DOCKERFILE)
    write(
        "setup.py",
        "import torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        'macros = [("WITH_HIP", None)] if torch.version.hip else [("WITH_CUDA", None)]\n'
        'ext = CUDAExtension("x", sources=["x.cu"], define_macros=macros)\n',
    )
    found = _lint(cli, tmp_path)
    recipe = {k: v for k, v in found.items() if k[0] == "docker/Dockerfile"}
    assert recipe and {v[0] for v in recipe.values()} == {"info"}
