"""A finding at every line that must change (frontends/sites.py), not the first use per file."""

from __future__ import annotations

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.engine import Linter
from cuda2rocm.sources import SourceFile

RULES = {r.id: r for r in load_catalogue()}


def _lint(rule: str, path: str, code: str):
    found = Linter([RULES[rule]]).lint_source(SourceFile(path, "cuda", code.lstrip("\n")))
    return [d for d in found if d.rule == rule and not d.guarded]


RUNTIME = """
#include <cuda_runtime.h>
struct Pool { float* slab; cudaEvent_t done; };
void grow(Pool& p, size_t n, cudaStream_t s) {
  cudaMallocAsync(reinterpret_cast<void**>(&p.slab), n, s); cudaEventRecord(p.done, s);
  cudaStreamWaitEvent(s, p.done, 0);
#ifndef __HIP_PLATFORM_AMD__
  cudaEventQuery(p.done);
#endif
}
"""


def test_each_line_with_an_untranslated_runtime_name_is_a_finding():
    found = _lint("hip-stream", "pool/grow.cu", RUNTIME)
    # lines 2 to 5 (two names on line 4); line 7 is skipped by every HIP pass
    assert [d.position.line for d in found] == [2, 3, 4, 5]
    both = found[2].message
    assert "`cudaMallocAsync` is `hipMallocAsync`" in both and "`cudaEventRecord`" in both
    # the portable fix is the same include at every site: the fixer applies it once
    assert len({d.fix.edits for d in found if d.fix}) == 1


def test_hip_target_renames_the_names_of_each_line():
    from cuda2rocm.fixer import fix_source

    source = SourceFile("pool/grow.cu", "cuda", RUNTIME.lstrip("\n"))
    linter = Linter([RULES["hip-stream"]], target="hip")
    found = [d for d in linter.lint_source(source) if not d.guarded]
    assert found[2].fix.description == "rename to hipMallocAsync, hipEventRecord"
    outcome = fix_source(source, linter.lint_source, False, linter.syntax_error)
    fixed = outcome.fixed.splitlines()
    assert fixed[3].strip().startswith("hipMallocAsync(") and "hipEventRecord(p.done" in fixed[3]
    assert "cudaEventQuery" in fixed[6]  # a line no HIP pass compiles is left alone


DNN = """
#include <torch/extension.h>
void pick(cudnnHandle_t h, cudnnTensorDescriptor_t* d) {
  cudnnCreateTensorDescriptor(d);
  cudnnSetStream(h, nullptr);
  cudnnSetStream(h, nullptr);
}
void note(cublasHandle_t h) { cublasSetStream(h, nullptr); }
void again(cublasHandle_t h) { cublasSetStream(h, nullptr); }
"""


def test_cudnn_is_reported_at_each_line_and_hipified_cublas_once():
    found = _lint("vendor-blas-dnn", "ext/pick.cu", DNN)
    dnn = [d for d in found if "cuDNN" in d.message]
    # cudnnHandle_t and cudnnTensorDescriptor_t (line 2), then lines 3, 4, 5
    assert sorted({d.position.line for d in dnn}) == [2, 3, 4, 5]
    notes = [d for d in found if d.severity.value == "info"]
    # torch's hipify maps cuBLAS: nothing changes at the uses, one note per name
    assert [d.message.split("`")[1] for d in notes] == ["cublasHandle_t"]
    assert "(2 uses)" in notes[0].message


def test_names_the_file_maps_itself_are_not_sites():
    code = """
#if defined(USE_HIP_BACKEND)
#define cudaStream_t hipStream_t
#define cudaStreamQuery hipStreamQuery
#endif
bool idle(cudaStream_t s) { return cudaStreamQuery(s) == cudaSuccess; }
"""
    found = _lint("hip-stream", "vendor/backend.h", code)
    assert [d.position.line for d in found] == [5]
    assert "`cudaSuccess`" in found[0].message and "cudaStreamQuery" not in found[0].message
