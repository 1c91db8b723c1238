"""A realistic multi-file training project: the exact findings of every Python rule.

`tests/fixtures/project_py/` is a small speech-model project (train loop, attention model with a
Triton kernel, distributed setup, data loading, platform detection and GPU monitoring). It holds
the constructs the rules look for next to ROCm-aware code that must stay silent. The test runs
every rule, opt-in ones included, and compares the exact set of (file, line, rule).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2rocm.catalogue import load_catalogue, select_rules
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_source
from cuda2rocm.model import Severity
from cuda2rocm.sources import SourceFile

PROJECT = Path(__file__).resolve().parent / "fixtures" / "project_py"

EXPECTED = {
    # data loading
    ("speechlm/data.py", 20, "pin-memory"),
    ("speechlm/data.py", 25, "cudnn-version-gate"),
    # distributed: per-rank CUDA_VISIBLE_DEVICES in a child environment, an invalid backend
    ("speechlm/distributed.py", 22, "visible-devices"),
    ("speechlm/distributed.py", 29, "nccl-literal"),
    # export: the TensorRT backend reached on ROCm (the guarded one and the optional import
    # are silent)
    ("speechlm/export.py", 14, "compile-triton"),
    # model: a bf16 gate (info), a Hopper gate, cuDNN-only SDPA, OCP fp8, PTX in Triton
    ("speechlm/model.py", 14, "device-capability-gate"),
    ("speechlm/model.py", 25, "device-capability-gate"),
    ("speechlm/model.py", 31, "sdpa-cudnn-only"),
    ("speechlm/model.py", 52, "fp8-dtype"),
    ("speechlm/model.py", 61, "compile-triton"),
    # train loop: allocator variants that disagree, cudnn/TF32 switches, torch.compile,
    # deprecated AMP, NVTX, a CUDA-only log condition
    ("speechlm/train.py", 5, "alloc-conf-env"),
    ("speechlm/train.py", 6, "alloc-conf-env"),
    ("speechlm/train.py", 14, "cudnn-benchmark"),
    ("speechlm/train.py", 15, "tf32-flags"),
    ("speechlm/train.py", 16, "tf32-flags"),
    ("speechlm/train.py", 22, "compile-triton"),
    ("speechlm/train.py", 24, "amp-deprecated-api"),
    ("speechlm/train.py", 27, "nvtx"),
    ("speechlm/train.py", 35, "torch-version-cuda"),
    # platform detection and monitoring (describe_platform, supports_fast_attention,
    # smi_snapshot and gpu_utilization are ROCm-aware and silent)
    ("speechlm/utils/platform.py", 31, "device-capability-gate"),
    ("speechlm/utils/platform.py", 35, "cuda-means-nvidia"),
    ("speechlm/utils/platform.py", 36, "nvml-smi"),
    ("speechlm/utils/platform.py", 38, "nvml-smi"),
    ("speechlm/utils/platform.py", 61, "nvml-smi"),
}

#: Findings that are not the rule's default severity.
SEVERITIES = {
    ("speechlm/model.py", 14): Severity.INFO,  # Ampere gate for bfloat16: right on ROCm
    ("speechlm/train.py", 5): Severity.WARNING,  # allocator variants disagree
    ("speechlm/train.py", 6): Severity.WARNING,
    ("speechlm/train.py", 22): Severity.INFO,  # plain torch.compile
}

#: Findings with a safe fix.
FIXABLE = {
    ("speechlm/data.py", 25),
    ("speechlm/distributed.py", 29),
    ("speechlm/model.py", 31),
    ("speechlm/train.py", 24),
    ("speechlm/train.py", 35),
}

RULES = select_rules(load_catalogue(), select=["ALL"])


def _relative(path: str) -> str:
    return Path(path).resolve().relative_to(PROJECT).as_posix()


@pytest.fixture(scope="module")
def findings():
    result = Linter(RULES).lint_paths([PROJECT])
    return result.diagnostics


def test_exact_findings(findings):
    found = {(_relative(d.path), d.position.line, d.rule) for d in findings}
    assert sorted(found - EXPECTED) == [], "unexpected findings"
    assert sorted(EXPECTED - found) == [], "missing findings"
    assert len(findings) == len(EXPECTED), "one finding per (file, line, rule)"


def test_severities_and_fixes(findings):
    specs = {r.id: r for r in RULES}
    for d in findings:
        where = (_relative(d.path), d.position.line)
        assert d.severity == SEVERITIES.get(where, specs[d.rule].severity), where
        assert (d.fix is not None) == (where in FIXABLE), where


def test_default_rules_leave_out_the_opt_in_findings():
    default = [r for r in RULES if r.default]
    found = {
        (_relative(d.path), d.position.line, d.rule)
        for d in Linter(default).lint_paths([PROJECT]).diagnostics
    }
    opt_in = {e for e in EXPECTED if e[2] in ("pin-memory", "cuda-means-nvidia")}
    assert found == EXPECTED - opt_in


def test_fixing_the_project_removes_exactly_the_fixable_findings():
    linter = Linter(RULES)
    for path in sorted(PROJECT.rglob("*.py")):
        relative = path.relative_to(PROJECT).as_posix()
        source = SourceFile(relative, "python", path.read_text(encoding="utf-8"))
        outcome = fix_source(source, linter.lint_source, False, linter.syntax_error)
        assert outcome.refused is None, relative
        before = {(d.position.line, d.rule) for d in linter.lint_source(source)}
        after = linter.lint_source(SourceFile(relative, "python", outcome.fixed))
        fixed_lines = {line for name, line in FIXABLE if name == relative}
        # A fix edits within its line, so lines stay put; what was fixable is gone, the rest
        # is still reported, and nothing new appears.
        assert {(d.position.line, d.rule) for d in after} == {
            (line, rule) for line, rule in before if line not in fixed_lines
        }, relative
        assert all(d.fix is None for d in after), relative
