"""bench/fix_regression.py's review sample: reproducible from its seed, and stratified so that
every (project, rule) pair is drawn before any pair is drawn twice."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from fix_regression import Applied, sample


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
