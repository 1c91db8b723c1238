"""Severity decisions that the catalogue examples cannot express (they count findings only):
a finding that asks for no ROCm change is info, one that breaks stays an error or warning."""

from __future__ import annotations

import pytest

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.engine import Linter
from cuda2rocm.model import Severity
from cuda2rocm.sources import SourceFile

RULES = {r.id: r for r in load_catalogue()}


def _severities(rule: str, path: str, language: str, code: str) -> list[tuple[int, Severity]]:
    found = Linter([RULES[rule]]).lint_source(SourceFile(path, language, code.lstrip("\n")))
    return sorted((d.position.line, d.severity) for d in found if d.rule == rule and not d.guarded)


SHELL = """
import os
import subprocess

os.system("nvidia-smi")
os.system("nvcc --version")
subprocess.run("nvidia-smi -L", shell=True)
subprocess.run(["nvidia-smi", "-L"])
subprocess.run(["nvcc", "--version"], check=False)
rc = os.system("nvidia-smi")
subprocess.run("nvcc -V", shell=True, check=True)
out = subprocess.check_output("nvidia-smi", shell=True)
subprocess.run("nvidia-smi")
"""


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            "nvml-smi",
            [(4, "info"), (6, "info"), (7, "error"), (9, "error"), (11, "error"), (12, "error")],
        ),
        ("nvcc-invocation", [(5, "info"), (8, "error"), (10, "error")]),
    ],
)
def test_shell_call_that_only_prints_is_info(rule, expected):
    found = _severities(rule, "probe.py", "python", SHELL)
    assert [(line, sev.value) for line, sev in found] == expected


MACROS = """
__device__ float f(float x) {
#if __CUDA_ARCH__ >= 530
  return rsqrtf(x);
#else
  return 1.0f / sqrtf(x);
#endif
}
__device__ float g(float x) {
#if __CUDA_ARCH__ >= 800
  x = __fmaf_rn(x, x, x);
#endif
  return x;
}
#if CUDART_VERSION >= 12010
constexpr int a = 1;
#else
constexpr int a = 2;
#endif
#if CUDART_VERSION < 13000
constexpr int b = 1;
#elif defined(SOMETHING)
constexpr int b = 2;
#endif
#if CUDART_VERSION >= 11000
constexpr int c = 1;
#endif
#if CUDART_VERSION < 9000
#error "too old"
#else
constexpr int d = 1;
#endif
"""


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("cuda-arch-macro", [(2, "info"), (9, "warning")]),
        ("cuda-version-macro", [(14, "info"), (19, "info"), (24, "warning"), (27, "warning")]),
    ],
)
def test_arch_and_version_tests_with_a_fallback_side_are_info(rule, expected):
    found = _severities(rule, "k.cu", "cuda", MACROS)
    assert [(line, sev.value) for line, sev in found] == expected


def test_an_else_of_empty_stub_kernels_is_no_fallback():
    code = """
#if __CUDA_ARCH__ >= 900
template <int N>
__global__ void reduce_mc(float* p) { p[0] = N; }
#else
template <int N>
__global__ void reduce_mc(float* p) {}
#endif
"""
    found = _severities("cuda-arch-macro", "k.cu", "cuda", code)
    assert [(line, sev.value) for line, sev in found] == [(1, "warning")]


CAPABILITY = """
import torch

major, minor = torch.cuda.get_device_capability()
if major < 8:
    raise RuntimeError("needs compute capability 8.0")
cap = torch.cuda.get_device_capability()
props = torch.cuda.get_device_properties(0)
fast = props.major * 10 + props.minor >= 80
hopper = cap >= (9, 0)
ampere_only = (8, 0) <= cap < (9, 0)
newer_than_ampere = major > 8
"""


def test_capability_tests_rocm_answers_as_an_a100_are_info():
    """ROCm reports GFX IP 9.0 and later: a test that every such value answers as (8, 0) does
    gives ROCm the Ampere path (info); one that tells them apart is a warning."""
    assert _severities("device-capability-gate", "gate.py", "python", CAPABILITY) == [
        (4, Severity.INFO),
        (8, Severity.INFO),
        (9, Severity.WARNING),
        (10, Severity.WARNING),
        (11, Severity.WARNING),
    ]


def test_capability_gate_in_a_test_or_benchmark_is_info():
    """In a test module or benchmark the gate only selects which cases run; the same code in a
    library module stays a warning."""
    code = 'import torch\nis_sm90 = torch.cuda.get_device_capability("cuda") == (9, 0)\n'
    for path in ("tests/test_attn.py", "benchmarks/run_attn.py", "pkg/attn_test.py"):
        assert _severities("device-capability-gate", path, "python", code) == [
            (2, Severity.INFO)
        ], path
    assert _severities("device-capability-gate", "pkg/attn.py", "python", code) == [
        (2, Severity.WARNING)
    ]


DEVICE_PASS = """__device__ float inv_sqrt(float x) {
#ifdef __CUDA_ARCH__
  return rsqrtf(x);
#else
  return 1.0f / sqrtf(x);
#endif
}
__device__ void bump(int *counter) {
#ifdef __CUDA_ARCH__
  atomicAdd(counter, 1);
#else
  *counter += 1;
#endif
}
__host__ __device__ void check(int n) {
#ifdef __CUDA_ARCH__
  assert(n > 0);
#else
  TORCH_CHECK(n > 0, "bad n");
#endif
}
"""


def test_device_pass_test_with_a_portable_else_is_info():
    """HIP's device pass compiles the `#else`: portable math there is a note; an atomic the
    `#else` drops, or host-only code in it, stays a warning."""
    assert _severities("cuda-arch-macro", "k.cu", "cuda", DEVICE_PASS) == [
        (2, Severity.INFO),
        (9, Severity.WARNING),
        (16, Severity.WARNING),
    ]
