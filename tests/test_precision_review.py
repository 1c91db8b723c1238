"""bench/precision_review.py draws the sample size it is asked for, stratified and seeded."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "bench" / "precision_review.py"
_spec = importlib.util.spec_from_file_location("precision_review", _PATH)
precision_review = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(precision_review)


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
