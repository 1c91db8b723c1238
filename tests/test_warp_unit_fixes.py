"""warp-size-32 fixes are argued over the whole unit (a kernel, the functions it calls, the
constants they share): all together or none, with the reason in the finding."""

from __future__ import annotations

from cuda2rocm.catalogue import find_rule
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_source
from cuda2rocm.sources import SourceFile

LINTER = Linter([find_rule("warp-size-32")])

FIVE_STEPS = """\
#include <cuda_runtime.h>
#define WARP_SIZE 32
__device__ float fold(float s) {
  for (int k = 4; k >= 0; --k) s += __shfl_down_sync(0xffffffffu, s, 1 << k);
  return s;
}
__global__ void rowsum(const float* x, float* y, int n) {
  int lane = threadIdx.x % WARP_SIZE;
  float s = 0.f;
  for (int i = lane; i < n; i += WARP_SIZE) s += x[i];
  s = fold(s);
  if (lane == 0) y[blockIdx.x] = s;
}
"""

MMA = """\
#include <cute/tensor.hpp>
__device__ int fragment_row(int tid) {
  int lane = threadIdx.x % 32;
  return (tid / 32) * 16 + lane / 4;
}
"""


def _run(path: str, text: str):
    source = SourceFile(path, "cuda", text)
    found = [d for d in LINTER.lint_source(source) if d.rule == "warp-size-32"]
    return found, fix_source(source, LINTER.lint_source, True).fixed


def test_a_constant_is_not_widened_while_a_called_reduction_stays_at_five_steps():
    found, fixed = _run("rowsum.cu", FIVE_STEPS)
    assert found
    assert "#define WARP_SIZE 32" in fixed  # never half-rewritten
    assert all(d.fix is None for d in found)
    assert all("no automatic fix" in d.message for d in found)


def test_lane_arithmetic_of_mma_fragments_keeps_32():
    found, fixed = _run("frag.cu", MMA)
    assert found and fixed == MMA
    assert all("tensor-core MMA" in d.message for d in found)
