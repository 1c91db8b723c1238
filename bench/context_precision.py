"""What the context model takes out of a lint of real, already-ported projects.

    python bench/context_precision.py /work/real/flash-attention /work/real/detectron2 ...
    python bench/context_precision.py --json out.json PROJECT...

For each project tree: findings before (reported + guarded) and after (reported), by severity and
by rule, and the guarded findings by kind of reason (a Python branch, an early exit, a short-
circuited expression, a CUDA-only build component, another accelerator's file). The lint runs
through the CLI (`lint --format json --show-guarded --no-cache`), as a user would run it; the
`cuda-only-component` summaries are counted on the "after" side only (they replace findings).
Nothing is asserted here: precision is judged by a hand review of what remains.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUMMARY_RULE = "cuda-only-component"


def reason_kind(reason: str) -> str:
    if reason.endswith(SUMMARY_RULE):
        return "build: CUDA-only component"
    if "not CUDA code" in reason:
        return "another accelerator"
    if reason.startswith("after `if"):
        return "python: early exit"
    if reason.startswith("inside"):
        return "python: branch"
    return "python: expression"


def lint(project: Path, jobs: int | None) -> list[dict]:
    command = [sys.executable, "-m", "cuda2rocm", "lint", "--format", "json", "--show-guarded"]
    command += ["--no-cache", "--exit-zero", str(project)]
    if jobs:
        command[4:4] = ["--jobs", str(jobs)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"lint failed on {project}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)["diagnostics"]


def measure(project: Path, jobs: int | None) -> dict:
    found = lint(project, jobs)
    guarded = [d for d in found if "guarded" in d]
    after = [d for d in found if "guarded" not in d]
    before = guarded + [d for d in after if d["rule"] != SUMMARY_RULE]
    return {
        "project": project.name,
        "before": len(before),
        "after": len(after),
        "before_by_severity": dict(Counter(d["severity"] for d in before)),
        "after_by_severity": dict(Counter(d["severity"] for d in after)),
        "before_by_rule": dict(Counter(d["rule"] for d in before).most_common()),
        "after_by_rule": dict(Counter(d["rule"] for d in after).most_common()),
        "guarded_by_kind": dict(Counter(reason_kind(d["guarded"]) for d in guarded).most_common()),
        "components": [d["message"] for d in after if d["rule"] == SUMMARY_RULE],
    }


def show(m: dict) -> None:
    print(f"== {m['project']}: {m['before']} findings before, {m['after']} after")
    for key in ("error", "warning", "info"):
        print(
            f"   {key:8} {m['before_by_severity'].get(key, 0):6} -> "
            f"{m['after_by_severity'].get(key, 0):6}"
        )
    print("   guarded by kind:", ", ".join(f"{k} {v}" for k, v in m["guarded_by_kind"].items()))
    rules = sorted(set(m["before_by_rule"]) | set(m["after_by_rule"]))
    rows = [(r, m["before_by_rule"].get(r, 0), m["after_by_rule"].get(r, 0)) for r in rules]
    for rule, b, a in sorted(rows, key=lambda r: -r[1]):
        if b != a or a:
            print(f"   {rule:28} {b:6} -> {a:6}")
    for message in m["components"]:
        print("   component:", message[:200])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("projects", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, help="Also write the numbers here.")
    parser.add_argument("--jobs", type=int)
    args = parser.parse_args()
    results = []
    for project in args.projects:
        m = measure(project.resolve(), args.jobs)
        show(m)
        results.append(m)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
