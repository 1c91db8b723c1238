"""Render the HTML report of real projects in headless Chromium, at desktop and phone width.

    python bench/report_screenshots.py OUT_DIR TREE... [--tool CMD]

For each tree: `report` writes the page, Chromium takes a screenshot at 1280 px and at 500 px (the
narrowest window headless Chromium lays out; the report's phone layout starts below 40rem), and a
probe copy of the page (the same page with its Content-Security-Policy lifted and a script
appended) reports whether the page scrolls sideways and which elements poke past the viewport
outside any scrolling box. Screenshots stay in OUT_DIR: they show the projects' code, so they are
never committed. tests/test_report_html.py runs the same probe on the example project.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
WIDTHS = {"desktop": (1280, 2000), "phone": (500, 1100)}
#: Appended to the probe copy: the page's and viewport's widths, and elements that stick out
#: past the viewport's right edge without an ancestor that scrolls or clips them.
_PROBE = """<script>
const clipped = e => { for (let p = e.parentElement; p; p = p.parentElement) {
  const o = getComputedStyle(p).overflowX; if (o !== "visible") return true; } return false; };
const out = [...document.querySelectorAll("body *")].filter(e =>
  e.getBoundingClientRect().right > innerWidth + 1 && !clipped(e)).map(e => e.tagName);
document.body.setAttribute("data-probe", JSON.stringify(
  {page: document.documentElement.scrollWidth, viewport: innerWidth, outside: out.slice(0, 8)}));
</script>"""


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess:
    """Headless Chromium with a throwaway profile and no network features."""
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
        check=False,
    )


def probe(page: str, width: int, height: int) -> dict:
    """Layout facts of `page` (the report's HTML) in a window of that size."""
    lifted = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "probe.html"
        copy.write_text(lifted.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
        run = chromium(
            Path(tmp) / "profile", f"--window-size={width},{height}", "--dump-dom", copy.as_uri()
        )
    found = re.search(r'data-probe="([^"]*)"', run.stdout)
    if run.returncode or not found:
        raise RuntimeError(f"chromium gave no probe: {run.stderr[-800:]}")
    return json.loads(found.group(1).replace("&quot;", '"'))


def screenshot(page_path: Path, shot: Path, width: int, height: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = chromium(
            Path(tmp) / "profile",
            f"--screenshot={shot}",
            f"--window-size={width},{height}",
            page_path.resolve().as_uri(),
        )
    if run.returncode or not shot.is_file():
        raise RuntimeError(f"chromium gave no screenshot: {run.stderr[-800:]}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--tool", default=f"{shlex.quote(sys.executable)} -m cuda2rocm")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    bad = 0
    for tree in args.trees:
        page_path = args.out / f"{tree.name}.html"
        cmd = [*shlex.split(args.tool), "report", "--no-cache", str(tree), "-o", str(page_path)]
        subprocess.run(cmd, capture_output=True, check=False)
        if not page_path.is_file():
            print(f"{tree.name}: no report written")
            bad += 1
            continue
        page = page_path.read_text(encoding="utf-8")
        for name, (width, height) in WIDTHS.items():
            screenshot(page_path, args.out / f"{tree.name}-{name}.png", width, height)
            facts = probe(page, width, height)
            sideways = facts["page"] > facts["viewport"] or facts["outside"]
            bad += bool(sideways)
            print(
                f"{tree.name} {name}: page {facts['page']} px in {facts['viewport']} px, "
                f"sticking out: {facts['outside'] or 'none'}"
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
