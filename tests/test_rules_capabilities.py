"""Capabilities found missing on real ROCm ports: what each reports, where, and how loudly."""

from __future__ import annotations

from pathlib import Path

from cuda2rocm.catalogue import find_rule
from cuda2rocm.discover import language_of
from cuda2rocm.engine import Linter
from cuda2rocm.model import Severity
from cuda2rocm.sources import SourceFile


def _lint(rule: str, path: str, code: str):
    source = SourceFile(path, language_of(Path(path)), code.lstrip("\n"))
    return [d for d in Linter([find_rule(rule)]).lint_source(source) if not d.guarded]


def test_cuda_version_branch_is_a_note_spanning_the_skipped_body():
    found = _lint(
        "torch-version-cuda",
        "pkg/__init__.py",
        """
import torch
built = 11080
if torch.version.cuda is not None and built != -1:
    major = built // 1000
    t_major = int(torch.version.cuda.split(".")[0])
    if t_major != major:
        raise RuntimeError("mismatch")
""",
    )
    assert [(d.position.line, d.position.end_line, d.severity) for d in found] == [
        (3, 7, Severity.INFO)
    ]
    assert found[0].fix is None


def test_version_only_cuda_include_is_a_note():
    found = _lint(
        "cuda-version-macro",
        "csrc/version.cpp",
        """
#include <cuda.h>
long cuda_version() { return CUDA_VERSION; }
""",
    )
    assert sorted((d.position.line, d.severity) for d in found) == [
        (1, Severity.INFO),
        (2, Severity.ERROR),
    ]


def test_cuda_arch_test_in_device_code_spans_the_else_branch_hip_compiles():
    found = _lint(
        "cuda-arch-macro",
        "check.cuh",
        """
__host__ __device__ void check(int n, int want) {
#ifdef __CUDA_ARCH__
  assert(n == want);
#else
  if (n != want) throw_mismatch(n, want);
#endif
}
""",
    )
    assert [(d.position.line, d.position.end_line) for d in found] == [(2, 5)]


def test_grid_finding_starts_at_the_grid_declaration():
    found = _lint(
        "launch-grid-limit",
        "ops.cu",
        """
void run(float* y, long n, cudaStream_t s) {
  const dim3 blocks(
      div_round_up(n, 256));
  fill<<<blocks, 256, 0, s>>>(y, n);
}
""",
    )
    assert [(d.position.line, d.position.end_line) for d in found] == [(2, 3)]
