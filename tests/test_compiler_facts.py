"""The facts behind half-members and clang-rejects, asked of the compilers themselves.

Each construct is compiled by nvcc (it must build) and by hipcc (it must fail with the message
the rule quotes, at the line that holds it); the spellings the rules recommend must build with
hipcc; and the silent fp16 differences are run on the host with hipcc. Skipped when a compiler
is missing (CI installs both). Compile-only except the host run; no GPU needed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
needs_hipcc = pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")

PRELUDE = """\
#ifdef __HIPCC__
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#else
#include <cuda_fp16.h>
#endif
#include <array>
#include <type_traits>
struct Params { static constexpr float kScale = 2.f; std::array<float, 4> poly; };
__global__ void fill(float* y) { y[0] = 1.f; }
"""
#: (marker, construct, hipcc's message); nvcc compiles all but HALFX, which CUDA 9+ rejects too
#: (it lives on in `#if CUDA_VERSION < 9000` branches, which plain hipcc takes).
REJECTED = [
    (
        "LAUNCH",
        "void run(float* y, unsigned b) { fill<<<{b, 1, 1}, {256, 1, 1}>>>(y); }",
        "expected expression",
    ),
    (
        "CONSTREF",
        "__device__ float f(const Params& p) { constexpr float k = 1.f / p.kScale; return k; }",
        "must be initialized by a constant expression",
    ),
    (
        "AT",
        "__device__ float g(const Params& p) { return p.poly.at(1); }",
        "__throw_out_of_range_fmt",
    ),
    (
        "CTAD",
        "__device__ float c(float x) { auto a = std::array{x, 2.f}; return a[0]; }",
        "no viable constructor or deduction guide for deduction of template arguments of 'array'",
    ),
    (
        "CTADHD",
        "__host__ __device__ float d(float x) { auto a = std::array{x, 2.f}; return a[0]; }"
        " __global__ void use_d(float* y) { y[0] = d(y[1]); }",
        "reference to __host__ function '<deduction guide for array>",
    ),
    (
        "HALFX",
        "__device__ unsigned short h(half v) { return v.x; }",
        "no member named 'x' in '__half'",
    ),
    (
        "HALF2RAW",
        "__device__ void r() { __half2_raw r = {0x3c00, 0x3c00}; (void)r; }",
        "excess elements in struct initializer",
    ),
]
PORTABLE = """
void run(float* y, unsigned b) { fill<<<dim3{b, 1, 1}, dim3{256, 1, 1}>>>(y); }
__device__ float f(const Params& p) {
  constexpr float k = 1.f / std::remove_reference_t<decltype(p)>::kScale;
  return k;
}
__device__ float g(const Params& p) { return p.poly[1]; }
__host__ __device__ float d(float x) { auto a = std::array<float, 2>{x, 2.f}; return a[0]; }
__device__ unsigned short h(half v) { return __half_as_ushort(v); }
__device__ float lo(half2 v) { return __low2float(v) + __high2float(v); }
__device__ void r() { __half2_raw r; r.x = 0x3c00; r.y = 0x3c00; (void)r; }
"""


def _compile(tool: list[str], source: str, tmp: Path, suffix: str) -> subprocess.CompletedProcess:
    path = tmp / f"probe{suffix}"
    path.write_text(source)
    env = dict(os.environ, HIP_PLATFORM="amd")
    cmd = [*tool, "-std=c++17", "-c", str(path), "-o", str(path) + ".o"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


def _rejected_source(skip: tuple[str, ...] = ()) -> tuple[str, dict[str, int]]:
    lines = PRELUDE.splitlines()
    where = {}
    for marker, code, _ in REJECTED:
        if marker in skip:
            continue
        lines.append(code)
        where[marker] = len(lines)
    return "\n".join(lines) + "\n", where


@needs_nvcc
def test_nvcc_accepts_every_construct(tmp_path):
    source, _ = _rejected_source(skip=("HALFX",))
    portable = "namespace portable {" + PORTABLE + "}\n"
    nvcc = ["nvcc", "-arch=sm_80", "--expt-relaxed-constexpr"]  # as torch's build passes it
    done = _compile(nvcc, source + portable, tmp_path, ".cu")
    assert done.returncode == 0, done.stderr


@needs_hipcc
def test_hipcc_rejects_each_construct_where_it_is(tmp_path):
    source, where = _rejected_source()
    done = _compile(["hipcc", "--offload-arch=gfx90a"], source, tmp_path, ".hip")
    assert done.returncode != 0
    for marker, _, message in REJECTED:
        line = where[marker]
        at_line = [m for m in done.stderr.splitlines() if f"probe.hip:{line}:" in m]
        assert any(message in m for m in at_line) or (
            marker == "AT" and message in done.stderr  # reported inside <array>
        ), (marker, done.stderr)


@needs_hipcc
def test_hipcc_accepts_the_portable_spellings(tmp_path):
    done = _compile(["hipcc", "--offload-arch=gfx90a"], PRELUDE + PORTABLE, tmp_path, ".hip")
    assert done.returncode == 0, done.stderr


@needs_hipcc
def test_hip_fp16_raw_layouts_differ_from_cuda(tmp_path):
    """__half_raw{bits} converts the bits as a number, and half2.x is the raw bits (HIP 5.x)."""
    source = (
        PRELUDE
        + """
#include <cstdio>
int main() {
  __half_raw one = {0x3c00};
  __half2_raw pair; pair.x = 0x3c00; pair.y = 0x3c00;
  half2 v = pair;
  std::printf("%g %g %g\\n", (float)__half(one), (float)v.x, __low2float(v));
}
"""
    )
    path = tmp_path / "run.hip"
    path.write_text(source)
    env = dict(os.environ, HIP_PLATFORM="amd")
    exe = tmp_path / "run"
    cmd = ["hipcc", "-std=c++17", "--offload-arch=gfx90a", str(path), "-o", str(exe)]
    built = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    if built.returncode != 0:
        pytest.skip(f"cannot link a HIP host program here: {built.stderr[-300:]}")
    raw, member, portable = subprocess.run(
        [str(exe)], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert float(portable) == 1.0  # the spelling the rule recommends
    assert float(raw) == 15360.0  # CUDA: 1.0
    # HIP 5.x: the bits as a number; newer HIP declares the members __half (1.0, as CUDA).
    assert float(member) in (15360.0, 1.0)
