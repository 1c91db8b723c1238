"""Human output: each finding with its code frame and fix hint, then a per-step summary.

Everything user-controlled (paths, messages, source lines) goes into `rich.text.Text` as plain
text, never as markup, so a file cannot restyle or forge the report.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cuda2rocm.engine import LintResult
from cuda2rocm.model import STEPS, Diagnostic, Safety
from cuda2rocm.report import triage
from cuda2rocm.report.messages import short
from cuda2rocm.report.summary import fixable_line
from cuda2rocm.sources import LineIndex

STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in text)


class _Frames:
    """Source lines for code frames, read once per file (undecodable bytes replaced)."""

    def __init__(self) -> None:
        self.cache: dict[str, LineIndex | None] = {}

    def get(self, path: str) -> LineIndex | None:
        if path not in self.cache:
            try:
                self.cache[path] = LineIndex(
                    Path(path).read_text(encoding="utf-8", errors="replace")
                )
            except OSError:
                self.cache[path] = None
        return self.cache[path]


def _frame(d: Diagnostic, lines: LineIndex | None) -> Text | None:
    if lines is None or d.position.line > len(lines.starts):
        return None
    p = d.position
    out = Text()
    width = len(str(p.line + 1))
    first = max(1, p.line - 1)
    for n in range(first, min(p.line, len(lines.starts)) + 1):
        source = _printable(lines.line_text(n).expandtabs(4))
        out.append(f"  {n:>{width}} │ ", style="dim")
        out.append(source + "\n")
    raw = lines.line_text(p.line)
    start = len(raw[: p.column - 1].expandtabs(4))
    end_col = p.end_column if p.end_line == p.line else len(raw) + 1
    length = max(1, len(raw[p.column - 1 : end_col - 1].expandtabs(4)))
    out.append(f"  {'':>{width}} │ ", style="dim")
    out.append(" " * start + "^" * length, style=STYLE[d.severity.value])
    return out


def render(result: LintResult, console: Console, show_frames: bool = True) -> None:
    """Findings in triage order (report.triage): blockers first, grouped by component, each
    with its one-line message (report.messages); the full text is `explain`'s and JSON's."""
    frames = _Frames()
    section = None
    shortened = False
    for group in triage.groups(result.diagnostics):
        if group.severity != section:
            section = group.severity
            count = sum(1 for d in result.diagnostics if d.severity.value == section)
            console.rule(
                Text(f"{triage.SECTIONS[section]} ({count})", style=STYLE[section]),
                align="left",
                style="dim",
            )
        console.print(
            Text(f"{_printable(group.component)} ({len(group.diagnostics)})", style="bold")
        )
        for d in group.diagnostics:
            shortened |= _finding(d, console, frames, show_frames)
    if shortened:
        console.print(
            Text(
                "Messages are shortened to one line: `cuda2rocm explain RULE` has the why and "
                "the fix; `--format json` has each full message (`help`).",
                style="dim",
            )
        )
    for notice in result.notices:
        console.print(Text(f"note: {_printable(notice.path)}: {_printable(short(notice.message))}"))
    summarise(result, console)


def _finding(d: Diagnostic, console: Console, frames: _Frames, show_frames: bool) -> bool:
    """Print one finding; whether its message was shortened."""
    p = d.position
    line = short(d.message)
    head = Text()
    head.append(_printable(d.path), style="bold")
    head.append(f":{p.line}:{p.column}: ")
    head.append(d.code, style=STYLE[d.severity.value])
    head.append(f" [{d.severity.value}] ", style=STYLE[d.severity.value])
    head.append(_printable(line))
    head.append(f"  ({d.rule})", style="dim")
    console.print(head, soft_wrap=True, highlight=False)
    if show_frames:
        frame = _frame(d, frames.get(d.path))
        if frame is not None:
            console.print(frame, soft_wrap=True, highlight=False)
    _fix_hint(d, console)
    console.print()
    return line != " ".join(d.message.split())


def _fix_hint(d: Diagnostic, console: Console) -> None:
    if d.fix is None:
        return
    hint = Text("  help: ", style="bold green")
    hint.append(_printable(d.fix.description or "a fix is available"))
    if d.fix.safety is Safety.UNSAFE:
        hint.append(" (unsafe fix: `cuda2rocm lint --fix --unsafe-fixes`)", style="dim")
    else:
        hint.append(" (safe fix: `cuda2rocm lint --fix`)", style="dim")
    console.print(hint, soft_wrap=True, highlight=False)


def summarise(result: LintResult, console: Console) -> None:
    diags = result.diagnostics
    if not diags:
        console.print(Text(f"All clear: no findings in {result.files} files.", style="green"))
        return
    severities = Counter(d.severity.value for d in diags)
    safe = sum(1 for d in diags if d.fix is not None and d.fix.safety is Safety.SAFE)
    unsafe = sum(1 for d in diags if d.fix is not None and d.fix.safety is Safety.UNSAFE)
    table = Table(title="Findings by porting step", title_justify="left")
    table.add_column("step")
    for column in ("error", "warning", "info", "fixable"):
        table.add_column(column, justify="right")
    for step in sorted({d.step for d in diags}):
        in_step = [d for d in diags if d.step == step]
        counts = Counter(d.severity.value for d in in_step)
        fixable = sum(1 for d in in_step if d.fix is not None)
        table.add_row(
            f"{step} {STEPS.get(step, 'general')}",
            *(str(counts.get(s, 0)) for s in ("error", "warning", "info")),
            str(fixable),
        )
    console.print(table)
    line = Text(f"Found {len(diags)} findings in {result.files} files: ")
    line.append(f"{severities.get('error', 0)} errors", style=STYLE["error"])
    line.append(", ")
    line.append(f"{severities.get('warning', 0)} warnings", style=STYLE["warning"])
    line.append(", ")
    line.append(f"{severities.get('info', 0)} info", style=STYLE["info"])
    line.append(".")
    console.print(line)
    if safe or unsafe:
        console.print(Text(fixable_line(safe, unsafe)))


def render_guarded(result: LintResult, console: Console) -> None:
    """`--show-guarded`: the findings kept out of the report, each with why, to audit."""
    console.print(
        Text(
            f"Guarded: {len(result.guarded)} findings in code ROCm provably never compiles "
            "or runs (not reported, not fixed):",
            style="bold",
        )
    )
    for d in result.guarded:
        p = d.position
        line = Text()
        line.append(_printable(d.path), style="bold")
        line.append(f":{p.line}:{p.column}: {d.code} ")
        line.append(_printable(d.message))
        line.append(f"  ({d.rule})", style="dim")
        console.print(line, soft_wrap=True, highlight=False)
        console.print(Text("  guarded: " + _printable(d.guarded), style="dim"), soft_wrap=True)
