"""cuBLASLt -> hipBLASLt and hipBLAS 2.x names, mapped from the ROCm release that has them
(issue 15: llm.c's `common.h`: `cublasLtHandle_t`, `cublasLtCreate`, `cublasComputeType_t`,
`CUBLAS_COMPUTE_32F_FAST_TF32`, `cublasMath_t`, `cublasSetMathMode`).

The rows (data/blas_rocm6_names.tsv) come from tools/gen_blas_rocm6_names.py, which checks
HIPIFY's mappings against ROCm/hipBLAS and ROCm/hipBLASLt at tags rocm-6.0.0 ... 6.2.2: the
compatibility header maps them under `CUDA2ROCM_ROCM_VERSION` (HIP's version by default), so a
HIP 5.2 build leaves them alone. hipcc builds the fixed fixture over bench/hip52_stubs'
hipBLASLt stand-in (HIP 5.2 has no hipBLASLt), the release named with -DCUDA2ROCM_ROCM_VERSION.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from test_cublas_mapping import _hipblas_include, nvcc_builds

from cuda2rocm import names

STUBS = ROOT / "bench" / "hip52_stubs"
LT = """#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cublasLt.h>

static cublasLtHandle_t lt_handle;
static cublasComputeType_t compute_type;

cublasStatus_t setup(cublasHandle_t handle, bool tf32) {
  compute_type = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasMath_t mode = tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  cublasStatus_t status = cublasSetMathMode(handle, mode);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  return cublasLtCreate(&lt_handle);
}

cublasStatus_t describe(int m, int n, cublasLtMatmulDesc_t* desc, cublasLtMatrixLayout_t* out) {
  cublasStatus_t status = cublasLtMatmulDescCreate(desc, compute_type, CUDA_R_32F);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  cublasOperation_t t = CUBLAS_OP_T;
  cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                 sizeof(epilogue));
  return cublasLtMatrixLayoutCreate(out, CUDA_R_32F, m, n, m);
}

int pick(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, size_t workspace) {
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &workspace, sizeof(workspace));
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(lt_handle, desc, a, a, a, a, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  return found && result.state == CUBLAS_STATUS_SUCCESS ? 1 : 0;
}
"""
#: cuda name -> (hip name, first ROCm release): hipBLASLt 0.6 (ROCm 6.0) took hipDataType and
#: hipBLAS 2.0's hipblasComputeType_t; hipBLAS 2.1 (ROCm 6.1) added the math mode; HIP 5.2's
#: library_types.h has HIP_R_32F (= CUDA_R_32F = 0), HIP 5.5's HIP_R_16BF (= 14).
RELEASES = {
    "cublasLtHandle_t": ("hipblasLtHandle_t", "6.0"),
    "cublasLtCreate": ("hipblasLtCreate", "6.0"),
    "cublasLtMatmulDescCreate": ("hipblasLtMatmulDescCreate", "6.0"),
    "cublasLtMatmul": ("hipblasLtMatmul", "6.0"),
    "CUBLASLT_MATMUL_DESC_EPILOGUE": ("HIPBLASLT_MATMUL_DESC_EPILOGUE", "6.0"),
    "cublasComputeType_t": ("hipblasComputeType_t", "6.0"),
    "CUBLAS_COMPUTE_32F_FAST_TF32": ("HIPBLAS_COMPUTE_32F_FAST_TF32", "6.0"),
    "cublasMath_t": ("hipblasMath_t", "6.1"),
    "cublasSetMathMode": ("hipblasSetMathMode", "6.1"),
    "CUBLAS_TF32_TENSOR_OP_MATH": ("HIPBLAS_TF32_TENSOR_OP_MATH", "6.1"),
    "cudaDataType": ("hipDataType", ""),
    "CUDA_R_32F": ("HIP_R_32F", ""),
    "CUDA_R_16BF": ("HIP_R_16BF", "5.5"),
}


@pytest.mark.parametrize(("cuda", "expected"), sorted(RELEASES.items()))
def test_names_carry_the_release_that_has_them(cuda, expected):
    row = names.api_name(cuda)
    assert row is not None and row.supported
    assert (row.hip, row.since) == expected


@pytest.mark.parametrize(
    "cuda",
    [
        "CUBLASLT_MATMUL_DESC_SCALE_TYPE",  # hipBLASLt 0.6-0.8 has no such attribute
        "cublasLtMatmulAlgoInit",  # HIPIFY: unsupported
        "CUBLASLT_MATMUL_DESC_FAST_ACCUM",  # HIPIFY: unsupported
    ],
)
def test_names_hipblaslt_lacks_stay_unmapped(cuda):
    assert names.api_name(cuda) is None


@pytest.fixture
def fixed(fixed_file, tmp_path):
    """A port that supports ROCm 5.2 and later (its configuration says so): the names hipBLAS
    spells from 6.0 / 6.1 are mapped under a test of their release."""
    (tmp_path / "cuda2rocm.toml").write_text('rocm-version = "5.2"\n')
    return lambda target: fixed_file("lt.cu", LT, target)


def _block(header: str, release: int) -> str:
    pattern = rf"#if CUDA2ROCM_ROCM_VERSION >= {release}\n(.*?)#endif  // ROCm "
    match = re.search(pattern, header, re.S)
    assert match, f"no block for {release}"
    return match[1]


def test_portable_header_maps_them_under_their_release(fixed):
    path = fixed("portable")
    assert "cublasLtCreate(&lt_handle)" in path.read_text()  # the source keeps CUDA spellings
    assert "#include <hipblaslt/hipblaslt.h>\n#else\n#include <cublasLt.h>" in path.read_text()
    header = (path.parent / "cuda2rocm_compat.h").read_text()
    hip_branch = header.split("#if CUDA2ROCM_HIP", 1)[1].split("\n#else\n", 1)[0]
    assert "HIP_VERSION_MAJOR * 100 + HIP_VERSION_MINOR" in hip_branch
    rocm60, rocm61 = _block(hip_branch, 600), _block(hip_branch, 601)
    for name in ("cublasLtCreate", "cublasComputeType_t", "CUBLAS_COMPUTE_32F_FAST_TF32"):
        assert f"#define {name} {RELEASES[name][0]}\n" in rocm60
    for name in ("cublasSetMathMode", "cublasMath_t", "CUBLAS_TF32_TENSOR_OP_MATH"):
        assert f"#define {name} {RELEASES[name][0]}\n" in rocm61
    assert "#define CUDA_R_32F HIP_R_32F\n" in hip_branch.split("CUDA2ROCM_ROCM_VERSION", 1)[0]


def test_hip_target_renames_them_and_says_from_which_release(fixed, tmp_path, cli):
    text = fixed("hip").read_text()
    for cuda, (hip, _) in RELEASES.items():
        if re.search(rf"\b{cuda}\b", LT):
            assert re.search(rf"\b{hip}\b", text) and not re.search(rf"\b{cuda}\b", text), cuda
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "lt.cu").write_text(LT)
    report = cli(
        "lint", "--no-cache", "--select", "hip-stream", "--format", "json", str(tmp_path / "again")
    ).stdout
    # The full message (the text output shows each finding's short line).
    found = "\n".join(d["message"] for d in json.loads(report)["diagnostics"])
    assert "`cublasLtCreate` is `hipblasLtCreate` in hipBLASLt (ROCm 6.0 and later)" in found
    assert "`cublasSetMathMode` is `hipblasSetMathMode` in hipBLAS (ROCm 6.1 and later)" in found


def _hipcc(path: Path, flags: list[str], *extra: str) -> subprocess.CompletedProcess:
    cmd = ["hipcc", "--offload-arch=gfx90a", "-x", "hip", *flags, *extra, str(path)]
    env = dict(os.environ, HIP_PLATFORM="amd")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


def test_hip_version_selects_the_mappings(fixed, tmp_path):
    """HIP 5.2 (installed) maps none of the ROCm 6 names; naming 6.0 maps those of 6.0 only."""
    if shutil.which("hipcc") is None:
        pytest.skip("hipcc not installed")
    folder = fixed("portable").parent
    probe = folder / "probe.cu"
    probe.write_text(
        '#include "cuda2rocm_compat.h"\nHIP=HIP_VERSION_MAJOR;\n'
        "a=cublasLtCreate; b=cublasSetMathMode; c=CUDA_R_32F;\n"
    )
    plain = _hipcc(probe, [], "-E", "--cuda-host-only")
    assert plain.returncode == 0, plain.stderr
    if "HIP=5;" not in plain.stdout:
        pytest.skip("this check is written for a HIP 5 install")
    assert "a=cublasLtCreate; b=cublasSetMathMode; c=HIP_R_32F;" in plain.stdout
    named = _hipcc(probe, [], "-E", "--cuda-host-only", "-DCUDA2ROCM_ROCM_VERSION=600")
    assert "a=hipblasLtCreate; b=cublasSetMathMode; c=HIP_R_32F;" in named.stdout


@pytest.mark.parametrize("target", ["portable", "hip"])
def test_hipcc_builds_the_fixed_file_over_rocm6_declarations(fixed, tmp_path, target):
    """Over the stand-in for hipBLASLt 0.8 / hipBLAS 2.2 (ROCm 6.2) declarations."""
    if shutil.which("hipcc") is None:
        pytest.skip("hipcc not installed")
    flags = _hipblas_include(tmp_path)
    if flags is None:
        pytest.skip("hipBLAS headers not here (set HIPBLAS_INCLUDE)")
    path = fixed(target)
    result = _hipcc(
        path, [*flags, f"-I{STUBS}"], "-DCUDA2ROCM_ROCM_VERSION=602", "-c", "-o", f"{path}.o"
    )
    assert result.returncode == 0, result.stderr


def test_nvcc_builds_the_portable_file(fixed):
    nvcc_builds(fixed("portable"))
