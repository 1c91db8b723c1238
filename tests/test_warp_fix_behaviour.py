"""Kernel fixes that change arithmetic (warp-size-32, warp-mask-32bit) are run, not only
compiled (issue 14).

- HIP side, 64-lane wavefronts: the fixed kernels run on the CPU through ROCm's HIP-CPU runtime
  (header-only, github.com/ROCm/HIP-CPU; needs g++ and libtbb-dev) and must give the right
  answer; a naive port that keeps the 32-lane arithmetic is the control that gets it wrong.
  No PyPI or Debian package ships HIP-CPU (checked: `apt-cache search hip-cpu` finds nothing),
  so the test runs where its headers are: HIP_CPU_INCLUDE, or /work/real/HIP-CPU/include.
- NVIDIA side: original and fixed kernels built with nvcc must print the same on a GPU
  (skipped without one; bench/gpu_identity.sh runs the same check by hand).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cuda2rocm.catalogue import load_catalogue, select_rules
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_paths

FIXTURE = Path(__file__).parent / "fixtures" / "warp"
HIP_CPU_CANDIDATES = [os.environ.get("HIP_CPU_INCLUDE", ""), "/work/real/HIP-CPU/include"]
HIP_CPU = next(
    (p for p in HIP_CPU_CANDIDATES if p and Path(p, "hip", "hip_runtime.h").is_file()), None
)
TBB = any(
    Path(d, "libtbb.so").exists()
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib", "/usr/local/lib")
)

HIP_DRIVER = """#include <hip/hip_runtime.h>
// HIP-CPU declares __ffsll for std::int64_t and std::uint64_t (long on Linux), so an unsigned
// long long argument is ambiguous there (ROCm declares it for unsigned long long).
#define __ffsll(x) __ffsll(static_cast<std::uint64_t>(x))
// HIP-CPU's shuffle_down compares a lane's index within the whole wavefront with `width`, so a
// shuffle narrower than the wavefront (width 32 on wave64) never moves data in its upper
// groups. ROCm computes it per group (HIP 5.2 amd_warp_functions.h: `(self & (width-1)) +
// delta >= width ? self : self + delta`): that formula, over HIP-CPU's full-wave __shfl.
template <class T> T hip_shfl_down(T v, unsigned d, int w) {
  const int self = threadIdx.x % warpSize;
  const int index = (self & (w - 1)) + static_cast<int>(d) >= w ? self : self + d;
  return __shfl(v, index);
}
#define __shfl_down(v, d, w) hip_shfl_down(v, d, w)
#include "kernels.cu"
#define GPU_(name) hip##name
#define LAUNCH(k, n, ...) hipLaunchKernelGGL(k, dim3(1), dim3(n), 0, 0, __VA_ARGS__)
#include "main.inc"
"""
CUDA_DRIVER = """#include "kernels.cu"
#define GPU_(name) cuda##name
#define LAUNCH(k, n, ...) k<<<1, n>>>(__VA_ARGS__)
#include "main.inc"
"""
#: The control: the 32-lane arithmetic ported by renaming only (HIP's non-sync builtins).
NAIVE = """#include <hip/hip_runtime.h>
__global__ void block_sum(const float* x, float* out) { out[0] = 0; }
__global__ void count_positive(const float* x, int* out) {
  unsigned ballot = __ballot(x[threadIdx.x] > 0.f);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, __popc(ballot));
}
"""


def _fixed_copy(tmp_path: Path) -> Path:
    work = tmp_path / "fixed"
    shutil.copytree(FIXTURE, work)
    report = fix_paths(Linter(select_rules(load_catalogue())), [work], unsafe=True)
    assert not report.errors and any(o.changed for o in report.outcomes)
    assert (work / "cuda2rocm_compat.h").is_file()
    return work


def _parse(output: str) -> dict[str, float]:
    return {k: float(v) for k, v in (part.split("=") for part in output.split())}


def _run_hip_cpu(work: Path, driver: str) -> dict[str, float]:
    (work / "driver.cpp").write_text(driver)
    exe = work / "driver"
    cmd = ["g++", "-std=c++17", "-D__HIP_PLATFORM_AMD__", f"-I{HIP_CPU}", f"-I{work}"]
    return _parse(
        _build_and_run([*cmd, str(work / "driver.cpp"), "-o", str(exe), "-ltbb", "-lpthread"], exe)
    )


def _build_and_run(build_cmd: list[str], exe: Path) -> str:
    """Compile with `build_cmd`, run `exe`, return what it printed."""
    build = subprocess.run(build_cmd, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.skipif(
    HIP_CPU is None or shutil.which("g++") is None or not TBB,
    reason="needs ROCm's HIP-CPU headers (set HIP_CPU_INCLUDE to ROCm/HIP-CPU's include/; no "
    "PyPI or Debian package ships them, so CI without GitHub access skips this), g++ and "
    "libtbb-dev",
)
def test_fixed_warp_kernels_are_right_with_64_lane_wavefronts(tmp_path):
    work = _fixed_copy(tmp_path)
    fixed = _run_hip_cpu(work, HIP_DRIVER)
    assert fixed["sum"] == fixed["sum_expect"]
    assert fixed["count"] == _expected_count()
    naive_dir = tmp_path / "naive"
    shutil.copytree(FIXTURE, naive_dir)
    (naive_dir / "kernels.cu").write_text(NAIVE)
    naive = _run_hip_cpu(naive_dir, HIP_DRIVER.replace("#define __ffsll", "// "))
    assert naive["count"] != _expected_count()  # the 32-lane port miscounts on wave64


def _expected_count() -> int:
    return sum(i % 64 < 40 for i in range(256))  # as main.inc fills the input


def _has_nvidia_gpu() -> bool:
    if shutil.which("nvcc") is None or shutil.which("nvidia-smi") is None:
        return False
    probe = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return probe.returncode == 0 and "GPU" in probe.stdout


@pytest.mark.skipif(
    not _has_nvidia_gpu(),
    reason="needs nvcc and an NVIDIA GPU (not in CI); bench/gpu_identity.sh runs it by hand",
)
def test_original_and_fixed_warp_kernels_agree_on_nvidia(tmp_path):
    outputs = []
    for work in (tmp_path / "original", _fixed_copy(tmp_path)):
        if not work.exists():
            shutil.copytree(FIXTURE, work)
        (work / "driver.cu").write_text(CUDA_DRIVER)
        exe = work / "driver"
        nvcc = ["nvcc", "-I", str(work), str(work / "driver.cu"), "-o", str(exe)]
        outputs.append(_build_and_run(nvcc, exe))
    assert outputs[0] == outputs[1]
    values = _parse(outputs[0])
    assert values["sum"] == values["sum_expect"] and values["count"] == _expected_count()


# -- logical 32-lane groups: an explicit width-32 HIP branch needs no finding ----------------------
#: Group sums with shuffles of explicit width GROUP (= 32) in the `#ifdef __HIP_PLATFORM_AMD__`
#: branch and 32-lane arithmetic (`% 32`, `/ 32`) around them.
LOGICAL = """constexpr int GROUP = 32;
__global__ void group_sums(const float* x, float* sums, float* each) {
  float v = x[threadIdx.x];
  for (int d = 16; d > 0; d /= 2) {
#ifdef __HIP_PLATFORM_AMD__
    v += __shfl_down(v, d, GROUP);
#else
    v += __shfl_down_sync(0xffffffffu, v, d);
#endif
  }
#ifdef __HIP_PLATFORM_AMD__
  each[threadIdx.x] = __shfl(v, 0, GROUP);
#else
  each[threadIdx.x] = __shfl_sync(0xffffffffu, v, 0);
#endif
  if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = v;
}
"""
#: ROCm's per-group shuffles (HIP 5.2 amd_warp_functions.h: `__shfl` reads `src_lane + (self &
#: ~(width-1))`, `__shfl_down` keeps `self` when `(self & (width-1)) + delta >= width`) over
#: HIP-CPU's whole-wave `__shfl` (HIP-CPU ignores a narrower width); WIDTH(w) picks the width.
LOGICAL_DRIVER = """#include <hip/hip_runtime.h>
#include <cstdio>
template <class T> T rocm_shfl(T v, int src, int w) {
  const int self = threadIdx.x % warpSize;
  return __shfl(v, src + (self & ~(w - 1)));
}
template <class T> T rocm_shfl_down(T v, unsigned d, int w) {
  const int self = threadIdx.x % warpSize;
  return __shfl(v, (self & (w - 1)) + static_cast<int>(d) >= w ? self : self + d);
}
#define __shfl(v, s, w) rocm_shfl(v, s, WIDTH(w))
#define __shfl_down(v, d, w) rocm_shfl_down(v, d, WIDTH(w))
#include "kernels.cu"
int main() {
  const int n = 128;
  float *x, *sums, *each, h[n], s[n / 32], e[n];
  hipMalloc(&x, sizeof h); hipMalloc(&sums, sizeof s); hipMalloc(&each, sizeof e);
  for (int i = 0; i < n; ++i) h[i] = float(i % 7 + i / 32);
  hipMemcpy(x, h, sizeof h, hipMemcpyHostToDevice);
  hipLaunchKernelGGL(group_sums, dim3(1), dim3(n), 0, 0, x, sums, each);
  hipMemcpy(s, sums, sizeof s, hipMemcpyDeviceToHost);
  hipMemcpy(e, each, sizeof e, hipMemcpyDeviceToHost);
  int bad = 0;
  for (int g = 0; g < n / 32; ++g) {
    float want = 0;
    for (int i = 32 * g; i < 32 * g + 32; ++i) want += h[i];
    bad += s[g] != want;
    for (int i = 32 * g; i < 32 * g + 32; ++i) bad += e[i] != want;
  }
  std::printf("wave=%d bad=%d\\n", warpSize, bad);
}
"""


def test_logical_32_lane_groups_get_no_warp_size_finding(tmp_path):
    (tmp_path / "kernels.cu").write_text(LOGICAL)
    specs = [r for r in load_catalogue() if r.id == "warp-size-32"]
    from cuda2rocm import runner

    result = runner.run(Linter(specs), [tmp_path / "kernels.cu"])
    assert result.diagnostics == []
    # The same function with the hardware's default width in the HIP branch is reported.
    wide = LOGICAL.replace("(v, d, GROUP)", "(v, d)").replace("(v, 0, GROUP)", "(v, 0)")
    (tmp_path / "kernels.cu").write_text(wide)
    lines = {
        d.position.line for d in runner.run(Linter(specs), [tmp_path / "kernels.cu"]).diagnostics
    }
    assert {4, 16} <= lines  # the loop from 16, `% 32`


@pytest.mark.skipif(
    HIP_CPU is None or shutil.which("g++") is None or not TBB,
    reason="needs ROCm's HIP-CPU headers (HIP_CPU_INCLUDE), g++ and libtbb-dev",
)
def test_width_32_shuffles_give_per_group_results_on_wave64(tmp_path):
    """The fact behind the rule: on a 64-lane wavefront, shuffles of explicit width 32 and
    `% 32` / `/ 32` give each 32-lane group its own result; the default width does not."""
    (tmp_path / "kernels.cu").write_text(LOGICAL)
    exact = _run_logical(tmp_path, "#define WIDTH(w) (w)\n")
    assert exact == {"wave": 64.0, "bad": 0.0}
    whole = _run_logical(tmp_path, "#define WIDTH(w) warpSize\n")
    assert whole["wave"] == 64.0 and whole["bad"] > 0  # the broadcast crosses groups


def _run_logical(work: Path, width: str) -> dict[str, float]:
    (work / "driver.cpp").write_text(width + LOGICAL_DRIVER)
    exe = work / "driver"
    cmd = ["g++", "-std=c++17", "-D__HIP_PLATFORM_AMD__", f"-I{HIP_CPU}", f"-I{work}"]
    return _parse(
        _build_and_run([*cmd, str(work / "driver.cpp"), "-o", str(exe), "-ltbb", "-lpthread"], exe)
    )


# -- a warp constant named for nothing in particular: rewritten with its function ----------------
#: A block sum whose warp width is a constant spelled `kSpan` (warp-size-32 finds it by use).
SPAN = """#include <cuda_runtime.h>
constexpr int kSpan = 32;
__global__ void span_sum(const float* x, float* out) {
  __shared__ float part[32];
  float v = x[threadIdx.x];
  for (int o = kSpan / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if (threadIdx.x % kSpan == 0) part[threadIdx.x / kSpan] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int w = 0; w < blockDim.x / kSpan; ++w) t += part[w];
    out[0] = t;
  }
}
"""
SPAN_MAIN = """#include <cstdio>
int main() {
  const int n = 256;
  float h[n];
  double want = 0;
  for (int i = 0; i < n; ++i) {
    h[i] = (i % 64 < 40) ? 1.0f + 0.25f * (i % 3) : -0.5f * (i % 5);
    want += h[i];
  }
  float *x, *s;
  GPU_(Malloc)(&x, sizeof h);
  GPU_(Malloc)(&s, sizeof(float));
  GPU_(Memcpy)(x, h, sizeof h, GPU_(MemcpyHostToDevice));
  LAUNCH(span_sum, n, x, s);
  float got;
  GPU_(Memcpy)(&got, s, sizeof got, GPU_(MemcpyDeviceToHost));
  std::printf("sum=%.6g sum_expect=%.6g\\n", got, want);
}
"""


def _span(work: Path, fix: bool) -> Path:
    work.mkdir()
    (work / "kernels.cu").write_text(SPAN)
    (work / "main.inc").write_text(SPAN_MAIN)
    if fix:
        fix_paths(Linter(select_rules(load_catalogue())), [work], unsafe=True)
    return work


def _fixed_span(tmp_path: Path) -> Path:
    return _span(tmp_path / "span", fix=True)


def test_a_use_named_warp_constant_is_rewritten_with_the_arrays_it_sizes(tmp_path):
    fixed = (_fixed_span(tmp_path) / "kernels.cu").read_text()
    assert "constexpr int kSpan = CUDA2ROCM_WARP_SIZE;" in fixed
    assert "__shared__ float part[CUDA2ROCM_WARP_SIZE];" in fixed


@pytest.mark.skipif(
    HIP_CPU is None or shutil.which("g++") is None or not TBB,
    reason="needs ROCm's HIP-CPU headers (HIP_CPU_INCLUDE), g++ and libtbb-dev",
)
def test_the_rewritten_span_sum_is_right_with_64_lane_wavefronts(tmp_path):
    got = _run_hip_cpu(_fixed_span(tmp_path), HIP_DRIVER)
    assert got["sum"] == got["sum_expect"]


@pytest.mark.skipif(
    not _has_nvidia_gpu(),
    reason="needs nvcc and an NVIDIA GPU (not in CI); bench/gpu_identity.sh runs it by hand",
)
def test_original_and_rewritten_span_sum_agree_on_nvidia(tmp_path):
    outputs = []
    for work in (_span(tmp_path / "original", fix=False), _fixed_span(tmp_path)):
        (work / "driver.cu").write_text(CUDA_DRIVER)
        exe = work / "driver"
        outputs.append(
            _build_and_run(["nvcc", "-I", str(work), str(work / "driver.cu"), "-o", str(exe)], exe)
        )
    assert outputs[0] == outputs[1]
    values = _parse(outputs[0])
    assert values["sum"] == values["sum_expect"]
