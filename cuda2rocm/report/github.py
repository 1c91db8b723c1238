"""GitHub Actions workflow commands (`::error file=...::message`), escaped per GitHub's rules.

Property values escape `%`, CR, LF, `:` and `,`; the message escapes `%`, CR and LF. With that,
no path or message can end the command early or start a second one. Notices (files passed
over) become `::notice` lines. GitHub shows at most 10 annotations of each level per step (and
50 per job); the rest stay in the log, so the Action's job summary and SARIF carry the full list.
"""

from __future__ import annotations

from cuda2rocm.engine import LintResult

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render(result: LintResult) -> str:
    lines = []
    for d in result.diagnostics:
        p = d.position
        props = {
            "file": d.path,
            "line": str(p.line),
            "col": str(p.column),
            "endLine": str(p.end_line),
            "endColumn": str(p.end_column),
            "title": f"{d.code} {d.rule}",
        }
        joined = ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
        lines.append(f"::{LEVEL[d.severity.value]} {joined}::{escape_data(d.message)}")
    for n in result.notices:
        props = f"file={escape_property(n.path)},title=cuda2rocm"
        lines.append(f"::notice {props}::{escape_data(n.message)}")
    return "\n".join(lines)
