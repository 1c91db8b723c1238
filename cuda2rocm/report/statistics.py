"""`--statistics`: how many findings per rule and per checklist step, instead of the findings.

Every format has a form: tables (text), one line per rule (concise, github: `count  code  [*]
rule`, `[*]` when a safe fix exists, as ruff prints it) and JSON like ruff's (a list of
`{code, name, count, fixable}`, with the safe/unsafe split beside it).
"""

from __future__ import annotations

import json
from collections import Counter

from rich.console import Console
from rich.table import Table

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.engine import LintResult
from cuda2rocm.model import STEPS, Safety
from cuda2rocm.report.summary import closing


def rows(result: LintResult) -> list[dict]:
    """One entry per rule, most findings first."""
    catalogue = {r.id: r for r in load_catalogue()}
    counts = Counter(d.rule for d in result.diagnostics)
    safe = Counter(
        d.rule for d in result.diagnostics if d.fix is not None and d.fix.safety is Safety.SAFE
    )
    unsafe = Counter(
        d.rule for d in result.diagnostics if d.fix is not None and d.fix.safety is Safety.UNSAFE
    )
    out = []
    for rule, n in counts.items():
        spec = catalogue[rule]
        out.append(
            {
                "code": spec.code,
                "name": rule,
                "count": n,
                "fixable": safe[rule] > 0,
                "fixable_safe": safe[rule],
                "fixable_unsafe": unsafe[rule],
                "step": spec.step,
                "step_name": spec.step_name,
            }
        )
    return sorted(out, key=lambda r: (-r["count"], r["code"]))


def render(result: LintResult, console: Console) -> None:
    table = Table(title="Findings per rule", title_justify="left")
    for column in ("code", "rule", "step", "count", "fixable"):
        table.add_column(column, justify="right" if column in ("count", "fixable") else "left")
    for r in rows(result):
        fixable = r["fixable_safe"] + r["fixable_unsafe"]
        table.add_row(
            r["code"], r["name"], f"{r['step']} {r['step_name']}", str(r["count"]), str(fixable)
        )
    console.print(table)
    steps = Counter(d.step for d in result.diagnostics)
    table = Table(title="Findings per porting step", title_justify="left")
    table.add_column("step")
    table.add_column("count", justify="right")
    for step in sorted(steps):
        table.add_row(f"{step} {STEPS.get(step, 'general')}", str(steps[step]))
    console.print(table)
    for line in closing(result):
        console.print(line, highlight=False, markup=False)


def render_plain(result: LintResult) -> str:
    return "\n".join(
        f"{r['count']:>6}  {r['code']}  {'[*]' if r['fixable'] else '[ ]'} {r['name']}"
        for r in rows(result)
    )


def render_json(result: LintResult) -> str:
    return json.dumps(rows(result), indent=2)
