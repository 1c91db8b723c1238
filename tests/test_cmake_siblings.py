"""CUDA configure switches with a HIP/ROCm sibling: what they add is never in the ROCm build."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import write_tree

from cuda2rocm.context.build import cuda_siblings

ASM = '__global__ void k(int* o) { int v; asm("mov.u32 %0, %%laneid;" : "=r"(v)); o[0] = v; }\n'


def _project(root: Path, hip_switch: bool) -> None:
    top = "cmake_minimum_required(VERSION 3.21)\nproject(orrery CXX)\n"
    top += 'option(ORRERY_WITH_CUDA "NVIDIA kernels" OFF)\n'
    top += "if(ORRERY_WITH_CUDA)\n  add_subdirectory(nv)\nendif()\n"
    if hip_switch:
        top += 'option(ORRERY_WITH_HIP "AMD kernels" OFF)\n'
        top += "if(ORRERY_WITH_HIP)\n  add_subdirectory(amd)\nendif()\n"
    write_tree(
        root,
        {
            "CMakeLists.txt": top,
            "nv/CMakeLists.txt": "add_library(orrery_nv lanes.cu)\n",
            "nv/lanes.cu": ASM,
            "amd/CMakeLists.txt": "add_library(orrery_amd lanes.hip)\n",
            "amd/lanes.hip": "#include <hip/hip_runtime.h>\n",
        },
    )


def _lint(root: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "cuda2rocm", "lint", "--no-cache", "--format", "json"]
    cmd += ["--show-guarded", "--exit-zero", str(root)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root, check=True)
    return json.loads(proc.stdout)["diagnostics"]


def test_a_folder_under_the_cuda_switch_is_one_gate_finding(tmp_path: Path) -> None:
    _project(tmp_path, hip_switch=True)
    found = _lint(tmp_path)
    asm = [d for d in found if d["rule"] == "inline-ptx"]
    assert len(asm) == 1 and "guarded" in asm[0]
    gate = [d for d in found if d["rule"] == "cuda-only-component"]
    assert len(gate) == 1 and gate[0]["path"].endswith("CMakeLists.txt")
    assert "sibling `ORRERY_WITH_HIP`" in gate[0]["message"]  # the evidence is printed


def test_without_a_hip_sibling_the_cuda_switch_stays_unknown(tmp_path: Path) -> None:
    # A project not yet ported: its ROCm port may turn that same switch on.
    _project(tmp_path, hip_switch=False)
    asm = [d for d in _lint(tmp_path) if d["rule"] == "inline-ptx"]
    assert len(asm) == 1 and "guarded" not in asm[0]


def test_sibling_names() -> None:
    text = (
        "if(HAVE_CUDA)\nendif()\nif(HAVE_ROCM)\nendif()\n"
        "if(Tern_ENABLE_CUDA OR Tern_ENABLE_HIP)\nendif()\n"
        "if(NO_CUDA)\nendif()\nif(NO_HIP)\nendif()\n"
        "if(CMAKE_CUDA)\nendif()\nif(CMAKE_HIP)\nendif()\n"
        "if(LONELY_CUDA)\nendif()\n"
    )
    assert cuda_siblings(text) == {"HAVE_CUDA": "HAVE_ROCM", "Tern_ENABLE_CUDA": "Tern_ENABLE_HIP"}
