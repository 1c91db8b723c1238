"""Fixed units build on ROCm: the compatibility header's shims for what hipcc lacks, on fixtures
of ours (first seen as llm.c's build failures, issue 15).

- cache-operator loads and stores (`__ldcs(const int4*)`, `__stcs(float*, float)`, `__stcg`):
  HIP has `__ldcs` for `__half` only and no stores; the compatibility header maps them to
  plain accesses (PTX ISA: cache operators are performance hints only);
- host code calling `isfinite` unqualified: nvcc's cuda_runtime.h includes <math.h>,
  HIP-Clang's runtime wrapper only <cmath>;
- bf16 types from cuBLAS's header (cublas_api.h includes cuda_bf16.h; hipblas.h does not);
- and faiss's `thrust::cuda::par.on(stream)`: rocThrust spells it `thrust::hip::par`.
Compiles skip when the compiler is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, fix_alone
from test_cublas_mapping import _cublas_include, _hipblas_include

from cuda2rocm import compat_header

STUBS = ROOT / "bench" / "hip52_stubs"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
needs_hipcc = pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")

HINTS = """#include <cuda_runtime.h>

template <class T> struct alignas(16) Pack {
  T v[16 / sizeof(T)];
};

__global__ void stream_scale(const float* in, float* out, float s, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (i + 3 >= n) return;
  int4 bits = __ldcs(reinterpret_cast<const int4*>(in + i));
  Pack<float> p = *reinterpret_cast<Pack<float>*>(&bits);
  for (int k = 0; k < 4; ++k) __stcs(out + i + k, s * p.v[k]);
  __stcg(reinterpret_cast<int4*>(out + i), __ldcs(reinterpret_cast<const int4*>(out + i)));
}
"""
HOST_MATH = """#include <cuda_runtime.h>
#include <stdio.h>

int count_finite(const float* host, int n) {
  int finite = 0;
  for (int i = 0; i < n; ++i)
    if (isfinite(host[i])) ++finite;
  return finite;
}

__global__ void fill(float* out) { out[threadIdx.x] = 1.f; }
"""
BF16_FROM_CUBLAS = """#include <cuda_runtime.h>
#include <cublas_v2.h>

#if defined(USE_BF16)
typedef __nv_bfloat16 floatX;
#else
typedef float floatX;
#endif

__global__ void to_x(const float* in, floatX* out) { out[threadIdx.x] = (floatX)in[threadIdx.x]; }

cublasStatus_t make(cublasHandle_t* h) { return cublasCreate(h); }
"""


def _fix(tmp_path: Path, cli, target: str, name: str, text: str) -> Path:
    return fix_alone(tmp_path, target, name, text)


def _fix_for(tmp_path: Path, cli, target: str, name: str, text: str, rocm: str) -> Path:
    """`_fix` for a port whose oldest ROCm release is `rocm` (its configuration's
    `rocm-version`, found above the file's folder)."""
    (tmp_path / "cuda2rocm.toml").write_text(f'rocm-version = "{rocm}"\n')
    return fix_alone(tmp_path, target, name, text)


def _hipcc(path: Path, *flags: str) -> subprocess.CompletedProcess:
    cmd = ["hipcc", "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-x", "hip", *flags]
    cmd += ["-c", str(path), "-o", f"{path}.o"]
    env = dict(os.environ, HIP_PLATFORM="amd")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


def _nvcc(path: Path, *flags: str) -> subprocess.CompletedProcess:
    cmd = ["nvcc", "-arch=sm_80", *flags, "-c", str(path), "-o", f"{path}.o"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


# -- cache-operator loads and stores -----------------------------------------------------------
def test_cache_hints_are_reported_and_the_fix_includes_the_header(tmp_path, cli):
    path = _fix(tmp_path, cli, "portable", "hints.cu", HINTS)
    text = path.read_text()
    assert '#include "cuda2rocm_compat.h"' in text and "__ldcs(reinterpret_cast" in text
    header = (path.parent / "cuda2rocm_compat.h").read_text()
    assert "#define __ldcs cuda2rocm_ldcs" in header and "#define __stcg cuda2rocm_stcg" in header
    assert "__ldcs" in header.split(compat_header.NAMES_LINE, 1)[1].splitlines()[0]
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "hints.cu").write_text(HINTS)
    found = cli("lint", "--no-cache", "--select", "cache-hints", str(tmp_path / "again")).stdout
    assert found.count("`__ldcs` has no HIP counterpart") == 2 and "`__stcs`" in found


def test_cache_hint_helpers_only_in_headers_that_need_them(tmp_path, cli):
    path = _fix(tmp_path, cli, "portable", "plain.cu", HOST_MATH)
    assert "cuda2rocm_ldcs" not in (path.parent / "cuda2rocm_compat.h").read_text()


@needs_hipcc
@pytest.mark.parametrize("target", ["portable", "hip"])
def test_hipcc_builds_cache_hints_after_the_fix(tmp_path, cli, target):
    result = _hipcc(_fix(tmp_path, cli, target, "hints.cu", HINTS))
    assert result.returncode == 0, result.stderr


@needs_nvcc
def test_nvcc_builds_cache_hints_after_the_portable_fix(tmp_path, cli):
    result = _nvcc(_fix(tmp_path, cli, "portable", "hints.cu", HINTS))
    assert result.returncode == 0, result.stderr


# -- <math.h>, which nvcc's runtime header brings --------------------------------------------
def test_hip_target_includes_math_h_beside_the_runtime(tmp_path, cli):
    text = _fix(tmp_path, cli, "hip", "host.cu", HOST_MATH).read_text()
    assert text.startswith("#include <hip/hip_runtime.h>\n#include <math.h>")


@needs_hipcc
@pytest.mark.parametrize("target", ["portable", "hip"])
def test_hipcc_builds_host_isfinite_after_the_fix(tmp_path, cli, target):
    result = _hipcc(_fix(tmp_path, cli, target, "host.cu", HOST_MATH))
    assert result.returncode == 0, result.stderr


# -- bf16 types that cuBLAS's header brought ---------------------------------------------------
@pytest.mark.parametrize("target", ["portable", "hip"])
def test_cublas_include_brings_hip_bf16_where_hip_has_it(tmp_path, cli, target):
    text = _fix_for(tmp_path, cli, target, "x.cu", BF16_FROM_CUBLAS, "5.2").read_text()
    block = (
        "#include <hipblas/hipblas.h>\n#if HIP_VERSION_MAJOR * 100 + HIP_VERSION_MINOR >= 507"
        " || CUDA2ROCM_ROCM_VERSION >= 507  // cuBLAS's header brings cuda_bf16.h\n"
        "#include <hip/hip_bf16.h>\n#endif"
    )
    assert block in text


@pytest.mark.parametrize("target", ["portable", "hip"])
def test_cublas_include_brings_hip_bf16_unguarded_when_every_target_has_it(tmp_path, cli, target):
    """hip_bf16.h is usable from ROCm 5.7 (data/facts.toml hip-bf16): a port supporting 5.7
    and later needs no release test around it."""
    text = _fix_for(tmp_path, cli, target, "x.cu", BF16_FROM_CUBLAS, "5.7").read_text()
    assert (
        "#include <hipblas/hipblas.h>\n#include <hip/hip_bf16.h>  // cuBLAS's header brings "
        "cuda_bf16.h" in text
    )
    assert "CUDA2ROCM_ROCM_VERSION >= 507" not in text


def test_no_bf16_include_for_files_without_bf16(tmp_path, cli):
    text = BF16_FROM_CUBLAS.replace("__nv_bfloat16", "double")
    assert "hip_bf16" not in _fix(tmp_path, cli, "portable", "x.cu", text).read_text()


@needs_hipcc
@pytest.mark.parametrize(
    "flags",
    [
        (),  # HIP 5.2, bf16 off: no hip_bf16.h needed, none included
        ("-DUSE_BF16", "-DCUDA2ROCM_ROCM_VERSION=602"),  # bf16 on, over the stand-in
    ],
)
@pytest.mark.parametrize("target", ["portable", "hip"])
def test_hipcc_builds_bf16_from_cublas_after_the_fix(tmp_path, cli, target, flags):
    include = _hipblas_include(tmp_path)
    if include is None:
        pytest.skip("hipBLAS headers not here (set HIPBLAS_INCLUDE)")
    path = _fix_for(tmp_path, cli, target, "x.cu", BF16_FROM_CUBLAS, "5.2")
    result = _hipcc(path, *include, f"-I{STUBS}", *flags)
    assert result.returncode == 0, result.stderr


@needs_nvcc
def test_nvcc_builds_bf16_from_cublas_after_the_portable_fix(tmp_path, cli):
    include = _cublas_include()
    if include is None:
        pytest.skip("cuBLAS headers not here (set CUBLAS_INCLUDE)")
    path = _fix(tmp_path, cli, "portable", "x.cu", BF16_FROM_CUBLAS)
    result = _nvcc(path, *include, "-DUSE_BF16")
    assert result.returncode == 0, result.stderr


# -- Thrust's CUDA execution policies (faiss: `thrust::cuda::par.on(stream)`) ------------------
THRUST = """#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/system/cuda/execution_policy.h>

void zero(float* p, int n, cudaStream_t stream) {
  thrust::fill(thrust::cuda::par.on(stream), p, p + n, 0.f);
  thrust::fill(thrust::cuda::par_nosync.on(stream), p, p + n, 1.f);
}
"""
ROCTHRUST = Path(os.environ.get("ROCTHRUST_INCLUDE", "/work/real/rocThrust-5.3.3"))


def test_portable_thrust_policies_go_through_the_compat_header(tmp_path, cli):
    path = _fix(tmp_path, cli, "portable", "t.cu", THRUST)
    text = path.read_text()
    assert "thrust::fill(CUDA2ROCM_THRUST_PAR.on(stream)" in text
    assert "CUDA2ROCM_THRUST_PAR_NOSYNC.on(stream)" in text and "thrust::cuda" not in text
    assert (
        "#include <thrust/system/hip/execution_policy.h>\n#else\n"
        "#include <thrust/system/cuda/execution_policy.h>\n#endif"
    ) in text
    header = (path.parent / "cuda2rocm_compat.h").read_text()
    assert "#  define CUDA2ROCM_THRUST_PAR thrust::hip::par\n" in header
    assert "#  define CUDA2ROCM_THRUST_PAR thrust::cuda::par\n" in header


def test_hip_target_spells_thrust_policies_as_rocthrust_does(tmp_path, cli):
    text = _fix(tmp_path, cli, "hip", "t.cu", THRUST).read_text()
    assert "thrust::hip::par.on(stream)" in text and "thrust::hip::par_nosync" in text
    assert "#include <thrust/system/hip/execution_policy.h>" in text
    assert "thrust::cuda" not in text and "system/cuda" not in text


@needs_hipcc
@pytest.mark.parametrize("target", ["portable", "hip"])
def test_hipcc_builds_thrust_policies_after_the_fix(tmp_path, cli, target):
    if not (ROCTHRUST / "thrust" / "system" / "hip" / "detail" / "par.h").is_file():
        pytest.skip("rocThrust's headers not here (set ROCTHRUST_INCLUDE)")
    path = _fix(tmp_path, cli, target, "t.cu", THRUST)
    result = _hipcc(path, "-std=c++17", f"-I{ROCTHRUST}")
    assert result.returncode == 0, result.stderr


@needs_nvcc
def test_nvcc_builds_thrust_policies_after_the_portable_fix(tmp_path, cli):
    result = _nvcc(_fix(tmp_path, cli, "portable", "t.cu", THRUST))
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(
    shutil.which("g++") is None or not Path("/usr/include/hip/hip_runtime.h").exists(),
    reason="needs g++ and HIP's headers (apt-get install libamdhip64-dev)",
)
def test_host_build_naming_the_platform_hcc_gets_the_hip_side(tmp_path):
    # A ROCm build that compiles its host files with g++ and passes only the pre-ROCm-6 name
    # of the AMD platform (`-D__HIP_PLATFORM_HCC__=1`; HIP 5.2's headers accept it) has no
    # CUDA runtime: the compatibility header must take its HIP side there.
    text = (
        "#include <cuda_runtime.h>\n"
        "inline int sync_all(cudaStream_t s) { return cudaStreamSynchronize(s) == cudaSuccess; }\n"
    )
    fixed = fix_alone(tmp_path, "portable", "host_sync.h", text)
    unit = fixed.parent / "unit.cpp"
    unit.write_text('#include "host_sync.h"\nint main() { return sync_all(nullptr); }\n')
    run = subprocess.run(
        ["g++", "-fsyntax-only", "-D__HIP_PLATFORM_HCC__=1", "-I", str(fixed.parent), str(unit)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
