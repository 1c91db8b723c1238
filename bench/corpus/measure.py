"""Lint every corpus project and print its error/warning counts, by half (README.md).

    python bench/corpus/measure.py CORPUS_DIR [--tool CMD] [--json-dir DIR] [--only NAME ...]

CORPUS_DIR holds each project of projects.toml extracted at its commit as OWNER+NAME. Each is
linted with ``CMD lint --no-cache --format json --show-guarded --exit-zero`` (CMD defaults to
``python -m cuda2rocm``), so "reported" counts what a user sees and "guarded" what the context
model dropped. With --json-dir the raw reports are kept (one OWNER+NAME.json each) for
bench/corpus/sample.py; with --from-json the lint is skipped and those reports are read back.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent


def projects() -> list[dict]:
    """The corpus as projects.toml lists it."""
    return tomllib.loads((HERE / "projects.toml").read_text())["project"]


def folder(name: str) -> str:
    """OWNER/NAME -> the folder name it is extracted under."""
    return name.replace("/", "+")


def lint(tool: list[str], tree: Path) -> list[dict]:
    """The diagnostics (reported and guarded) of one tree."""
    cmd = [*tool, "lint", "--no-cache", "--format", "json", "--show-guarded", "--exit-zero"]
    proc = subprocess.run([*cmd, str(tree)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{tree}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)["diagnostics"]


def counts(diags: list[dict]) -> tuple[int, int, int]:
    """(reported errors, reported warnings, guarded errors+warnings)."""
    ew = [d for d in diags if d["severity"] in ("error", "warning")]
    shown = Counter(d["severity"] for d in ew if "guarded" not in d)
    return shown["error"], shown["warning"], sum("guarded" in d for d in ew)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path, help="folder holding OWNER+NAME trees")
    ap.add_argument("--tool", default=f"{shlex.quote(sys.executable)} -m cuda2rocm")
    ap.add_argument("--json-dir", type=Path, help="keep (or, with --from-json, read) reports here")
    ap.add_argument("--from-json", action="store_true", help="read reports from --json-dir")
    ap.add_argument("--only", nargs="*", action="extend", help="just these projects (owner/name)")
    args = ap.parse_args(argv)
    tool = shlex.split(args.tool)
    if args.json_dir:
        args.json_dir.mkdir(parents=True, exist_ok=True)
    totals: dict[str, Counter] = {"tune": Counter(), "measured": Counter()}
    print("| half | project | kind | errors | warnings | errors+warnings | guarded e+w |")
    print("|---|---|---|---|---|---|---|")
    rows = sorted(projects(), key=lambda p: (p["half"], p["name"].lower()))
    for proj in rows:
        if args.only and proj["name"] not in args.only:
            continue
        tree = args.corpus / folder(proj["name"])
        report = args.json_dir / f"{folder(proj['name'])}.json" if args.json_dir else None
        if args.from_json and report:
            diags = json.loads(report.read_text())
        elif not tree.is_dir():
            print(f"| {proj['half']} | {proj['name']} | {proj['kind']} | missing | | | |")
            continue
        else:
            diags = lint(tool, tree)
            if report:
                report.write_text(json.dumps(diags))
        err, warn, guarded = counts(diags)
        totals[proj["half"]].update(errors=err, warnings=warn, guarded=guarded, projects=1)
        print(
            f"| {proj['half']} | {proj['name']} | {proj['kind']} | {err} | {warn} "
            f"| {err + warn} | {guarded} |",
            flush=True,
        )
    for name, t in totals.items():
        print(
            f"| {name} | **all {t['projects']}** | | {t['errors']} | {t['warnings']} "
            f"| {t['errors'] + t['warnings']} | {t['guarded']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
