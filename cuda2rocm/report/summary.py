"""The closing lines every human-facing format shares: how many findings, how many fixable."""

from __future__ import annotations

from collections import Counter

from cuda2rocm.engine import LintResult
from cuda2rocm.model import Safety


def fix_counts(result: LintResult) -> tuple[int, int]:
    """(safe, unsafe) fixable findings."""
    fixes = Counter(d.fix.safety for d in result.diagnostics if d.fix is not None)
    return fixes[Safety.SAFE], fixes[Safety.UNSAFE]


def closing(result: LintResult) -> list[str]:
    """`Found N findings (...)` and `[*] N fixable with ...`, or the all-clear line."""
    diags = result.diagnostics
    if not diags:
        return [f"All clear: no findings in {result.files} files."]
    by = Counter(d.severity.value for d in diags)
    lines = [
        f"Found {len(diags)} findings in {result.files} files: {by['error']} errors, "
        f"{by['warning']} warnings, {by['info']} info."
    ]
    safe, unsafe = fix_counts(result)
    if safe or unsafe:
        lines.append(fixable_line(safe, unsafe))
    return lines


def fixable_line(safe: int, unsafe: int) -> str:
    if not safe:
        return f"No safe fixes; {unsafe} more fixes available with `--unsafe-fixes`."
    line = f"[*] {safe} fixable with `cuda2rocm lint --fix`"
    if unsafe:
        line += f" ({unsafe} more fixes available with `--unsafe-fixes`)"
    return line + "."
