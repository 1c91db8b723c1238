"""Recall on real ports (issue 18): the devset's own scorer, run with this checkout; the targets.

    python bench/devset_recall.py                      # ../shared/devset beside the repository
    python bench/devset_recall.py --devset DIR --by repo

`score.py` (the devset's scorer, not ours) lints the pre-port snapshots with the tool and matches
the lines engineers changed when porting. This script runs it with this checkout's package (a
small wrapper, so no install is needed), prints its report, and checks issue 18's targets:
overall and macro recall >= 0.80, lines flagged <= 2,500, every category with >= 10 records at
>= 0.60. Exit 1 when a target is missed; nothing here is a test (the devset is not shipped).
"""

from __future__ import annotations

import argparse
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"overall": 0.80, "macro": 0.80, "flagged": 2500, "category": 0.60, "records": 10}


def run_scorer(devset: Path, extra: list[str]) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        tool = Path(tmp) / "cuda2rocm"
        tool.write_text(
            f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m cuda2rocm "$@"\n'
        )
        tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
        done = subprocess.run(
            [sys.executable, str(devset / "score.py"), "--cuda2rocm", str(tool), *extra],
            capture_output=True,
            text=True,
            cwd=devset,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"score.py failed: {done.stderr[-2000:]}")
    return done.stdout


def check(report: str) -> list[str]:
    """The targets the report misses (empty: all met)."""
    missed = []
    m = re.search(r"overall recall: ([\d.]+)%\s+macro recall over \d+ repos: ([\d.]+)%", report)
    flagged = re.search(r"distinct path:line\): ([\d,]+)", report)
    if m is None or flagged is None:
        return ["the scorer's summary line was not found"]
    overall, macro = float(m[1]) / 100, float(m[2]) / 100
    if overall < TARGETS["overall"]:
        missed.append(f"overall recall {overall:.3f} < {TARGETS['overall']}")
    if macro < TARGETS["macro"]:
        missed.append(f"macro recall {macro:.3f} < {TARGETS['macro']}")
    lines = int(flagged[1].replace(",", ""))
    if lines > TARGETS["flagged"]:
        missed.append(f"{lines} lines flagged > {TARGETS['flagged']}")
    rows = re.findall(r"^(\S+)\s+(\d+)\s+(\d+)\s+([\d.]+)%$", report, re.M)
    for name, _found, total, pct in rows:
        if int(total) >= TARGETS["records"] and float(pct) / 100 < TARGETS["category"]:
            missed.append(f"{name}: {pct}% of {total} records < {TARGETS['category']:.0%}")
    return missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devset", type=Path, default=ROOT.parent / "shared" / "devset")
    parser.add_argument("--by", choices=["repo"], help="also per repository")
    args = parser.parse_args()
    if not (args.devset / "score.py").is_file():
        raise SystemExit(f"no devset scorer at {args.devset / 'score.py'}")
    report = run_scorer(args.devset, ["--by", args.by] if args.by else [])
    print(report.rstrip())
    missed = check(report)
    print("\nissue 18 targets: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))
    raise SystemExit(1 if missed else 0)


if __name__ == "__main__":
    main()
