"""The Action's job summary (Markdown) from `cuda2rocm lint --format json`: totals, fixable
counts, the top rules, and a word on GitHub's annotation limit."""

from __future__ import annotations

import json
import sys

#: GitHub shows at most 10 error, 10 warning and 10 notice annotations per step (50 per job):
#: https://github.com/actions/toolkit/blob/main/docs/problem-matchers.md#limitations
ANNOTATIONS_PER_LEVEL = 10
TOP = 10


def render(document: dict) -> str:
    summary = document["summary"]
    total, files = summary["diagnostics"], summary["files"]
    sev, fixable = summary["by_severity"], summary["fixable"]
    out = ["### cuda2rocm", ""]
    if not total:
        out.append(f"No findings in {files} files.")
        return "\n".join(out) + "\n"
    out.append(
        f"**{total} findings** in {files} files: {sev['error']} errors, {sev['warning']} "
        f"warnings, {sev['info']} info."
    )
    out.append(
        f"Fixable: **{fixable['safe']}** safe (`cuda2rocm lint --fix`), {fixable['unsafe']} "
        f"more with `--unsafe-fixes` (review them); {total - fixable['safe'] - fixable['unsafe']}"
        " need a human."
    )
    out += ["", "| rule | findings | safe fix | unsafe fix |", "|---|---:|---:|---:|"]
    per_rule: dict[str, dict] = {}
    for d in document["diagnostics"]:
        row = per_rule.setdefault(d["rule"], {"code": d["code"], "n": 0, "safe": 0, "unsafe": 0})
        row["n"] += 1
        if d["fix"]:
            row[d["fix"]["safety"]] += 1
    ranked = sorted(per_rule.items(), key=lambda kv: (-kv[1]["n"], kv[1]["code"]))
    for rule, row in ranked[:TOP]:
        out.append(f"| {row['code']} `{rule}` | {row['n']} | {row['safe']} | {row['unsafe']} |")
    if len(ranked) > TOP:
        out.append(f"| … {len(ranked) - TOP} more rules | | | |")
    over = [k for k in ("error", "warning", "info") if sev[k] > ANNOTATIONS_PER_LEVEL]
    if over:
        out += [
            "",
            f"GitHub shows at most {ANNOTATIONS_PER_LEVEL} annotations of each level per step "
            f"({', '.join(over)} exceeded it): every finding is in the step log, and in code "
            "scanning with `sarif: true`.",
        ]
    return "\n".join(out) + "\n"


def main(path: str) -> None:
    with open(path, encoding="utf-8") as fh:
        sys.stdout.write(render(json.load(fh)))


if __name__ == "__main__":
    main(sys.argv[1])
