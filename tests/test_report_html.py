"""`cuda2rocm report`: the HTML readiness report agrees with the JSON and text outputs, is
self-contained, escapes what it shows, and renders in a real browser."""

from __future__ import annotations

import html
import json
import re
import struct
import subprocess
import sys
import zlib
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import EXAMPLES, ROOT, run_cli

from cuda2rocm.engine import LintResult
from cuda2rocm.model import STEPS, Diagnostic, Edit, Fix, Position, Safety, Severity
from cuda2rocm.report import html as html_report

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "artifacts"


class _Page(HTMLParser):
    """Every tag with its attributes, the title, and the text of each element carrying a
    figure (`data-figure`, `data-severity`, `data-fix`) with the row (`<tr data-*>`) it is in."""

    FIGURE_KEYS = ("data-figure", "data-severity", "data-fix")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.figures: list[tuple[dict, dict, str]] = []
        self.title = ""
        self._row: dict = {}
        self._open: tuple[str, dict] | None = None
        self._text: list[str] = []
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "tr":
            self._row = a
        if tag == "title" and not self.title:
            self._in_title = True
        if any(k in a for k in self.FIGURE_KEYS):
            self._open, self._text = (tag, a), []

    def handle_endtag(self, tag):
        if tag == "tr":
            self._row = {}
        if tag == "title":
            self._in_title = False
        if self._open and tag == self._open[0]:
            self.figures.append((dict(self._row), self._open[1], "".join(self._text).strip()))
            self._open = None

    def handle_data(self, data):
        if self._open:
            self._text.append(data)
        if self._in_title:
            self.title += data

    def figure(self, key: str) -> str:
        return next(t for row, a, t in self.figures if a.get("data-figure") == key and not row)

    def rows(self, attr: str) -> dict[str, dict[str, int]]:
        """row key (e.g. data-step) -> {severity / fix class / "total": number}."""
        out: dict[str, dict[str, int]] = {}
        for row, a, text in self.figures:
            if attr in row:
                key = a.get("data-severity") or a.get("data-fix") or a["data-figure"]
                out.setdefault(row[attr], {})[key] = int(text)
        return out


def _parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """(report page, JSON document, text output, statistics output) for examples/."""
    out = tmp_path_factory.mktemp("report") / "report.html"
    made = run_cli("report", str(EXAMPLES), "-o", str(out))
    assert made.returncode == 0, made.stderr
    assert f"Wrote {out}" in made.stderr
    lint = run_cli("lint", "--format", "json", str(EXAMPLES))
    assert lint.returncode == 1, lint.stderr
    text = run_cli("lint", str(EXAMPLES))
    stats = run_cli("lint", "--statistics", str(EXAMPLES))
    return out.read_text(encoding="utf-8"), json.loads(lint.stdout), text.stdout, stats.stdout


def _step_figures(document: dict) -> dict[str, dict[str, int]]:
    """Per step number: severities, fix classes and total, counted from the JSON findings."""
    out: dict[str, dict[str, int]] = {str(s): Counter() for s in STEPS}
    for d in document["diagnostics"]:
        c = out.setdefault(str(d["step"]), Counter())
        c[d["severity"]] += 1
        c[d["fix"]["safety"] if d["fix"] else "manual"] += 1
        c["total"] += 1
    keys = ("error", "warning", "info", "safe", "unsafe", "manual", "total")
    return {s: {k: c[k] for k in keys} for s, c in out.items()}


def test_summary_figures_match_the_json_output(examples):
    page, document, _, _ = examples
    summary = document["summary"]
    p = _parse(page)
    assert summary["diagnostics"] > 0
    assert int(p.figure("files")) == summary["files"]
    assert int(p.figure("diagnostics")) == summary["diagnostics"]
    for severity, n in summary["by_severity"].items():
        assert int(p.figure(severity)) == n
    assert int(p.figure("safe")) == summary["fixable"]["safe"]
    assert int(p.figure("unsafe")) == summary["fixable"]["unsafe"]
    manual = summary["diagnostics"] - summary["fixable"]["safe"] - summary["fixable"]["unsafe"]
    assert int(p.figure("manual")) == manual
    # The share of actions (errors and warnings) a safe fix settles, never of notes.
    actions = [
        d
        for d in document["diagnostics"]
        if d["severity"] != "info" and d["rule"] != "cuda-only-component"
    ]
    safe = sum(1 for d in actions if d["fix"] and d["fix"]["safety"] == "safe")
    assert p.figure("safe-share") == f"{round(100 * safe / len(actions))}%"


def test_per_step_and_per_rule_figures_match_the_json_output(examples):
    page, document, _, _ = examples
    p = _parse(page)
    steps = p.rows("data-step")
    expected = _step_figures(document)
    # Steps without findings are not drawn.
    assert {k: v for k, v in steps.items() if k != "all"} == {
        k: v for k, v in expected.items() if v["total"]
    }
    names = {r["data-step"]: r["data-step-name"] for r, _, _ in p.figures if "data-step-name" in r}
    by_step = {names[s]: f["total"] for s, f in expected.items() if f["total"]}
    assert by_step == document["summary"]["by_step"]
    rules = p.rows("data-rule")
    assert {r: f["total"] for r, f in rules.items()} == document["summary"]["by_rule"]
    fixable = Counter()
    for f in rules.values():
        fixable.update({k: f[k] for k in ("safe", "unsafe")})
    assert dict(fixable) == document["summary"]["fixable"]


def test_text_summary_and_statistics_show_the_same_step_figures(examples):
    page, _, text, stats = examples
    steps = _parse(page).rows("data-step")
    labels = {str(s): html_report.step_label(s) for s in STEPS}
    text_rows, stat_rows = {}, {}
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line) if c.strip()]
        if len(cells) == 5 and cells[0] in labels.values():
            text_rows[cells[0]] = [int(c) for c in cells[1:]]
    for line in stats.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line) if c.strip()]
        if len(cells) == 2 and cells[0] in labels.values():
            stat_rows[cells[0]] = int(cells[1])
    expected_text, expected_stats = {}, {}
    for step, f in steps.items():
        if step == "all" or not f["total"]:
            continue
        label = labels[step]
        fixable = f["safe"] + f["unsafe"]
        expected_text[label] = [f["error"], f["warning"], f["info"], fixable]
        expected_stats[label] = f["total"]
    assert text_rows == expected_text
    assert stat_rows == expected_stats


def test_every_finding_is_shown_with_its_path_frame_and_rule(examples):
    page, document, _, _ = examples
    for d in document["diagnostics"]:
        where = html.escape(f"{d['path']}:{d['line']}:{d['column']}")
        assert where in page, where
    p = _parse(page)
    findings = [a for tag, a in p.tags if tag == "li" and "finding" in a.get("class", "")]
    assert len(findings) == len(document["diagnostics"])
    assert sum(1 for tag, _ in p.tags if tag == "mark") >= len(findings) - 1
    assert sum(1 for tag, _ in p.tags if tag == "details") >= len(document["summary"]["by_rule"])
    # The rule explanation is rendered from Markdown, not shown raw.
    assert "<strong>Why it breaks on ROCm.</strong>" in page
    assert "**Why it breaks on ROCm.**" not in page


def test_report_is_self_contained_and_semantic(examples):
    page, _, _, _ = examples
    lowered = page.lower()
    for needle in ("<script", "<link", "@import", "url(", "<img", "<iframe", "<object"):
        assert needle not in lowered, needle
    p = _parse(page)
    for tag, attrs in p.tags:
        assert "src" not in attrs, (tag, attrs)
        if "href" in attrs:
            href = attrs["href"]
            assert tag == "a", (tag, attrs)
            assert href.startswith(("#", "https://", "http://")), href
    tags = {tag for tag, _ in p.tags}
    assert {"header", "nav", "main", "section", "table", "caption", "svg", "details"} <= tags
    assert all("scope" in a for tag, a in p.tags if tag == "th")
    assert any(a.get("role") == "img" and "aria-labelledby" in a for t, a in p.tags if t == "svg")
    assert p.title.startswith("ROCm readiness report")
    assert 'name="viewport"' in page and "prefers-color-scheme" in page
    assert not re.search(r"\bwidth:\s*\d{3,}px", page)  # nothing fixed wide


def test_paths_messages_and_source_are_escaped(tmp_path):
    nasty = tmp_path / "<b>dir" / "<img src=x onerror=alert(1)>.py"
    nasty.parent.mkdir()
    nasty.write_text(
        'import torch\nx = torch.device("hip")  # <script>alert(1)</script>\n', encoding="utf-8"
    )
    out = tmp_path / "out.html"
    made = run_cli(
        "report", ".", "-o", str(out), "--title", "<script>alert(2)</script>", cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    page = out.read_text(encoding="utf-8")
    assert "device-string-hip" in page
    for raw in ("<script", "<img", "<b>dir", "alert(1)</script>", "alert(2)</script>"):
        assert raw not in page, raw
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;.py" in page
    assert "&lt;b&gt;dir" in page


def test_report_to_stdout_with_baseline_and_unwritable_output(tmp_path):
    (tmp_path / "a.py").write_text('import torch\nx = torch.device("hip")\n', encoding="utf-8")
    shown = run_cli("report", ".", "-o", "-", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert _parse(shown.stdout).figure("diagnostics") == "1"
    made = run_cli("lint", ".", "--write-baseline", "base.json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    hidden = run_cli("report", ".", "-o", "-", "--baseline", "base.json", cwd=tmp_path)
    assert hidden.returncode == 0, hidden.stderr
    assert _parse(hidden.stdout).figure("diagnostics") == "0"
    assert "Baseline base.json: 1 accepted findings are not counted here." in hidden.stdout
    lint = run_cli("lint", ".", "--format", "json", "--baseline", "base.json", cwd=tmp_path)
    assert json.loads(lint.stdout)["summary"]["diagnostics"] == 0
    bad = run_cli("report", ".", "-o", str(tmp_path / "missing" / "r.html"), cwd=tmp_path)
    assert bad.returncode == 2 and "cannot write" in bad.stderr


def test_markdown_subset_escapes_and_refuses_unsafe_links():
    md = html_report.markdown(
        "**Bold** and `a<b>` <i>raw</i> & *em*; [doc](https://example.org/a?b=1&c=2), "
        "[bad](javascript:alert(1)).\n\n- one `x`\n- two\n  continued\n\n1. first\n\n"
        "```cpp\nif (a < b) { *p = 1; }\n```\n\n# Head"
    )
    assert "<strong>Bold</strong>" in md
    assert "<code>a&lt;b&gt;</code>" in md
    assert "&lt;i&gt;raw&lt;/i&gt; &amp;" in md
    assert "<em>em</em>" in md
    assert '<a href="https://example.org/a?b=1&amp;c=2">doc</a>' in md
    assert "javascript:" not in md.replace("[bad](javascript:alert(1))", "")
    assert 'href="javascript' not in md
    assert "<ul><li>one <code>x</code></li><li>two continued</li></ul>" in md
    assert "<ol><li>first</li></ol>" in md
    assert "<pre class='md'><code>if (a &lt; b) { *p = 1; }</code></pre>" in md
    assert "<p><strong>Head</strong></p>" in md
    assert html_report.inline_markdown("tid * 32 and x*y") == "tid * 32 and x*y"


def _diag(path, line, column, end_line, end_column, severity, step, fix=None):
    return Diagnostic(
        path=str(path),
        rule="warp-size-32",
        code="CR404",
        severity=severity,
        step=step,
        position=Position(line, column, end_line, end_column),
        message="a <message>",
        fix=fix,
    )


def test_render_unit_frames_spans_and_empty_result(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("int a;\nint lane = tid & 31;\nint b;\nint c;\n", encoding="utf-8")
    fix = Fix(Safety.UNSAFE, (Edit(0, 1, "x", "i"),), "use `CUDA2ROCM_WARP_SIZE`")
    result = LintResult(
        diagnostics=[
            _diag(src, 2, 12, 2, 20, Severity.ERROR, 4, fix),
            _diag(src, 1, 1, 3, 3, Severity.INFO, 0),  # multi-line span, general step
            _diag(tmp_path / "gone.cu", 9, 1, 9, 2, Severity.WARNING, 4),  # unreadable
        ],
        files=2,
    )
    page = html_report.render(result, paths=[str(tmp_path)])
    assert '<span class="ln">2</span>int lane = <mark>tid &amp; 31</mark>;' in page
    assert "<mark>int a;</mark>" in page and "<mark>in</mark>t b;" in page
    assert '<span class="ln">5</span>' not in page
    assert "a &lt;message&gt;" in page
    assert "<code>CUDA2ROCM_WARP_SIZE</code>" in page
    rows = _parse(page).rows("data-step")
    assert rows["0"]["info"] == 1 and rows["4"]["unsafe"] == 1 and rows["4"]["manual"] == 1
    empty = html_report.render(LintResult(files=3))
    assert "No findings in 3 files" in empty and 'id="findings"' not in empty


# -- a real browser ------------------------------------------------------------------------------


def _png(data: bytes, rows: int) -> tuple[int, int, set]:
    """(width, height, distinct pixels of the first `rows` rows) of an 8-bit RGB(A) PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(idat)
    assert len(raw) == height * (stride + 1)
    prev = bytearray(stride)
    pixels = set()
    for y in range(min(rows, height)):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        pixels.update(bytes(line[i : i + bpp]) for i in range(0, stride, bpp))
        prev = line
    return width, height, pixels


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (CI installs it)")
def test_report_renders_in_headless_chromium(examples, tmp_path):
    page = examples[0]
    report = ARTIFACTS / "report-examples.html"
    shot = ARTIFACTS / "report-examples.png"
    ARTIFACTS.mkdir(exist_ok=True)
    report.write_text(page, encoding="utf-8")
    shot.unlink(missing_ok=True)
    url = report.resolve().as_uri()
    run = _chromium(
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--window-size=1280,2000",
        "--enable-logging=stderr",
        "--v=0",
        url,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    problems = [
        line for line in run.stderr.splitlines() if "Uncaught" in line or "Refused to load" in line
    ]
    assert not problems, problems
    width, height, pixels = _png(shot.read_bytes(), rows=300)
    assert (width, height) == (1280, 2000)
    assert len(pixels) > 20, "the screenshot is blank"
    dom = _chromium(tmp_path / "profile2", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "<title>ROCm readiness report: examples</title>" in dom.stdout
    assert 'id="summary"' in dom.stdout


def _layout():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import report_screenshots
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return report_screenshots


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (CI installs it)")
def test_report_fits_desktop_and_phone_widths(examples):
    """No sideways scrolling at 1280 px or at 500 px (headless Chromium's narrowest window):
    wide tables and code frames scroll inside their own boxes. The probe itself catches a page
    that does overflow."""
    layout = _layout()
    for width, height in layout.WIDTHS.values():
        facts = layout.probe(examples[0], width, height)
        assert facts["viewport"] == width
        assert facts["page"] <= width and not facts["outside"], facts
    wide = examples[0].replace("</main>", '<div style="width:3000px">x</div></main>', 1)
    assert wide != examples[0]
    facts = layout.probe(wide, *layout.WIDTHS["phone"])
    assert facts["page"] > facts["viewport"] and "DIV" in facts["outside"]
