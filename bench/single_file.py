"""Latency where the linter is used most: one changed file, and a pre-commit call, against ruff.

    python bench/single_file.py TREE [--file REL ...] [--reps 5]

Copies TREE to a temporary folder, lints it once (so the result cache and the warm snapshot
exist, as in a project already linted), then per repetition appends a comment to the file(s)
and times `cuda2rocm lint FILE` and `ruff check FILE` back to back (alternating, so noise hits
both). Prints medians and the ratio to ruff, for one changed Python file, one changed C++/CUDA
file, and five changed files at once (what a pre-commit hook passes). Bytecode is written as an
installed package's would be (PYTHONDONTWRITEBYTECODE unset). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = {".py": "#", ".cu": "//", ".cuh": "//", ".cpp": "//", ".h": "//"}


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, check=False)
    return time.perf_counter() - start


def _pick(tree: Path, suffixes: tuple[str, ...], n: int) -> list[str]:
    """The n largest files with these suffixes (a file worth linting), relative to tree."""
    files = [p for p in tree.rglob("*") if p.is_file() and p.suffix in suffixes]
    files.sort(key=lambda p: -p.stat().st_size)
    return [str(p.relative_to(tree)) for p in files[:n]]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree", type=Path)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument(
        "--ruff", default=shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    )
    args = parser.parse_args()
    c2r = [sys.executable, "-m", "cuda2rocm", "lint", "--exit-zero"]
    ruff = [args.ruff, "check", "--exit-zero", "--no-cache", "-q"]
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / args.tree.name
        shutil.copytree(
            args.tree, tree, symlinks=True, ignore=shutil.ignore_patterns(".cuda2rocm_cache")
        )
        first = _timed([*c2r, "."], tree)
        print(f"{args.tree.name}: first lint of the tree {first:.2f} s (fills the caches)")
        cases = {
            "1 Python file": _pick(tree, (".py",), 1),
            "1 C++/CUDA file": _pick(tree, (".cu", ".cuh", ".cpp"), 1),
            "5 files (pre-commit)": _pick(tree, tuple(SUFFIXES), 5),
        }
        print(f"{'case':<22} {'cuda2rocm':>10} {'ruff':>8} {'ratio':>7}")
        for name, files in cases.items():
            if not files:
                continue
            ours, theirs = [], []
            for rep in range(args.reps):
                for rel in files:
                    with open(tree / rel, "a", encoding="utf-8") as fh:
                        fh.write(f"\n{SUFFIXES[Path(rel).suffix]} bench edit {rep}\n")
                ours.append(_timed([*c2r, *files], tree))
                py = [f for f in files if f.endswith(".py")]
                theirs.append(_timed([*ruff, *py], tree) if py else 0.0)
            a, b = statistics.median(ours), statistics.median(theirs)
            ratio = f"{a / b:6.1f}x" if b else "    -"
            print(f"{name:<22} {a:>9.3f}s {b:>7.3f}s {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
