"""One line per finding, `path:line:col: CODE [*] [severity] message (rule)`, for grep and editors.

`[*]` marks a safe fix (applied by `lint --fix`), as in ruff; the closing lines count the
findings and the fixes. Notices (files passed over) go to standard error, never between findings.
"""

from __future__ import annotations

from cuda2rocm.engine import LintResult
from cuda2rocm.model import Safety
from cuda2rocm.report.summary import closing


def _clean(text: str) -> str:
    """No control characters in a one-line format (a path may contain a newline)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def render(result: LintResult) -> str:
    lines = []
    for d in result.diagnostics:
        p = d.position
        fixable = " [*]" if d.fix is not None and d.fix.safety is Safety.SAFE else ""
        lines.append(
            f"{_clean(d.path)}:{p.line}:{p.column}: {d.code}{fixable} [{d.severity.value}] "
            f"{_clean(d.message)} ({d.rule})"
        )
    return "\n".join([*lines, *closing(result)])


def render_guarded(result: LintResult) -> str:
    """`--show-guarded`: the findings kept out of the report, each with why."""
    lines = [f"guarded: {len(result.guarded)} findings in code ROCm never compiles or runs"]
    for d in result.guarded:
        p = d.position
        lines.append(
            f"{_clean(d.path)}:{p.line}:{p.column}: {d.code} [guarded] {_clean(d.message)} "
            f"({d.rule}) -- {_clean(d.guarded)}"
        )
    return "\n".join(lines)
