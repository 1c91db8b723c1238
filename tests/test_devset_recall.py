"""bench/devset_recall.py reads the devset scorer's report and names the issue-18 targets missed."""

import importlib.util

from conftest import ROOT

SPEC = importlib.util.spec_from_file_location("devset_recall", ROOT / "bench" / "devset_recall.py")
devset_recall = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(devset_recall)

REPORT = """group                found  total  recall
warp-size-64            {w}    117   {wp}%
dtype                   23     25   92.0%
env-var                  0      1    0.0%

records: 310  found: 250  overall recall: {o}%  macro recall over 10 repos: 85.3%
lines flagged by the tool (all snapshot files, distinct path:line): {f}
"""


def test_all_targets_met():
    report = REPORT.format(w=85, wp="72.6", o="80.6", f="1,872")
    assert devset_recall.check(report) == []  # env-var's 0% has fewer than 10 records


def test_each_missed_target_is_named():
    report = REPORT.format(w=60, wp="51.3", o="79.7", f="2,600")
    missed = devset_recall.check(report)
    assert any("overall recall 0.797" in m for m in missed)
    assert any("2600 lines flagged" in m for m in missed)
    assert any(m.startswith("warp-size-64: 51.3%") for m in missed)
    assert devset_recall.check("no summary") == ["the scorer's summary line was not found"]
