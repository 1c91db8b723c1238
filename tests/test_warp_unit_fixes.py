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


UNIT = """\
#define LANES 32
__device__ float lane_sum(float v) {
  for (int s = 16; s > 0; s >>= 1) v += __shfl_down(v, s);
  return v;
}
__global__ void sums(const float* x, float* y) {
  float v = lane_sum(x[threadIdx.x]);
  if (threadIdx.x % LANES == 0) y[threadIdx.x / LANES] = v;
}
"""


def test_a_header_gets_no_warp_fix_the_same_code_in_a_source_gets(tmp_path):
    # Its includers may redefine the constant or pass 32-lane sizes in: not visible from it.
    from tests.conftest import fix_alone

    source = fix_alone(tmp_path, "portable", "sums.cu", UNIT).read_text()
    assert "CUDA2ROCM_WARP_SIZE" in source
    (tmp_path / "h").mkdir()
    header = fix_alone(tmp_path / "h", "portable", "sums.cuh", UNIT).read_text()
    assert "CUDA2ROCM_WARP_SIZE" not in header
    assert "#define LANES 32" in header and "s = 16" in header
