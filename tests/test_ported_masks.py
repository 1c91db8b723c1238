"""Lane masks a project has already ported (context/warp_masks.py): a mask constant passed only
to a macro that drops it on ROCm, and a mask of a type that is 64-bit on ROCm, are not 32-bit
masks there. Unknown (a definition ROCm may compile that keeps the mask) stays reported."""

from pathlib import Path

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.engine import Linter

SETUP = """from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension
setup(name="x", ext_modules=[CUDAExtension("x", sources=["csrc/seg.cu"])])
"""
UTILS = """#pragma once
#include <torch/extension.h>
#ifdef USE_ROCM
using lane_mask_t = unsigned long long;
#define SHFL_DOWN(mask, v, d) __shfl_down(v, d)
#else
using lane_mask_t = unsigned int;
#define SHFL_DOWN(mask, v, d) __shfl_down_sync(mask, v, d)
#endif
__device__ inline float down(lane_mask_t mask, float v, int d) {
  return __shfl_down_sync(mask, v, d);
}
"""
KERNEL = """#include "utils.cuh"
#define WARP_MASK 0xffffffff
__global__ void seg(float *x) {
  float v = x[threadIdx.x];
  v += SHFL_DOWN(WARP_MASK, v, 1);
  x[threadIdx.x] = v;
}
"""


def _project(tmp_path: Path, utils: str = UTILS) -> list[tuple[str, int]]:
    (tmp_path / "csrc").mkdir()
    (tmp_path / "setup.py").write_text(SETUP)
    (tmp_path / "csrc/utils.cuh").write_text(utils)
    (tmp_path / "csrc/seg.cu").write_text(KERNEL)
    specs = [r for r in load_catalogue() if r.id == "warp-mask-32bit"]
    result = runner.run(Linter(specs), [tmp_path])
    return sorted((Path(d.path).name, d.position.line) for d in result.diagnostics)


def test_masks_the_project_ported_are_not_reported(tmp_path):
    assert _project(tmp_path) == []


def test_a_rocm_definition_that_keeps_the_mask_keeps_the_findings(tmp_path):
    # The ROCm branch passes the mask on and types it 32-bit: both are 32-bit masks there.
    utils = UTILS.replace("__shfl_down(v, d)", "__shfl_down_sync(mask, v, d)").replace(
        "using lane_mask_t = unsigned long long;", "using lane_mask_t = unsigned int;"
    )
    found = _project(tmp_path, utils)
    assert ("seg.cu", 2) in found and ("utils.cuh", 11) in found
