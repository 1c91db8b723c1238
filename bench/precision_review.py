"""Count findings on ROCm-ported projects; draw a seeded sample of error/warning findings to review.

    python bench/precision_review.py /tmp/prec/*.json               # counts table (markdown)
    python bench/precision_review.py /tmp/prec/*.json --sample 70   # plus a stratified sample

Each JSON file is the output of
``cuda2rocm lint --no-cache --format json --show-guarded --exit-zero <tree>`` on one project (the
file's stem names the project). "Before" counts every finding including those the context model
guarded (code ROCm provably never compiles); "after" counts only the reported ones. The sample is
stratified by project and rule (each (project, rule) stratum gets at least one finding, the rest
are spread in proportion to size) and drawn with a fixed seed, so the same lint output gives the
same sample. Review verdicts live in bench/reviews/precision.md.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

SEVERITIES = ("error", "warning", "info")


def load(paths: list[Path]) -> dict[str, list[dict]]:
    """Project name -> its diagnostics (reported and guarded)."""
    return {p.stem: json.loads(p.read_text())["diagnostics"] for p in paths}


def counts_table(projects: dict[str, list[dict]]) -> str:
    """Markdown table: per project, before (reported + guarded) and after (reported) by severity."""
    rows = [
        "| project | before e/w/i | after e/w/i | guarded | after error+warning |",
        "|---|---|---|---|---|",
    ]
    for name, diags in sorted(projects.items()):
        before = Counter(d["severity"] for d in diags)
        after = Counter(d["severity"] for d in diags if "guarded" not in d)
        guarded = sum("guarded" in d for d in diags)
        rows.append(
            f"| {name} | {'/'.join(str(before[s]) for s in SEVERITIES)} "
            f"| {'/'.join(str(after[s]) for s in SEVERITIES)} | {guarded} "
            f"| {after['error'] + after['warning']} |"
        )
    return "\n".join(rows)


def rule_table(projects: dict[str, list[dict]]) -> str:
    """Reported error/warning findings per rule and project (guarded ones in parentheses)."""
    names = sorted(projects)
    per: dict[str, Counter] = defaultdict(Counter)
    guarded: dict[str, Counter] = defaultdict(Counter)
    for name, diags in projects.items():
        for d in diags:
            if d["severity"] not in ("error", "warning"):
                continue
            key = f"{d['rule']} ({d['severity'][0]})"
            (guarded if "guarded" in d else per)[key][name] += 1
    rows = ["| rule | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for key in sorted(set(per) | set(guarded), key=lambda k: (-sum(per[k].values()), k)):
        cells = []
        for n in names:
            cell = str(per[key][n])
            if guarded[key][n]:
                cell += f" ({guarded[key][n]})"
            cells.append(cell)
        rows.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def sample(projects: dict[str, list[dict]], size: int, seed: int) -> list[tuple[str, dict]]:
    """Seeded stratified sample of reported error/warning findings.

    Every (project, rule) stratum once, the rest in proportion to stratum size.
    """
    strata: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for name, diags in sorted(projects.items()):
        for d in diags:
            if "guarded" not in d and d["severity"] in ("error", "warning"):
                strata[(name, d["rule"])].append(d)
    rng = random.Random(seed)
    keys = sorted(strata)
    total = sum(len(v) for v in strata.values())
    quota = {k: 1 for k in keys}
    spare = max(0, size - len(keys))
    shares = {k: spare * len(strata[k]) / total if total else 0.0 for k in keys}
    for k in keys:
        quota[k] += int(shares[k])
    # Largest remainders get the seats rounding left over, so --sample N draws N findings
    # (as far as the strata hold that many).
    left = min(size, total) - sum(min(quota[k], len(strata[k])) for k in keys)
    order = sorted(keys, key=lambda k: (-(shares[k] - int(shares[k])), k))
    while left > 0 and order:
        room = [k for k in order if quota[k] < len(strata[k])]
        if not room:
            break
        for k in room[:left]:
            quota[k] += 1
            left -= 1
    picked: list[tuple[str, dict]] = []
    for k in keys:
        pool = sorted(strata[k], key=lambda d: (d["path"], d["line"], d["column"]))
        for d in rng.sample(pool, min(quota[k], len(pool))):
            picked.append((k[0], d))
    return picked


def main() -> None:
    """Print the tables and, with --sample, the sampled findings one per line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    projects = load(args.results)
    print(counts_table(projects))
    print()
    print(rule_table(projects))
    if args.sample:
        print()
        for i, (name, d) in enumerate(sample(projects, args.sample, args.seed), 1):
            path = d["path"].split("/real/", 1)[-1]
            where = f"`{path}:{d['line']}` {d['rule']} ({d['severity']})"
            print(f"{i}. {name} {where}: {d['message'][:140]}")


if __name__ == "__main__":
    main()
