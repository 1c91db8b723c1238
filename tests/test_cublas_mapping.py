"""cuBLAS -> hipBLAS for sources no hipify step sees (issue 15: faiss's `cublasHandle_t`).

One fixture of ours per mapping class: types (handle, status, operation), enums, functions
(`cublasCreate`, `cublasSetStream`) and the `_v2` spellings cublas_v2.h defines
(`cublasSgemm_v2` -> `hipblasSgemm`), the header (in place, hipBLAS's install layout), and what
stays unmapped (`cublasGemmEx`: its hipBLAS form changed between versions). hipcc compiles the
results when hipcc and hipBLAS's headers are here (HIPBLAS_INCLUDE: a folder with hipblas.h, such
as ROCm/hipBLAS's library/include; or an installed include/hipblas/hipblas.h); nvcc when cuBLAS's
headers are (CUBLAS_INCLUDE, or nvcc's own include folder).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

from cuda2rocm import names

STUBS = ROOT / "bench" / "hip52_stubs" / "hipblas"
GEMM = """#include <cuda_runtime.h>
#include <cublas_v2.h>

struct Gemm {
  cublasHandle_t handle;
};

cublasStatus_t make(Gemm& g, cudaStream_t stream) {
  cublasStatus_t status = cublasCreate(&g.handle);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  return cublasSetStream(g.handle, stream);
}

void run(Gemm& g, int n, const float* a, const float* b, float* c) {
  const float one = 1.f, zero = 0.f;
  cublasOperation_t t = CUBLAS_OP_T;
  cublasSgemm_v2(g.handle, t, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
  cublasDestroy(g.handle);
}
"""
MAPPED = {
    "cublasHandle_t": "hipblasHandle_t",  # types
    "cublasStatus_t": "hipblasStatus_t",
    "cublasOperation_t": "hipblasOperation_t",
    "CUBLAS_STATUS_SUCCESS": "HIPBLAS_STATUS_SUCCESS",  # enums
    "CUBLAS_OP_T": "HIPBLAS_OP_T",
    "cublasCreate": "hipblasCreate",  # functions
    "cublasSetStream": "hipblasSetStream",
    "cublasSgemm_v2": "hipblasSgemm",  # cublas_v2.h's _v2 names
}


def _hipblas_include(tmp_path: Path) -> list[str] | None:
    """-I flags under which `<hipblas/hipblas.h>` resolves, or None."""
    for root in ("/opt/rocm/include", "/usr/include"):
        if (Path(root) / "hipblas" / "hipblas.h").is_file():
            return [f"-I{root}"]
    source = os.environ.get("HIPBLAS_INCLUDE", "/work/real/hipBLAS-5.2.3/library/include")
    if not (Path(source) / "hipblas.h").is_file():
        return None
    folder = tmp_path / "hipblas-include" / "hipblas"  # laid out as ROCm installs it
    folder.mkdir(parents=True)
    shutil.copy(Path(source) / "hipblas.h", folder)
    for stub in STUBS.glob("*.h"):  # the two headers hipBLAS's CMake generates
        shutil.copy(stub, folder)
    return [f"-I{folder.parent}"]


def _cublas_include() -> list[str] | None:
    nvcc = shutil.which("nvcc")
    for folder in (os.environ.get("CUBLAS_INCLUDE", "/work/real/cublas-headers"),):
        if (Path(folder) / "cublas_v2.h").is_file():
            return [f"-I{folder}"]
    if nvcc and (Path(nvcc).resolve().parent.parent / "include" / "cublas_v2.h").is_file():
        return []
    return None


@pytest.fixture
def fixed(fixed_file):
    return lambda target: fixed_file("gemm.cu", GEMM, target)


@pytest.mark.parametrize(("cuda", "hip"), sorted(MAPPED.items()))
def test_cublas_names_map_to_hipblas(cuda, hip):
    row = names.api_name(cuda)
    assert row is not None and row.supported and row.hip == hip and row.library == "blas"


@pytest.mark.parametrize(
    "cuda", ["cublasGemmEx", "cublasCgemm", "cublasGemmStridedBatchedEx", "CUDA_R_8F_E4M3"]
)
def test_names_whose_hipblas_form_changed_are_not_renamed(cuda):
    """HIPIFY maps them to hipBLAS 2.x's `_v2` bridge (hipblasGemmEx_v2, hipblasCgemm_v2), whose
    plain names take hipblasDatatype_t / hipblasComplex before hipBLAS 3.0; CUDA's fp8 E4M3 is
    not HIP 6.2's FNUZ variant."""
    assert names.api_name(cuda) is None


def test_mapped_hipblas_names_are_declared_in_hipblas_h():
    """Every cuBLAS row's hipBLAS name is in hipBLAS's header (the generator's check, kept)."""
    source = Path(os.environ.get("HIPBLAS_INCLUDE", "/work/real/hipBLAS-5.2.3/library/include"))
    if not (source / "hipblas.h").is_file():
        pytest.skip("hipBLAS headers not here (set HIPBLAS_INCLUDE)")
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", (source / "hipblas.h").read_text(), flags=re.S)
    declared = set(re.findall(r"\b\w+\b", text))
    versioned = (ROOT / "cuda2rocm" / "data" / "blas_rocm6_names.tsv").read_text()
    later = {line.split("\t", 1)[0] for line in versioned.splitlines()}  # test_cublaslt_mapping
    rows = [
        r
        for r in names.table().values()
        if r.library == "blas" and r.kind != "header" and r.cuda not in later
    ]
    assert len(rows) > 100
    assert [r.cuda for r in rows if r.hip not in declared] == []


def test_hip_target_renames_every_class(fixed):
    text = fixed("hip").read_text()
    assert "#include <hipblas/hipblas.h>" in text and "cublas_v2.h" not in text
    for cuda, hip in MAPPED.items():
        assert re.search(rf"\b{hip}\b", text), hip
        assert not re.search(rf"\b{cuda}\b", text), cuda


def test_portable_target_maps_them_in_the_compat_header(fixed):
    path = fixed("portable")
    text = path.read_text()
    assert "#include <hipblas/hipblas.h>\n#else\n#include <cublas_v2.h>\n#endif" in text
    assert "cublasHandle_t handle;" in text  # the source keeps CUDA spellings
    header = (path.parent / "cuda2rocm_compat.h").read_text()
    hip_branch = header.split("#if CUDA2ROCM_HIP", 1)[1].split("#else", 1)[0]
    for cuda, hip in MAPPED.items():
        assert f"#define {cuda} {hip}\n" in hip_branch


def test_unmapped_cublas_names_stay_reported_without_a_fix(tmp_path, cli):
    (tmp_path / "ex.cu").write_text(
        "#include <cublas_v2.h>\nvoid f(cublasHandle_t h) {\n"
        "  cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, 0, 0, CUDA_R_32F, 1, 0,\n"
        "               CUDA_R_32F, 1, 0, 0, CUDA_R_32F, 1, CUBLAS_COMPUTE_32F,\n"
        "               CUBLAS_GEMM_DEFAULT);\n}\n"
    )
    done = cli("fix", "--unsafe", "--exit-zero", "--target", "hip", str(tmp_path))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "ex.cu").read_text()
    assert "hipblasHandle_t h" in text and "HIPBLAS_GEMM_DEFAULT" in text
    assert "cublasGemmEx(" in text
    # its arguments have hipBLAS 2.x names (ROCm 6.0): renamed; the call stays reported
    assert "HIPBLAS_COMPUTE_32F" in text and "HIP_R_32F" in text
    found = cli("lint", "--no-cache", "--select", "vendor-blas-dnn", str(tmp_path)).stdout
    assert "`cublasGemmEx`" in found


def _hipcc(path: Path, flags: list[str]) -> subprocess.CompletedProcess:
    cmd = ["hipcc", "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-x", "hip", *flags]
    cmd += ["-c", str(path), "-o", f"{path}.o"]
    env = dict(os.environ, HIP_PLATFORM="amd")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.parametrize("target", ["portable", "hip"])
def test_hipcc_builds_the_fixed_cublas_file(fixed, tmp_path, target):
    if shutil.which("hipcc") is None:
        pytest.skip("hipcc not installed")
    flags = _hipblas_include(tmp_path)
    if flags is None:
        pytest.skip("hipBLAS headers not here (set HIPBLAS_INCLUDE)")
    result = _hipcc(fixed(target), flags)
    assert result.returncode == 0, result.stderr


def nvcc_builds(path: Path) -> None:
    """nvcc compiles `path` against the cuBLAS headers (skipped where they are not)."""
    flags = _cublas_include()
    if shutil.which("nvcc") is None or flags is None:
        pytest.skip("nvcc or cuBLAS headers not here (set CUBLAS_INCLUDE)")
    cmd = ["nvcc", "-arch=sm_80", *flags, "-c", str(path), "-o", f"{path}.o"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def test_nvcc_builds_the_portable_cublas_file(fixed):
    nvcc_builds(fixed("portable"))
