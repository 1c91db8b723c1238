"""`--statistics`: how many findings per rule and per checklist step, instead of the findings."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.table import Table

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.engine import LintResult
from cuda2rocm.model import STEPS


def rows(result: LintResult) -> list[tuple[str, str, str, int, int]]:
    """(code, rule, step, count, fixable) sorted by count, most first."""
    catalogue = {r.id: r for r in load_catalogue()}
    counts = Counter(d.rule for d in result.diagnostics)
    fixable = Counter(d.rule for d in result.diagnostics if d.fix is not None)
    out = []
    for rule, n in counts.items():
        spec = catalogue[rule]
        out.append((spec.code, rule, f"{spec.step} {spec.step_name}", n, fixable[rule]))
    return sorted(out, key=lambda r: (-r[3], r[0]))


def render(result: LintResult, console: Console) -> None:
    table = Table(title="Findings per rule", title_justify="left")
    for column in ("code", "rule", "step", "count", "fixable"):
        table.add_column(column, justify="right" if column in ("count", "fixable") else "left")
    for code, rule, step, n, fixable in rows(result):
        table.add_row(code, rule, step, str(n), str(fixable))
    console.print(table)
    steps = Counter(d.step for d in result.diagnostics)
    table = Table(title="Findings per porting step", title_justify="left")
    table.add_column("step")
    table.add_column("count", justify="right")
    for step in sorted(steps):
        table.add_row(f"{step} {STEPS.get(step, 'general')}", str(steps[step]))
    console.print(table)
    console.print(f"{len(result.diagnostics)} findings in {result.files} files.")


def render_plain(result: LintResult) -> str:
    return "\n".join(f"{n:>6}  {code}  {rule}" for code, rule, _, n, _ in rows(result))
