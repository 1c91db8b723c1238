"""cuda-version-macro's unsafe rewrite that lets ROCm take a version branch (`|| defined(__HIP__)`,
`|| defined(USE_ROCM)` in torch builds) is offered only where the version comparison is the
whole `#if` condition (parentheses and a `defined(<the macro>)` guard aside) and nothing in the
condition or an earlier arm of its chain tests a platform (the rule's `platform_tests` table).
Everywhere else the finding stays, without that rewrite."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.discover import language_of
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_source
from cuda2rocm.sources import SourceFile

SPEC = next(r for r in load_catalogue() if r.id == "cuda-version-macro")
HEAD = """\
#include <cuda_runtime.h>
__global__ void grow(float* v) { v[threadIdx.x] += 1.f; }
void step(float* v, cudaStream_t s) {
"""
TAIL = "}\n"
LAUNCH = "  grow<<<1, 64, 0, s>>>(v);\n"


def _code(directives: str) -> str:
    return HEAD + directives + TAIL


def _fixed(code: str, path: str = "k/step.cu") -> str:
    linter = Linter([SPEC])
    source = SourceFile(path, language_of(Path(path)), code)
    return fix_source(source, linter.lint_source, True, linter.syntax_error).fixed


def _found(code: str, path: str = "k/step.cu"):
    linter = Linter([SPEC])
    return linter.lint_source(SourceFile(path, language_of(Path(path)), code))


TAKEN = [
    ("CUDA_VERSION >= 11000", "CUDA_VERSION >= 11000 || defined(__HIP__)"),
    ("(CUDART_VERSION >= 11020)", "(CUDART_VERSION >= 11020) || defined(__HIP__)"),
    (
        "defined(CUDA_VERSION) && CUDA_VERSION >= 11000",
        "defined(CUDA_VERSION) && CUDA_VERSION >= 11000 || defined(__HIP__)",
    ),
    (
        "(defined(CUDART_VERSION)) && (CUDART_VERSION > 10020)",
        "(defined(CUDART_VERSION)) && (CUDART_VERSION > 10020) || defined(__HIP__)",
    ),
]


@pytest.mark.parametrize(("condition", "rewritten"), TAKEN)
def test_a_whole_condition_gets_the_take_rewrite(condition, rewritten):
    code = _code(f"#if {condition}\n{LAUNCH}#endif\n")
    assert f"#if {rewritten}\n" in _fixed(code)


KEPT = [
    # more than the comparison: a feature switch, another macro's guard
    "CUDA_VERSION >= 11000 && defined(STEP_FAST)",
    "defined(CUDART_VERSION) && CUDA_VERSION >= 11000",
    "!(CUDA_VERSION < 11000)",
    # a platform test already in the condition (not one of HIP's: those are ROCm-aware)
    "CUDA_VERSION >= 11000 && !defined(_WIN32)",
    "CUDA_VERSION >= 11000 || defined(_MSC_VER)",
]


@pytest.mark.parametrize("condition", KEPT)
def test_no_take_rewrite_beyond_the_whole_comparison(condition):
    code = _code(f"#if {condition}\n{LAUNCH}#endif\n")
    found = _found(code)
    assert found, "the comparison is still reported"
    assert "|| defined(__HIP__)" not in _fixed(code)


def test_an_earlier_arm_testing_a_platform_keeps_the_chain_as_written():
    code = _code(
        f"#if defined(_MSC_VER)\n  (void)s;\n#elif CUDA_VERSION >= 11000\n{LAUNCH}#endif\n"
    )
    assert _found(code)
    assert "|| defined(__HIP__)" not in _fixed(code)
    plain = _code(
        f"#if defined(STEP_TRACE)\n  (void)s;\n#elif CUDA_VERSION >= 11000\n{LAUNCH}#endif\n"
    )
    assert "#elif CUDA_VERSION >= 11000 || defined(__HIP__)\n" in _fixed(plain)


def test_torch_builds_take_the_branch_with_use_rocm():
    code = "#include <torch/extension.h>\n" + _code(
        f"#if (CUDA_VERSION >= 11000)\n{LAUNCH}#endif\n"
    )
    assert "#if (CUDA_VERSION >= 11000) || defined(USE_ROCM)\n" in _fixed(code, "csrc/step.cu")


def test_the_platform_names_are_data():
    tests = set(SPEC.tables["platform_tests"])
    assert {"__CUDACC__", "__NVCC__", "_WIN32", "__clang__", "USE_ROCM"} <= tests
