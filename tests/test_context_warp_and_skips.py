"""Context for warp constants and test skips: run-time warp queries, width-32 shuffle groups
behind wrappers, ROCm skips above parameterized tests (first seen in a precision review):

1. the run-time query the warp-size message recommends (`at::cuda::warp_size()`) is not a
   compile-time warp constant;
2. width-32 shuffle groups reached through a project wrapper more than one call down;
3. rocm-skip-above-expand: a ROCm skip above `@parameterized.expand` is reported, unless the
   whole class is skipped on ROCm (then guarded, with the class skip as its reason).
"""

from __future__ import annotations

from conftest import lint_rules as _run
from conftest import reported_and_guarded as _where
from conftest import write_tree as _write

# -- 1. the run-time query itself ------------------------------------------------------------
HOST_QUERY = """\
#include <ATen/cuda/CUDAContext.h>
#include "defs.cuh"
#if defined(USE_ROCM)
inline int host_lanes() {
  return at::cuda::warp_size();
}
#endif
inline int host_blocks(int n) {
  return n / warp_size;
}
__global__ void k(float* x) { x[threadIdx.x] = 0.f; }
"""


def test_the_run_time_warp_size_query_is_not_a_constant(tmp_path):
    _write(tmp_path, {"defs.cuh": "#pragma once\n", "k.cu": HOST_QUERY})
    reported, _ = _where(_run(tmp_path, "warp-size-32"), tmp_path)
    assert ("k.cu", 5) not in reported
    # A project constant of the same name used by host code stays reported.
    assert ("k.cu", 9) in reported


# -- 2. width-32 groups through a shuffle wrapper ----------------------------------------------
GROUPS = """\
#include <hip/hip_runtime.h>
constexpr int kLanes = 32;

template <typename T>
__device__ __forceinline__ T xor_lanes(unsigned mask, T v, int m, int width = kLanes) {
#if defined(__HIP_PLATFORM_AMD__)
  return __shfl_xor(v, m, width);
#else
  return __shfl_xor_sync(mask, v, m, width);
#endif
}

template <typename T>
__device__ __forceinline__ T group_max(T v) {
  for (int o = 16; o > 0; o >>= 1)
    v = max(v, xor_lanes(0xffffffffu, v, o, 32));
  return v;
}

__device__ float block_max(float v) {
  static __shared__ float part[32];
  unsigned lane = threadIdx.x & 31;
  unsigned group = threadIdx.x >> 5;
  v = group_max(v);
  if (lane == 0) part[group] = v;
  __syncthreads();
  return part[0];
}
"""


def test_width_32_groups_through_a_shuffle_wrapper_are_logical(tmp_path):
    _write(tmp_path, {"g.cuh": GROUPS})
    reported, _ = _where(_run(tmp_path, "warp-size-32"), tmp_path)
    assert not {r for r in reported if r[1] in (21, 22, 23)}, reported


def test_wrapper_called_without_width_32_stays_reported(tmp_path):
    # The wrapper's default width is a project constant: unknown, so reported.
    _write(
        tmp_path,
        {
            "g.cuh": GROUPS.replace(
                "xor_lanes(0xffffffffu, v, o, 32)", "xor_lanes(0xffffffffu, v, o)"
            )
        },
    )
    reported, _ = _where(_run(tmp_path, "warp-size-32"), tmp_path)
    assert {("g.cuh", 22), ("g.cuh", 23)} <= reported
    # A wrapper that ignores the width it is given shuffles the whole wavefront.
    _write(tmp_path, {"g.cuh": GROUPS.replace("__shfl_xor(v, m, width)", "__shfl_xor(v, m)")})
    reported, _ = _where(_run(tmp_path, "warp-size-32"), tmp_path)
    assert {("g.cuh", 22), ("g.cuh", 23)} <= reported


# -- 3. a ROCm skip above parameterized.expand ---------------------------------------------------
EXPAND = """\
import unittest

import torch
from parameterized import parameterized

skip_rocm = unittest.skipIf(torch.version.hip is not None, "no ROCm kernel")


class T(unittest.TestCase):
    @skip_rocm
    @parameterized.expand([(1,), (2,)])
    def test_a(self, n):
        pass
"""


def test_skip_above_expand_is_reported_unless_the_class_is_skipped(tmp_path):
    _write(tmp_path, {"t_test.py": EXPAND})
    reported, guarded = _where(_run(tmp_path, "rocm-skip-above-expand"), tmp_path)
    assert reported == {("t_test.py", 10)}
    _write(tmp_path, {"t_test.py": EXPAND.replace("class T(", "@skip_rocm\nclass T(")})
    reported, guarded = _where(_run(tmp_path, "rocm-skip-above-expand"), tmp_path)
    assert not reported
    assert "skip_rocm" in guarded[("t_test.py", 11)]
