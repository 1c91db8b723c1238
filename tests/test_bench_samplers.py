"""The review samplers in bench/ (bench/fix_regression.py for fixes, bench/precision_review.py
for findings): reproducible from their seed, of the size asked for, and stratified so that every
(project, rule) pair is drawn before any pair is drawn twice."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from fix_regression import Applied, sample

_PATH = Path(__file__).resolve().parents[1] / "bench" / "precision_review.py"
_spec = importlib.util.spec_from_file_location("precision_review", _PATH)
precision_review = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(precision_review)


def _fixes() -> list[Applied]:
    rows = []
    for project, rules in (("a", {"r1": 30, "r2": 2}), ("b", {"r1": 5, "r3": 1})):
        for rule, n in rules.items():
            rows += [
                Applied(project, "/x", f"f{i}.cu", i + 1, rule, "safe", (("x", "y"),))
                for i in range(n)
            ]
    return rows


def test_same_seed_same_sample_and_rows_round_trip():
    fixes = _fixes()
    assert sample(fixes, 6, seed=14) == sample(list(reversed(fixes)), 6, seed=14)
    assert [Applied.from_row(a.row()) for a in fixes] == fixes


def test_every_stratum_before_any_repeat():
    drawn = sample(_fixes(), 4, seed=3)
    assert {(a.project, a.rule) for a in drawn} == {
        ("a", "r1"),
        ("a", "r2"),
        ("b", "r1"),
        ("b", "r3"),
    }
    drawn = sample(_fixes(), 10, seed=3)
    assert len(drawn) == len(set(drawn)) == 10
    assert sum(a.rule == "r3" for a in drawn) == 1  # only one exists


def _diag(rule: str, line: int, severity: str = "warning") -> dict:
    return {"rule": rule, "severity": severity, "path": "a.cu", "line": line, "column": 1}


def test_sample_size_is_exact_and_every_stratum_is_drawn():
    projects = {
        "p": [_diag("a", i) for i in range(7)] + [_diag("b", i) for i in range(5)],
        "q": [_diag("a", i) for i in range(3)] + [_diag("c", 1, "info")],
    }
    for size in (3, 5, 8, 11, 15):
        picked = precision_review.sample(projects, size, seed=1)
        assert len(picked) == size
        assert {(p, d["rule"]) for p, d in picked} == {("p", "a"), ("p", "b"), ("q", "a")}
        assert all(d["severity"] != "info" for _, d in picked)
    assert precision_review.sample(projects, 8, seed=1) == precision_review.sample(
        projects, 8, seed=1
    )
    assert len(precision_review.sample(projects, 100, seed=1)) == 15


def test_a_fix_found_after_an_added_include_is_shown_at_its_original_line(tmp_path):
    from fix_regression import describe

    (tmp_path / "k.cu").write_text("#include <cuda_runtime.h>\nint a;\nint lane = tid & 31;\n")
    # `fix` reported the edit on line 4 of the partly fixed text (an include was added above)
    shown = describe(Applied("p", str(tmp_path), "k.cu", 4, "r", "unsafe", (("31", "W - 1"),)))
    assert "(line 3 of the original" in shown
    assert "    3 int lane = tid & 31;" in shown
    same = describe(Applied("p", str(tmp_path), "k.cu", 3, "r", "unsafe", (("31", "W - 1"),)))
    assert "of the original" not in same
