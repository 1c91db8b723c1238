"""The shipped example project: the README's main command finds what it should, `fix` mends it."""

from __future__ import annotations

import json
import py_compile
import shutil

from conftest import EXAMPLES

FOUNDATION_RULES = {
    "amp-deprecated-api",
    "torch-version-cuda",
    "device-string-hip",
    "nccl-literal",
    "pin-memory",
}

# (file, line, column, rule) of every finding of the foundation rules in examples/.
EXPECTED = {
    ("train.py", 39, 24, "torch-version-cuda"),
    ("train.py", 42, 12, "torch-version-cuda"),
    ("train.py", 51, 75, "pin-memory"),
    ("train.py", 65, 14, "amp-deprecated-api"),
    ("train.py", 77, 18, "amp-deprecated-api"),
    ("evaluate.py", 33, 58, "device-string-hip"),
    ("evaluate.py", 34, 26, "device-string-hip"),
    ("evaluate.py", 49, 14, "amp-deprecated-api"),
    ("distributed.py", 22, 16, "nccl-literal"),
    ("distributed.py", 26, 31, "nccl-literal"),
    ("distributed.py", 27, 41, "nccl-literal"),
    ("ops.py", 17, 29, "device-string-hip"),
    ("ops.py", 25, 6, "amp-deprecated-api"),
    ("ops.py", 36, 6, "amp-deprecated-api"),
}


def _findings(cli, path):
    result = cli("lint", "--format", "json", str(path))
    assert result.returncode == 1, result.stderr
    return json.loads(result.stdout)["diagnostics"]


def test_lint_examples_reports_every_foundation_rule_at_its_place(cli):
    found = {
        (d["path"].split("examples/")[-1], d["line"], d["column"], d["rule"])
        for d in _findings(cli, EXAMPLES)
        if d["rule"] in FOUNDATION_RULES
    }
    assert found == EXPECTED
    assert {rule for *_, rule in found} == FOUNDATION_RULES


def test_lint_examples_text_output_exits_1(cli):
    result = cli("lint", str(EXAMPLES))
    assert result.returncode == 1
    assert "Findings by porting step" in result.stdout


def _tree(root):
    """Every file's bytes, the result cache (which `fix` keeps like `lint`) left out."""
    return {
        p: p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".cuda2rocm_cache" not in p.parts
    }


def test_fix_examples_copy_rewrites_safely_and_is_idempotent(cli, tmp_path):
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy)
    before = _tree(copy)
    first = cli("fix", str(copy))
    assert first.returncode == 1, first.stderr  # findings without a safe fix remain
    assert "findings remain" in first.stdout
    after = _tree(copy)
    changed = {p.name for p in after if after[p] != before.get(p)}
    assert {"train.py", "evaluate.py", "distributed.py", "ops.py"} <= changed
    # The kernel's safe warp fixes use the compatibility header, written beside it.
    assert set(after) - set(before) == {copy / "csrc" / "cuda2rocm_compat.h"}
    assert '#include "cuda2rocm_compat.h"' in (copy / "csrc" / "fused_ops_kernel.cu").read_text()
    for path in copy.rglob("*.py"):
        py_compile.compile(str(path), doraise=True, cfile=str(tmp_path / "out.pyc"))
    train = (copy / "train.py").read_text()
    assert "from torch.amp import GradScaler, autocast" in train
    # The device test guards `float(torch.version.cuda)`: widening it would send ROCm into a
    # TypeError, so torch-version-cuda offers no fix there (issue 14).
    assert "torch.version.hip is not None" not in train
    assert "float(torch.version.cuda)" in train  # version parsing needs a human
    assert 'backend="nccl"' in (copy / "distributed.py").read_text()
    # Second run: nothing left to change.
    second = cli("fix", str(copy))
    assert "Fixed 0 findings in 0 files" in second.stdout
    assert _tree(copy) == after
    # What is left of the foundation rules has no safe fix.
    remaining = [d for d in _findings(cli, copy) if d["rule"] in FOUNDATION_RULES]
    assert remaining and all(d["fix"] is None or d["fix"]["safety"] != "safe" for d in remaining)
    # torch.amp.custom_fwd needs torch 2.4; the example allows 2.3: its fix stays unsafe
    amp = [d for d in remaining if "custom_fwd" in d["message"]]
    assert amp and all(d["fix"]["safety"] == "unsafe" for d in amp)
