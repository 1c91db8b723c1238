"""Generate cuda2rocm/data/blas_rocm6_names.tsv: cuBLAS / cuBLASLt / library-type names whose
HIP spelling exists only from some ROCm release, each with that release.

hipBLAS 5.2 names are in cuda_names.tsv (tools/gen_cuda_names.py). This adds HIPIFY's rows
(`both` / `hipify-*` sources, status supported) that the real headers confirm, release by
release, at the tags of the ROCm repositories (fetched bare mirrors, never committed):

- hipBLASLt (ROCm/hipBLASLt library/include/hipblaslt.h) at rocm-6.0.0, 6.1.0, 6.2.0, 6.2.2 and
  7d9fb68 (0.11, after hipblasComputeType_t moved to ROCm/hipBLAS-common 9666c57). Before 6.0
  (hipBLASLt 0.1-0.4, ROCm 5.5-5.7) its calls took hipblasDatatype_t and hipblasLtComputeType_t,
  so a rename of `cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F)` holds from 6.0.
- hipBLAS (ROCm/hipBLAS library/include/hipblas.h) at the same tags and 27cf7be (2.4 dev):
  hipblasComputeType_t (hipBLAS 2.0, ROCm 6.0), hipblasMath_t / hipblasSetMathMode (2.1, 6.1),
  the ILP64 `_64` calls. Never the `_v2` names HIPIFY maps cublasGemmEx and the complex calls
  to: they are hipBLAS 2.x's bridge (hipBLAS 3.0, ROCm 7.0, moved the plain names to
  hipDataType / hipComplex) and this project cannot check ROCm 7's header.
- library data types (cudaDataType, CUDA_R_32F, ...): ROCm/HIP include/hip/library_types.h at
  rocm-5.2.0 ... rocm-6.2.0, kept where the enumerator has CUDA's value (CUDA 13's
  library_types.h): HIP_R_16F/32F/64F and HIP_C_* since HIP 5.2, HIP_R_16BF and the integer
  types since 5.5.

A function is kept from a release on only when its parameter types, with CUDA's types mapped by
HIPIFY's table, equal the HIP prototype's at that release and every later one (CUDA's from
cuBLAS's cublas_api.h / cublasLt.h). An attribute enumerator (`CUBLASLT_MATMUL_DESC_*`,
`*_MATRIX_LAYOUT_*`, `*_MATMUL_PREF_*`) is kept only when both headers document the same value
type (`int32_t`, `uint64_t`, a pointer) for it.

Usage: python tools/inputs.py fetch && python tools/gen_blas_rocm6_names.py  (the inputs, at
the revisions tools/inputs.toml pins; env CUBLAS_INCLUDE / CUDA_INCLUDE override the NVIDIA
header folders)
"""

from __future__ import annotations

import csv
import os
import re
import sys
from pathlib import Path

import inputs  # tools/inputs.py: the pinned inputs

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path(
    os.environ.get("CUDA2ROCM_REFERENCE", ROOT.parent / "shared" / "reference" / "cuda_to_hip.tsv")
)
CUBLAS = Path(os.environ.get("CUBLAS_INCLUDE", inputs.include("nvidia-cublas-cu12")))
CUDA_INCLUDE = Path(os.environ.get("CUDA_INCLUDE", inputs.include("nvidia-cuda-runtime-cu12")))
TARGET = ROOT / "cuda2rocm" / "data" / "blas_rocm6_names.tsv"
GENERATED = ROOT / "cuda2rocm" / "data" / "cuda_names.tsv"
UNRELEASED = "unreleased"
#: (ROCm release, hipBLAS revision, hipBLASLt revision); the last is the newest checked.
BLAS_TAGS = [
    ("6.0", "rocm-6.0.0", "rocm-6.0.0"),
    ("6.1", "rocm-6.1.0", "rocm-6.1.0"),
    ("6.2", "rocm-6.2.0", "rocm-6.2.0"),
    ("6.2", "rocm-6.2.2", "rocm-6.2.2"),
    # hipBLAS 27cf7be, hipBLASLt 7d9fb68, hipBLAS-common 9666c57: newer than any release checked,
    # so a name must still be there; one first seen here is left out (not yet released)
    (
        UNRELEASED,
        "27cf7beb9ded25c07e0899952adaab13b79bee79",
        "7d9fb683db25941d38c5f89749a2c26acc493992",
    ),
]
HIPBLAS_COMMON = "9666c576c4b4bb60cde638a40646295906f6b736"
HIP_TAGS = [(f"5.{m}", f"rocm-5.{m}.0") for m in range(2, 8)] + [
    (f"6.{m}", f"rocm-6.{m}.0") for m in range(3)
]
HIPIFY_SOURCES = {"both", "hipify-docs", "hipify-src"}
LIBRARY_TYPE = re.compile(r"^(cudaDataType(_t)?|CUDA_[RC]_\w+)$")
ATTRIBUTE = re.compile(r"^CUBLASLT_(MATMUL_DESC|MATRIX_LAYOUT|MATMUL_PREF)_")
COLUMNS = ("cuda_name", "hip_name", "kind", "library", "status", "hip_name_in_hip622", "since")
_IGNORED = {"const", "struct", "enum", "CUBLASAPI", "CUBLASWINAPI", "HIPBLAS_EXPORT"}


def uncomment(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def identifiers(text: str) -> set[str]:
    return set(re.findall(r"\b[A-Za-z_]\w*\b", uncomment(text)))


def prototypes(text: str) -> dict[str, str]:
    """name -> parameter text of each function declaration (first one wins)."""
    found: dict[str, str] = {}
    for m in re.finditer(r"\b(\w+)\s*\(([^;{}()]*)\)\s*;", uncomment(text)):
        found.setdefault(m[1], m[2])
    return found


def parameter_types(params: str, mapping: dict[str, str]) -> list[str]:
    """Each parameter's type (names dropped, `[]` as `*`, `const` ignored), CUDA types mapped."""
    params = params.strip()
    if params in ("", "void"):
        return []
    out = []
    for param in params.split(","):
        tokens = [t for t in re.findall(r"\w+|\*|&", param.replace("[]", "*")) if t not in _IGNORED]
        if len(tokens) > 1 and re.match(r"\w+$", tokens[-1]):
            tokens = tokens[:-1]  # the parameter's name
        out.append(" ".join(mapping.get(t, t) for t in tokens))
    return out


def enum_values(text: str) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"\b(\w+)\s*=\s*(\d+)", uncomment(text))}


_VALUE_TYPE = r"(u?int\d+_t|float|double|void\s*\*|const void\s*\*)"


def cuda_attribute_types(text: str) -> dict[str, str]:
    """cublasLt.h documents each attribute's type in the comment before it: `int32_t, default`."""
    found = {}
    for m in re.finditer(r"/\*\*((?:(?!\*/).)*)\*/\s*(CUBLASLT_\w+)\s*=", text, flags=re.S):
        kinds = re.findall(_VALUE_TYPE + r"\s*(?:,|\n|$)", m[1])
        if kinds:
            found[m[2]] = _value_type(kinds[-1])
    return found


def hip_attribute_types(text: str) -> dict[str, str]:
    """hipblaslt.h documents it after the enumerator: `/**<... Data Type: int32_t */`."""
    found = {}
    for m in re.finditer(r"\b(HIPBLASLT_\w+)\s*=\s*\d+\s*,?\s*/\*\*<((?:(?!\*/).)*)\*/", text):
        kind = re.search(r"Type:\s*" + _VALUE_TYPE, m[2])
        if kind:
            found[m[1]] = _value_type(kind[1])
    return found


def _value_type(text: str) -> str:
    return "pointer" if "*" in text else text


def first_release(checks: list[tuple[str, bool]]) -> str | None:
    """The first release from which every later check holds (None when the newest fails)."""
    since = None
    for release, ok in checks:
        if not ok:
            since = None
        elif since is None:
            since = release
    return since


def main() -> int:
    with SOURCE.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    mapping = {r["cuda_name"]: r["hip_name"] for r in rows if r["hip_name"]}
    mapping.update({"cudaStream_t": "hipStream_t", "cudaDataType": "hipDataType"})
    have = {line.split("\t", 1)[0] for line in GENERATED.read_text().splitlines()}
    cuda_text = "".join((CUBLAS / n).read_text() for n in ("cublas_api.h", "cublasLt.h"))
    cuda_protos = prototypes(cuda_text)
    cuda_attrs = cuda_attribute_types((CUBLAS / "cublasLt.h").read_text())
    cuda_values = enum_values((CUDA_INCLUDE / "library_types.h").read_text())
    common = inputs.show("ROCm/hipBLAS-common", HIPBLAS_COMMON, "library/include/hipblas-common.h")
    releases = []
    for release, blas_rev, lt_rev in BLAS_TAGS:
        lt = inputs.show("ROCm/hipBLASLt", lt_rev, "library/include/hipblaslt.h")
        blas = inputs.show("ROCm/hipBLAS", blas_rev, "library/include/hipblas.h")
        if not lt or not blas:
            print(
                f"hipBLAS {blas_rev} / hipBLASLt {lt_rev}: not here (python tools/inputs.py fetch)",
                file=sys.stderr,
            )
            return 2
        text = lt + blas + (common if release == UNRELEASED else "")
        releases.append((release, identifiers(text), prototypes(text), hip_attribute_types(lt)))
    hip_types = []
    for release, rev in HIP_TAGS:
        text = inputs.show("ROCm/HIP", rev, "include/hip/library_types.h")
        hip_types.append((release, identifiers(text), enum_values(text)))

    keep = []
    for r in rows:
        name, hip = r["cuda_name"], r["hip_name"]
        if (
            r["library"] not in ("blas", "blaslt")
            or r["kind"] == "header"
            or r["status"] == "unsupported"
            or r["source"] not in HIPIFY_SOURCES
            or not hip
            or name in have
            or "_v2" in hip
        ):
            continue
        if LIBRARY_TYPE.match(name):
            checks = [
                (
                    release,
                    hip in declared
                    and (r["kind"] == "type" or values.get(hip) == cuda_values.get(name, -1)),
                )
                for release, declared, values in hip_types
            ]
        elif r["kind"] == "function":
            cuda = (
                cuda_protos.get(name)
                or cuda_protos.get(f"{name}_v2")
                or cuda_protos.get(name[:-3] + "_v2_64")
            )
            if cuda is None:
                continue
            want = parameter_types(cuda, mapping)
            checks = [
                (release, hip in protos and parameter_types(protos[hip], {}) == want)
                for release, _, protos, _ in releases
            ]
        else:
            checks = []
            for release, declared, _, attrs in releases:
                ok = hip in declared
                if ok and ATTRIBUTE.match(name):
                    ok = cuda_attrs.get(name) is not None and attrs.get(hip) == cuda_attrs[name]
                checks.append((release, ok))
        since = first_release(checks)
        if since not in (None, UNRELEASED):
            keep.append({**r, "since": since, "hip_name_in_hip622": ""})
    keep.sort(key=lambda r: (r["library"], r["cuda_name"]))
    lines = [
        "# generated by tools/gen_blas_rocm6_names.py from cuda_to_hip.tsv, checked against the",
        "# headers of ROCm/hipBLAS, ROCm/hipBLASLt (rocm-6.0.0..6.2.2, HEAD), ROCm/hipBLAS-common",
        "# and ROCm/HIP library_types.h (rocm-5.2.0..6.2.0); `since`: the first ROCm release whose",
        "# header declares the HIP name with CUDA's parameter types / value; do not edit",
        "\t".join(COLUMNS),
    ]
    lines += ["\t".join(r[c] for c in COLUMNS) for r in keep]
    TARGET.write_text("\n".join(lines) + "\n", encoding="utf-8")
    by = {}
    for r in keep:
        by[(r["library"], r["since"])] = by.get((r["library"], r["since"]), 0) + 1
    print(f"{TARGET}: {len(keep)} rows {dict(sorted(by.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
