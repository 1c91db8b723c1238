"""The readiness report: one self-contained HTML page (inline CSS and SVG, no script, no fetch).

Every figure comes from the same `LintResult` as the JSON output (`json_format.summary`), and
the per-step table uses the same step labels as the text summary (`1 device`, ...), so the three
agree. Everything that comes from the linted tree or the command line — paths, messages, source
lines, rule text — is escaped; rule explanations go through a small Markdown subset renderer
that escapes first and only then adds the few tags it knows.

Numbers meant for machines carry `data-*` attributes (`data-figure`, `data-step`,
`data-severity`, `data-fix`), which the tests read back and compare with the JSON summary.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from cuda2rocm import __version__
from cuda2rocm.catalogue import RuleSpec, load_catalogue
from cuda2rocm.engine import LintResult
from cuda2rocm.model import STEPS, Diagnostic, Safety
from cuda2rocm.report import json_format, plan, svg
from cuda2rocm.sources import LineIndex

SEVERITIES = ("error", "warning", "info")
FIX_CLASSES = ("safe", "unsafe", "manual")
FIX_WORDS = {
    "safe": "fixable automatically (`cuda2rocm lint --fix`)",
    "unsafe": "fixable with `--unsafe-fixes`, after review",
    "manual": "need a human (no automatic fix)",
}
#: Source lines shown above and below a finding's span, and the most span lines highlighted.
CONTEXT_LINES = 2
MAX_SPAN_LINES = 8


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _printable(text: str) -> str:
    """Control characters (other than tab) shown as escapes, as the text report does."""
    return "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in text)


def step_label(step: int) -> str:
    """`1 device`: the label the text summary and `--statistics` use too."""
    return f"{step} {STEPS.get(step, 'general')}"


def fix_class(d: Diagnostic) -> str:
    if d.fix is None:
        return "manual"
    return "safe" if d.fix.safety is Safety.SAFE else "unsafe"


def _count(n: int, severity: str) -> str:
    return f"{n} {severity}" if severity == "info" or n == 1 else f"{n} {severity}s"


def _pct(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "0%"


# -- Markdown subset -----------------------------------------------------------------------------

_INLINE = re.compile(
    r"`(?P<code>[^`\n]+)`"
    r"|\*\*(?P<bold>.+?)\*\*"
    r"|\[(?P<label>[^\]\n]+)\]\((?P<url>[^)\s]+)\)"
    r"|(?<![\w*])\*(?P<em>[^*\s](?:[^*\n]*[^*\s])?)\*(?![\w*])"
)
_SAFE_URL = re.compile(r"^(https?://|mailto:|#)|^[^:]*$", re.IGNORECASE)
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+(.*)$")
_NUMBER = re.compile(r"^\s{0,3}\d{1,9}[.)]\s+(.*)$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")


def safe_url(url: str) -> bool:
    """http(s), mailto, in-page and relative links; never `javascript:` or `data:`."""
    return bool(_SAFE_URL.match(url.strip()))


def inline_markdown(text: str) -> str:
    """`code`, **bold**, *emphasis* and [links](https://...); everything else escaped."""
    out: list[str] = []
    pos = 0
    for m in _INLINE.finditer(text):
        out.append(_e(text[pos : m.start()]))
        if m.group("code") is not None:
            out.append(f"<code>{_e(m.group('code'))}</code>")
        elif m.group("bold") is not None:
            out.append(f"<strong>{inline_markdown(m.group('bold'))}</strong>")
        elif m.group("url") is not None:
            url = m.group("url")
            label = inline_markdown(m.group("label"))
            out.append(f'<a href="{_e(url)}">{label}</a>' if safe_url(url) else _e(m.group(0)))
        else:
            out.append(f"<em>{inline_markdown(m.group('em'))}</em>")
        pos = m.end()
    out.append(_e(text[pos:]))
    return "".join(out)


def markdown(text: str) -> str:
    """Paragraphs, lists, code fences and headings (as bold paragraphs), plus inline markup."""
    blocks: list[str] = []
    para: list[str] = []
    items: list[str] = []
    kind = ""

    def flush_para() -> None:
        if para:
            blocks.append(f"<p>{inline_markdown(' '.join(s.strip() for s in para))}</p>")
            para.clear()

    def flush_list() -> None:
        nonlocal kind
        if items:
            body = "".join(f"<li>{inline_markdown(i)}</li>" for i in items)
            blocks.append(f"<{kind}>{body}</{kind}>")
            items.clear()
        kind = ""

    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        bullet, number = _BULLET.match(line), _NUMBER.match(line)
        heading = _HEADING.match(line)
        if stripped.startswith("```"):
            flush_para()
            flush_list()
            fence = stripped[: len(stripped) - len(stripped.lstrip("`"))]
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence):
                body.append(lines[i])
                i += 1
            blocks.append(f"<pre class='md'><code>{_e(chr(10).join(body))}</code></pre>")
        elif not stripped:
            flush_para()
            flush_list()
        elif bullet or number:
            flush_para()
            wanted = "ul" if bullet else "ol"
            if kind != wanted:
                flush_list()
                kind = wanted
            items.append((bullet or number).group(1))
        elif heading:
            flush_para()
            flush_list()
            blocks.append(f"<p><strong>{inline_markdown(heading.group(1))}</strong></p>")
        elif items and line[:1] in (" ", "\t"):
            items[-1] += " " + stripped
        else:
            flush_list()
            para.append(line)
        i += 1
    flush_para()
    flush_list()
    return "\n".join(blocks)


# -- figures -------------------------------------------------------------------------------------


@dataclass
class Tally:
    """Counts of a group of findings: per severity and per fix class."""

    severity: Counter = field(default_factory=Counter)
    fixes: Counter = field(default_factory=Counter)
    findings: list[Diagnostic] = field(default_factory=list)

    def add(self, d: Diagnostic) -> None:
        self.severity[d.severity.value] += 1
        self.fixes[fix_class(d)] += 1
        self.findings.append(d)

    @property
    def total(self) -> int:
        return len(self.findings)

    @property
    def work_left(self) -> int:
        """Findings `cuda2rocm fix` does not settle on its own: unsafe fixes and manual ones."""
        return self.fixes["unsafe"] + self.fixes["manual"]

    @property
    def sort_key(self) -> tuple:
        return (-self.work_left, -self.severity["error"], -self.total)


@dataclass
class Figures:
    summary: dict
    steps: dict[int, Tally]
    files: dict[str, Tally]
    rules: dict[str, Tally]
    total: Tally

    @classmethod
    def of(cls, result: LintResult) -> Figures:
        steps: dict[int, Tally] = {s: Tally() for s in STEPS}
        files: dict[str, Tally] = defaultdict(Tally)
        rules: dict[str, Tally] = defaultdict(Tally)
        total = Tally()
        for d in result.diagnostics:
            steps.setdefault(d.step, Tally()).add(d)
            files[d.path].add(d)
            rules[d.rule].add(d)
            total.add(d)
        return cls(json_format.summary(result), dict(sorted(steps.items())), files, rules, total)


def _directory(path: str) -> str:
    return posixpath.dirname(path.replace("\\", "/")) or "."


def _anchor(prefix: str, key: str) -> str:
    return f"{prefix}-{hashlib.sha1(key.encode('utf-8', 'replace')).hexdigest()[:12]}"


# -- code frames ---------------------------------------------------------------------------------


class _Sources:
    """Source lines for code frames, read once per file (undecodable bytes replaced)."""

    def __init__(self) -> None:
        self.cache: dict[str, LineIndex | None] = {}

    def get(self, path: str) -> LineIndex | None:
        if path not in self.cache:
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace")
                self.cache[path] = LineIndex(text)
            except (OSError, ValueError):
                self.cache[path] = None
        return self.cache[path]


def code_frame(d: Diagnostic, lines: LineIndex | None) -> str:
    """A few numbered lines around the finding with its span in <mark>; "" if unreadable."""
    p = d.position
    if lines is None or not 1 <= p.line <= len(lines.starts):
        return ""
    count = len(lines.starts)
    if count > 1 and lines.starts[-1] == len(lines.text):
        count -= 1  # the empty "line" after a final newline
    last_marked = min(max(p.end_line, p.line), count, p.line + MAX_SPAN_LINES - 1)
    rows = []
    for n in range(max(1, p.line - CONTEXT_LINES), min(count, last_marked + CONTEXT_LINES) + 1):
        raw = lines.line_text(n)
        if p.line <= n <= last_marked:
            start = p.column - 1 if n == p.line else 0
            end = p.end_column - 1 if n == p.end_line else len(raw)
            start = min(max(start, 0), len(raw))
            end = min(max(end, start + 1), len(raw))
            body = (
                _e(_printable(raw[:start]))
                + "<mark>"
                + _e(_printable(raw[start:end]))
                + "</mark>"
                + _e(_printable(raw[end:]))
            )
            cls = "line hit"
        else:
            body, cls = _e(_printable(raw)), "line"
        rows.append(f'<span class="{cls}"><span class="ln">{n}</span>{body}</span>')
    label = f"Source of {d.path} around line {p.line}"
    return f'<pre class="frame" aria-label="{_e(label)}"><code>{"".join(rows)}</code></pre>'


# -- page parts ----------------------------------------------------------------------------------

CSS = """
:root{color-scheme:light dark;--bg:#fdfdfc;--fg:#1b1c1e;--muted:#555a61;--line:#d5d7da;
--card:#f2f3f5;--code:#f4f4f2;--mark:#ffe08a;--markfg:#1b1c1e;--link:#0b57d0;
--error:#b3261e;--warning:#8a5300;--info:#0b61a4;--safe:#1e7d32;--unsafe:#8a5300;
--manual:#6a3fa0;--onbadge:#fff}
@media (prefers-color-scheme:dark){:root{--bg:#15171a;--fg:#e8e9eb;--muted:#a9aeb5;
--line:#3a3e44;--card:#1f2226;--code:#1b1d21;--mark:#7a5d00;--markfg:#fff;--link:#8ab4f8;
--error:#ff8f86;--warning:#f5b35c;--info:#8cc4ff;--safe:#7fd18a;--unsafe:#f5b35c;
--manual:#c9a8ff;--onbadge:#15171a}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,
"Segoe UI",Roboto,"Noto Sans",sans-serif}
a{color:var(--link)}p,li,dd,h2,h3,figcaption{overflow-wrap:break-word}a{overflow-wrap:anywhere}
a:focus-visible,summary:focus-visible,[tabindex]:focus-visible{outline:3px solid var(--link);
outline-offset:2px}
.skip{position:absolute;left:-9999px}.skip:focus{left:1rem;top:1rem;background:var(--bg);
padding:.5rem;z-index:1}
header,main,footer,nav{max-width:72rem;margin:0 auto;padding:0 1rem}
header{padding-top:1.5rem}
h1{font-size:1.9rem;margin:.2rem 0}h2{font-size:1.45rem;margin:2.2rem 0 .6rem;
border-bottom:1px solid var(--line);padding-bottom:.3rem}h3{font-size:1.2rem;margin:1.6rem 0 .4rem}
h4{font-size:1.05rem;margin:1.2rem 0 .3rem;overflow-wrap:anywhere}
.meta,.muted{color:var(--muted)}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3rem 1.2rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(9.5rem,1fr));gap:.6rem;
margin:1rem 0;padding:0}
.cards div{background:var(--card);border-radius:.5rem;padding:.6rem .8rem}
.cards dt{font-size:.85rem;color:var(--muted)}.cards dd{margin:0;font-size:1.6rem;font-weight:650}
.verdict{font-size:1.08rem;max-width:60rem}
.sev-error{color:var(--error)}.sev-warning{color:var(--warning)}
.sev-info{color:var(--info)}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,22rem),1fr));
gap:1rem 2rem;align-items:start}
figure{margin:0}figcaption{color:var(--muted);font-size:.9rem}
svg.chart{width:100%;height:auto;max-width:30rem}svg.donut{width:11rem;height:auto}
svg text{fill:var(--fg);font:13px system-ui,sans-serif}svg text.centre{font-size:20px;
font-weight:650}
.c-error{fill:var(--error)}.c-warning{fill:var(--warning)}.c-info{fill:var(--info)}
circle.c-safe{stroke:var(--safe)}circle.c-unsafe{stroke:var(--unsafe)}
circle.c-manual{stroke:var(--manual)}rect.track,circle.track{opacity:.25}
.legend{list-style:none;padding:0;margin:.4rem 0}.legend li{margin:.2rem 0}
.key{display:inline-block;width:.9rem;height:.9rem;border-radius:.2rem;margin-right:.4rem;
vertical-align:-.1rem}
.k-error{background:var(--error)}.k-warning{background:var(--warning)}
.k-info{background:var(--info)}.k-safe{background:var(--safe)}
.k-unsafe{background:var(--unsafe)}.k-manual{background:var(--manual)}
.scroll{overflow-x:auto;max-width:100%}
#plan-table th .muted{display:block;font-weight:normal}
table{border-collapse:collapse;width:100%;font-size:.95rem;margin:.5rem 0}
caption{text-align:left;font-weight:600;padding:.3rem 0;caption-side:top}
th,td{border-bottom:1px solid var(--line);padding:.3rem .5rem;text-align:left;
vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tbody th[scope=rowgroup]{background:var(--card);font-weight:600}
tfoot th,tfoot td{font-weight:650;border-top:2px solid var(--line)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;
font-size:.9em}
:not(pre)>code{background:var(--code);padding:.05rem .25rem;border-radius:.2rem;
overflow-wrap:anywhere}
pre{background:var(--code);border:1px solid var(--line);border-radius:.4rem;padding:.5rem 0;
overflow-x:auto;tab-size:4;line-height:1.4}
pre.md{padding:.5rem .8rem}
.frame .line{display:block;padding:0 .8rem 0 0;white-space:pre}
.frame .hit{background:color-mix(in srgb,var(--mark) 25%,transparent)}
.frame .ln{display:inline-block;min-width:3.2em;padding-right:.8em;margin-right:.6em;
text-align:right;color:var(--muted);border-right:1px solid var(--line);user-select:none}
mark{background:var(--mark);color:var(--markfg);border-radius:.15rem;
text-decoration:underline wavy var(--error) 1px;text-underline-offset:3px}
ol.findings{list-style:none;padding:0;margin:0}
.finding{border:1px solid var(--line);border-left:.35rem solid var(--line);border-radius:.4rem;
padding:.6rem .9rem;margin:.7rem 0}
.finding.error{border-left-color:var(--error)}.finding.warning{border-left-color:var(--warning)}
.finding.info{border-left-color:var(--info)}
.finding p{margin:.25rem 0}.finding .msg{font-weight:550}
.badge{display:inline-block;border-radius:.3rem;padding:0 .4rem;font-size:.8rem;
font-weight:700;color:var(--onbadge);text-transform:uppercase;letter-spacing:.03em}
.badge.error{background:var(--error)}.badge.warning{background:var(--warning)}
.badge.info{background:var(--info)}
.loc{overflow-wrap:anywhere}.nw{white-space:nowrap}
.fix.safe{color:var(--safe)}.fix.unsafe{color:var(--unsafe)}.fix.manual{color:var(--manual)}
details{margin:.4rem 0}summary{cursor:pointer;color:var(--link)}
details>div{border-left:3px solid var(--line);padding-left:.8rem;margin-top:.3rem}
.refs{margin:.3rem 0;padding-left:1.2rem;font-size:.92rem}
footer{color:var(--muted);padding:2rem 1rem 3rem;font-size:.9rem}
@media (max-width:40rem){body{font-size:15px}h1{font-size:1.5rem}.cards dd{font-size:1.3rem}}
@media print{details>div{display:block}nav,.skip{display:none}}
"""


def _legend(items: Iterable[tuple[str, str, int]], fix: bool = False) -> str:
    attr = "data-fix" if fix else "data-severity"
    rows = "".join(
        f'<li><span class="key k-{key}" aria-hidden="true"></span>'
        f'<span {attr}="{key}" data-scope="total">{n}</span> {inline_markdown(words)}</li>'
        for key, words, n in items
    )
    return f'<ul class="legend">{rows}</ul>'


def _summary_section(fig: Figures, note: str) -> str:
    s = fig.summary
    a_safe, _a_unsafe, a_total = plan.action_share(fig.total.findings)
    action_safe = (a_safe, a_total)
    total = s["diagnostics"]
    safe, unsafe = s["fixable"]["safe"], s["fixable"]["unsafe"]
    manual = total - safe - unsafe
    sev = s["by_severity"]
    cards = [
        ("files", "Files scanned", s["files"]),
        ("diagnostics", "Findings", total),
        ("error", "Errors", sev["error"]),
        ("warning", "Warnings", sev["warning"]),
        ("info", "Info", sev["info"]),
        ("safe-share", "Actions fixable automatically", _pct(*action_safe)),
    ]
    body = "".join(
        f'<div><dt>{_e(label)}</dt><dd data-figure="{key}" class="sev-{key}">{_e(value)}</dd></div>'
        for key, label, value in cards
    )
    if not total:
        verdict = (
            f"No findings in {s['files']} files: nothing this tool knows of stands between "
            "this code and ROCm."
        )
    else:
        blocking = (
            f"<strong>{sev['error']} errors</strong> break on ROCm"
            if sev["error"]
            else "Nothing found breaks outright on ROCm"
        )
        verdict = (
            f"{blocking}; {sev['warning']} warnings may give wrong results or slow code, "
            f"{sev['info']} are worth a look. Of the {a_total} actions (errors and warnings), "
            f"<code>cuda2rocm lint --fix</code> settles {a_safe} ({_pct(a_safe, a_total)}); "
            f"of all {total} findings, notes included, it settles "
            f'<strong data-figure="safe">{safe}</strong> ({_pct(safe, total)})'
            f'; <strong data-figure="unsafe">{unsafe}</strong> more have a fix to review '
            f"(<code>--unsafe-fixes</code>, {_pct(safe + unsafe, total)} in all); "
            f'<strong data-figure="manual">{manual}</strong> ({_pct(manual, total)}) '
            "need a human."
        )
    extra = f'<p class="muted">{_e(note)}</p>' if note else ""
    return (
        '<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">Readiness</h2>'
        f'<dl class="cards">{body}</dl><p class="verdict">{verdict}</p>{extra}</section>'
    )


def _plan_section(fig: Figures, paths: Sequence[str], trend: plan.Trend | None) -> str:
    """The port, per component: blockers, risks, notes, what fix settles, effort; then the
    components that stay CUDA-only, and the trend against a baseline."""
    parts = [
        '<section id="plan" aria-labelledby="plan-h"><h2 id="plan-h">The port, per component</h2>',
        "<p>A component is the nearest folder with its own build (CMakeLists.txt, setup.py, "
        "pyproject.toml), else a top-level Python package or folder. <strong>Blockers</strong> "
        "(errors) break the ROCm build or run; <strong>risks</strong> (warnings) may give wrong "
        "results or slow code; <strong>notes</strong> (info) ask for a look. Errors and "
        "warnings are the actions; <em>fix</em> counts the actions <code>cuda2rocm lint --fix"
        "</code> settles. <strong>Effort</strong>: " + inline_markdown(plan.EFFORT_BASIS) + ".</p>",
    ]
    comps = plan.components(fig.total.findings, paths)
    if comps:
        head = "".join(
            f'<th scope="col"{" class=n" if n else ""}>{h}</th>'
            for h, n in (
                ("Component", 0), ("Blockers", 1), ("Risks", 1), ("Notes", 1),
                ("Fix settles", 1), ("To review", 1), ("By hand", 1), ("Effort", 0),
            )
        )  # fmt: skip
        rows = []
        for c in comps:
            share = f"{c.safe} of {c.actions}" if c.actions else "-"
            files = f"{c.files} file" + ("s" if c.files != 1 else "")
            rows.append(
                f'<tr data-component="{_e(c.name)}"><th scope="row"><code>{_e(c.name)}</code> '
                f'<span class="muted">{_e(c.kind)}, {files}</span></th>'
                f'<td class="n" data-severity="error">{c.blockers}</td>'
                f'<td class="n" data-severity="warning">{c.risks}</td>'
                f'<td class="n" data-severity="info">{c.notes}</td>'
                f'<td class="n" data-fix="safe">{_e(share)}</td>'
                f'<td class="n" data-fix="unsafe">{c.unsafe}</td>'
                f'<td class="n" data-fix="manual">{c.manual}</td>'
                f'<td data-effort="{c.effort}">{_e(c.effort)} '
                f'<span class="muted">({c.decisions} decisions)</span></td></tr>'
            )
        parts.append(
            '<div class="scroll" role="region" aria-labelledby="plan-cap" tabindex="0">'
            '<table id="plan-table"><caption id="plan-cap">Per component, most work first'
            f"</caption><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            "</div>"
        )
    else:
        parts.append("<p>No component has findings.</p>")
    only = plan.cuda_only(fig.total.findings)
    parts.append('<h3 id="cuda-only">Components that stay CUDA-only</h3>')
    if only:
        items = "".join(
            f'<li data-cuda-only="{_e(o.path)}"><code>{_e(o.path)}:{o.line}</code> '
            f"({'a decision the project took' if o.decided else 'a decision to take'}): "
            f"{inline_markdown(o.why)}</li>"
            for o in only
        )
        parts.append(
            "<p>The ROCm build leaves these out: their findings are not counted above "
            "(<code>cuda2rocm lint --show-guarded</code> lists them). Porting one is a "
            f"decision, not a list of edits.</p><ul>{items}</ul>"
        )
    else:
        parts.append(
            "<p>None found: every component this run read is built for ROCm, or is code to "
            "port. Declare one kept NVIDIA-only by decision with the <code>cuda-only</code> "
            "configuration key.</p>"
        )
    parts.append('<h3 id="trend">Against the baseline</h3>')
    if trend is None:
        parts.append(
            "<p>No baseline: <code>cuda2rocm lint --write-baseline FILE</code> records "
            "today's findings; <code>cuda2rocm report --baseline FILE</code> then shows what "
            "is new and what was fixed since.</p>"
        )
    else:
        parts.append(
            f'<dl class="cards"><div><dt>Recorded</dt><dd data-trend="recorded">{trend.recorded}'
            f'</dd></div><div><dt>Fixed since</dt><dd data-trend="resolved">{trend.resolved}'
            f'</dd></div><div><dt>Still there</dt><dd data-trend="still">{trend.still}</dd>'
            f'</div><div><dt>New since</dt><dd data-trend="new">{trend.new}</dd></div></dl>'
            '<p class="muted">Findings the baseline records are not counted elsewhere on '
            'this page; "fixed since" counts its entries that match nothing any more (fixed '
            "or changed code).</p>"
        )
    parts.append("</section>")
    return "".join(parts)


def _steps_section(fig: Figures) -> str:
    shown = [(s, t) for s, t in fig.steps.items() if t.total]
    done = [step_label(s) for s, t in fig.steps.items() if s in STEPS and s and not t.total]
    rows = [
        (
            step_label(s),
            [svg.Segment(k, k if k == "info" else k + "s", t.severity[k]) for k in SEVERITIES],
        )
        for s, t in shown
    ]
    desc = "; ".join(
        f"{step_label(s)}: {t.total} ("
        + ", ".join(f"{t.severity[k]} {k}" for k in SEVERITIES)
        + ")"
        for s, t in shown
    )
    chart = svg.stacked_bars(
        rows, title="Findings per porting step, by severity", desc=desc, chart_id="steps-chart"
    )
    head = "".join(
        f'<th scope="col" class="n">{h}</th>'
        for h in ("Errors", "Warnings", "Info", "Findings", "Safe fix", "Unsafe fix", "Manual")
    )
    body = []
    for s, t in shown:
        name = STEPS.get(s, "general")
        cells = [f'<td class="n" data-severity="{k}">{t.severity[k]}</td>' for k in SEVERITIES]
        cells.append(f'<td class="n" data-figure="total">{t.total}</td>')
        cells += [f'<td class="n" data-fix="{k}">{t.fixes[k]}</td>' for k in FIX_CLASSES]
        body.append(
            f'<tr data-step="{s}" data-step-name="{_e(name)}">'
            f'<th scope="row">{_e(step_label(s))}</th>{"".join(cells)}</tr>'
        )
    t = fig.total
    foot = (
        '<tr data-step="all"><th scope="row">All steps</th>'
        + "".join(f'<td class="n">{t.severity[k]}</td>' for k in SEVERITIES)
        + f'<td class="n">{t.total}</td>'
        + "".join(f'<td class="n">{t.fixes[k]}</td>' for k in FIX_CLASSES)
        + "</tr>"
    )
    legend = _legend((k, k if k == "info" else k + "s", fig.total.severity[k]) for k in SEVERITIES)
    return (
        '<section id="steps" aria-labelledby="steps-h"><h2 id="steps-h">Findings per checklist '
        "step</h2><p>The porting checklist: (1) device, (2) mixed precision, (3) distributed, "
        "(4) custom ops and extensions, (5) memory and data loading, (6) build and packaging, "
        "(7) environment. A step with no findings is done as far as this tool can tell"
        + (f" ({_e(', '.join(done))}; not drawn)" if done else "")
        + ".</p>"
        f'<div class="grid"><figure>{chart}<figcaption>Findings per step, stacked by severity '
        f"(the table below has the same figures).</figcaption></figure>{legend}</div>"
        '<div class="scroll" role="region" aria-labelledby="steps-cap" tabindex="0">'
        '<table id="steps-table"><caption id="steps-cap">Findings per porting step and '
        f'severity, and how they can be fixed</caption><thead><tr><th scope="col">Step</th>{head}'
        f"</tr></thead><tbody>{''.join(body)}</tbody><tfoot>{foot}</tfoot></table></div>"
        "</section>"
    )


def _fixes_section(fig: Figures, catalogue: dict[str, RuleSpec]) -> str:
    t = fig.total
    total = t.total
    segments = [
        svg.Segment("safe", "fixable automatically", t.fixes["safe"]),
        svg.Segment("unsafe", "fixable with --unsafe-fixes after review", t.fixes["unsafe"]),
        svg.Segment("manual", "need a human", t.fixes["manual"]),
    ]
    desc = ", ".join(f"{s.value} {s.label} ({_pct(s.value, total)})" for s in segments)
    chart = svg.donut(
        segments,
        title="How the findings can be fixed",
        desc=f"Of {total} findings: {desc}.",
        chart_id="fix-chart",
        centre=_pct(t.fixes["safe"], total),
    )
    legend = _legend(((k, FIX_WORDS[k], t.fixes[k]) for k in FIX_CLASSES), fix=True)
    rows = []
    for rule, tally in sorted(
        fig.rules.items(), key=lambda kv: (kv[1].sort_key, catalogue_code(catalogue, kv[0]))
    ):
        spec = catalogue.get(rule)
        code = spec.code if spec else ""
        step = step_label(spec.step) if spec else ""
        what = sorted({d.fix.description for d in tally.findings if d.fix and d.fix.description})
        if what:
            does = "; ".join(inline_markdown(w) for w in what)
        elif tally.fixes["manual"]:
            does = '<span class="muted">diagnosis only: a human decides the change</span>'
        else:
            does = ""
        cells = "".join(f'<td class="n" data-fix="{k}">{tally.fixes[k]}</td>' for k in FIX_CLASSES)
        rows.append(
            f'<tr data-rule="{_e(rule)}"><th scope="row"><code>{_e(code)}</code> '
            f'<span class="nw">{_e(rule)}</span></th>'
            f'<td>{_e(step)}</td><td class="n" data-figure="total">{tally.total}</td>'
            f"{cells}<td>{does}</td></tr>"
        )
    head = "".join(
        f'<th scope="col"{" class=n" if n else ""}>{h}</th>'
        for h, n in (
            ("Rule", 0),
            ("Step", 0),
            ("Findings", 1),
            ("Safe fix", 1),
            ("Unsafe fix", 1),
            ("Manual", 1),
            ("What the fix does", 0),
        )
    )
    return (
        '<section id="fixes" aria-labelledby="fixes-h"><h2 id="fixes-h">What '
        "<code>cuda2rocm lint --fix</code> does, and what is left</h2>"
        "<p><strong>Safe</strong> fixes keep behaviour on CUDA and are correct on ROCm; "
        "<code>cuda2rocm lint --fix</code> applies them. <strong>Unsafe</strong> fixes are "
        "probably right but need review; <code>--unsafe-fixes</code> applies them too. The rest is "
        "diagnosis only. The share is an estimate: overlapping fixes are applied in later "
        "rounds, and a fix may leave a smaller finding behind.</p>"
        f'<div class="grid"><figure>{chart}<figcaption>Share of findings fixable automatically '
        f"(centre: safe fixes).</figcaption></figure>{legend}</div>"
        '<div class="scroll" role="region" aria-labelledby="rules-cap" tabindex="0">'
        '<table id="rules-table"><caption id="rules-cap">Findings per rule and how they can '
        f"be fixed, most manual work first</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def catalogue_code(catalogue: dict[str, RuleSpec], rule: str) -> str:
    spec = catalogue.get(rule)
    return spec.code if spec else rule


def _grouped(fig: Figures) -> list[tuple[str, Tally, list[tuple[str, Tally]]]]:
    """Directories, then their files, each sorted by work left (then errors, findings, name)."""
    dirs: dict[str, list[tuple[str, Tally]]] = defaultdict(list)
    for path, tally in fig.files.items():
        dirs[_directory(path)].append((path, tally))
    out = []
    for directory, files in dirs.items():
        whole = Tally()
        for _, tally in files:
            for d in tally.findings:
                whole.add(d)
        files.sort(key=lambda ft: (ft[1].sort_key, ft[0]))
        out.append((directory, whole, files))
    out.sort(key=lambda g: (g[1].sort_key, g[0]))
    return out


def _files_section(groups) -> str:
    head = "".join(
        f'<th scope="col" class="n">{h}</th>'
        for h in ("Work left", "Errors", "Warnings", "Info", "Safe fix", "Unsafe fix", "Manual")
    )
    body = []
    for directory, whole, files in groups:
        body.append(
            f'<tbody><tr class="dir"><th scope="rowgroup" colspan="8">{_e(directory)}/ '
            f'<span class="muted">— {whole.total} findings, {whole.work_left} left after '
            "<code>fix</code></span></th></tr>"
        )
        for path, t in files:
            cells = [f'<td class="n">{t.work_left}</td>']
            cells += [f'<td class="n">{t.severity[k]}</td>' for k in SEVERITIES]
            cells += [f'<td class="n">{t.fixes[k]}</td>' for k in FIX_CLASSES]
            body.append(
                f'<tr data-path="{_e(path)}"><th scope="row"><a class="loc" '
                f'href="#{_anchor("file", path)}">{_e(posixpath.basename(path) or path)}</a>'
                f"</th>{''.join(cells)}</tr>"
            )
        body.append("</tbody>")
    return (
        '<section id="files" aria-labelledby="files-h"><h2 id="files-h">Files, most work '
        "first</h2><p>Work left counts the findings <code>cuda2rocm fix</code> does not "
        "settle on its own: unsafe fixes to review and manual changes.</p>"
        '<div class="scroll" role="region" aria-labelledby="files-cap" tabindex="0">'
        '<table id="files-table"><caption id="files-cap">Findings per directory and file, '
        f'sorted by work left</caption><thead><tr><th scope="col">File</th>{head}</tr></thead>'
        f"{''.join(body)}</table></div></section>"
    )


def _fix_line(d: Diagnostic) -> str:
    kind = fix_class(d)
    if kind == "manual":
        return '<p class="fix manual">No automatic fix: a human decides the change.</p>'
    what = inline_markdown(d.fix.description or "a fix is available") if d.fix else ""
    how = "cuda2rocm lint --fix" if kind == "safe" else "cuda2rocm lint --fix --unsafe-fixes"
    word = "Safe fix" if kind == "safe" else "Unsafe fix (review it)"
    return f'<p class="fix {kind}">{word}, <code>{how}</code>: {what}</p>'


def _finding(
    d: Diagnostic, anchor: str, spec: RuleSpec | None, frame: str, first: str | None
) -> str:
    p = d.position
    sev = d.severity.value
    where = f"{d.path}:{p.line}:{p.column}"
    parts = [
        f'<li id="{anchor}" class="finding {sev}" data-rule="{_e(d.rule)}">',
        f'<p><span class="badge {sev}">{sev}</span> <a class="loc" href="#{anchor}">'
        f"{_e(where)}</a> <code>{_e(d.code)}</code> {_e(d.rule)} "
        f'<span class="muted">· step {_e(step_label(d.step))}</span></p>',
        f'<p class="msg">{inline_markdown(_printable(d.message))}</p>',
        frame,
        _fix_line(d),
    ]
    if spec is not None:
        parts.append(f"<p>{inline_markdown(spec.summary)}</p>")
        if first is None:
            refs = "".join(
                f'<li><a href="{_e(r.url)}" rel="noreferrer">{_e(r.title)}</a></li>'
                if safe_url(r.url)
                else f"<li>{_e(r.title)} ({_e(r.url)})</li>"
                for r in spec.references
            )
            parts.append(
                f"<details><summary>Why, and how to fix it ({_e(spec.id)})</summary>"
                f"<div>{markdown(spec.explanation)}</div></details>"
                f'<p class="muted">References:</p><ul class="refs">{refs}</ul>'
            )
        else:
            parts.append(
                f'<p class="muted">Explanation and references: see <a href="#{first}">the '
                f"first {_e(spec.id)} finding in this file</a>.</p>"
            )
    parts.append("</li>")
    return "".join(parts)


def _findings_section(groups, catalogue: dict[str, RuleSpec]) -> str:
    sources = _Sources()
    out = [
        '<section id="findings" aria-labelledby="findings-h"><h2 id="findings-h">Findings</h2>'
        "<p>Per file, errors first, then warnings and info, each in source order. "
        "Each rule is explained in full at its first finding "
        "in a file.</p>"
    ]
    for directory, whole, files in groups:
        out.append(
            f'<section aria-label="{_e(directory)}"><h3>{_e(directory)}/ '
            f'<span class="muted">({whole.total})</span></h3>'
        )
        for path, t in files:
            fid = _anchor("file", path)
            counts = ", ".join(_count(t.severity[k], k) for k in SEVERITIES if t.severity[k])
            out.append(
                f'<section id="{fid}" aria-labelledby="{fid}-h"><h4 id="{fid}-h"><code>'
                f'{_e(path)}</code></h4><p class="muted">{t.total} findings ({counts}); '
                f'{t.work_left} left after <code>fix</code>.</p><ol class="findings">'
            )
            firsts: dict[str, str] = {}
            lines = sources.get(path)
            by_severity = sorted(t.findings, key=lambda x: (x.severity.rank, x.sort_key))
            for i, d in enumerate(by_severity, 1):
                anchor = f"{fid}-{i}"
                first = firsts.get(d.rule)
                firsts.setdefault(d.rule, anchor)
                out.append(_finding(d, anchor, catalogue.get(d.rule), code_frame(d, lines), first))
            out.append("</ol></section>")
        out.append("</section>")
    out.append("</section>")
    return "".join(out)


def _notices_section(result: LintResult) -> str:
    if not result.notices:
        return ""
    items = "".join(
        f"<li><code>{_e(_printable(n.path))}</code>: {_e(_printable(n.message))}</li>"
        for n in result.notices
    )
    return (
        '<section id="notices" aria-labelledby="notices-h"><h2 id="notices-h">Files passed '
        f"over</h2><ul>{items}</ul></section>"
    )


def render(
    result: LintResult,
    *,
    paths: Sequence[str] = (),
    title: str = "ROCm readiness report",
    note: str = "",
    generated: _dt.datetime | None = None,
    catalogue: Iterable[RuleSpec] | None = None,
    trend: plan.Trend | None = None,
) -> str:
    """The whole page. `note` is shown under the summary (e.g. what a baseline hid); `trend`
    compares the run with its baseline."""
    rules = {r.id: r for r in (catalogue if catalogue is not None else load_catalogue())}
    fig = Figures.of(result)
    groups = _grouped(fig)
    when = (generated or _dt.datetime.now(_dt.timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    scanned = ", ".join(paths) if paths else "."
    nav = [("summary", "Readiness"), ("plan", "Per component"), ("steps", "Per step")]
    nav.append(("fixes", "Fixes"))
    if groups:
        nav += [("files", "Files"), ("findings", "Findings")]
    if result.notices:
        nav.append(("notices", "Files passed over"))
    nav_html = "".join(f'<li><a href="#{a}">{_e(label)}</a></li>' for a, label in nav)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">",
        f'<meta name="generator" content="cuda2rocm {_e(__version__)}">',
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        '<a class="skip" href="#main">Skip to the report</a>',
        f'<header><h1>{_e(title)}</h1><p class="meta">Scanned <code>{_e(scanned)}</code> '
        f"with cuda2rocm {_e(__version__)} on {_e(when)}. Static analysis: what breaks or "
        "misbehaves when this PyTorch code moves from NVIDIA CUDA to AMD ROCm.</p></header>",
        f'<nav aria-label="Contents"><ul>{nav_html}</ul></nav>',
        '<main id="main">',
        _summary_section(fig, note),
        _plan_section(fig, paths, trend),
        _steps_section(fig),
        _fixes_section(fig, rules),
    ]
    if groups:
        parts += [_files_section(groups), _findings_section(groups, rules)]
    parts += [
        _notices_section(result),
        "</main>",
        "<footer>Generated by cuda2rocm. Figures match <code>cuda2rocm lint --format json"
        "</code> on the same paths and configuration. <code>cuda2rocm explain RULE</code> "
        "shows a rule's documentation with examples.</footer>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"
