"""Benchmark cuda2rocm against ruff and TorchFix on the same trees, in one run.

    python bench/run.py                     # synthetic tree (3,000 Python + 300 C++ files)
    python bench/run.py --real diffusers    # also a real project's sdist, fetched now
    python bench/run.py --real-only --git https://github.com/huggingface/diffusers \
        --git https://github.com/Dao-AILab/flash-attention   # real trees, cloned now
    python bench/run.py --real-only --issue-trees --no-torchfix   # the same two trees
    python bench/run.py --real-only --no-torchfix --tree /work/real/flash-attention  # a copy

Each repetition runs every tool once, alternating, so that machine noise hits all of them alike;
the table shows medians, ratios to ruff, and peak memory (the largest process of a run). Ruff and
TorchFix are installed into their own virtual environments under bench/.venvs (TorchFix pins an
older LibCST). Nothing here is asserted: tests never time anything.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VENVS = HERE / ".venvs"
#: The real trees issue 16 sets its targets on (cloned at benchmark time, never committed).
ISSUE_TREES = (
    "https://github.com/huggingface/diffusers",
    "https://github.com/Dao-AILab/flash-attention",
)
sys.path.insert(0, str(HERE))

from generate import generate  # noqa: E402

MEASURE = r"""
import resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{wall} {usage.ru_maxrss} {proc.returncode} {usage.ru_utime + usage.ru_stime}")
"""

TREE_SITTER = r"""
import os, sys, tree_sitter, tree_sitter_cuda
parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))
suffixes = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx", ".inl")
for base, dirs, files in os.walk(sys.argv[1]):
    dirs[:] = [d for d in dirs if not d.startswith(".")]
    for name in files:
        if name.endswith(suffixes):
            with open(os.path.join(base, name), "rb") as fh:
                parser.parse(fh.read())
"""

FLOOR = r"""
import os, sys
total = 0
for base, dirs, files in os.walk(sys.argv[1]):
    for name in files:
        with open(os.path.join(base, name), 'rb') as fh:
            total += fh.read().count(b'cuda')
print(total)
"""


def tool_python(name: str, packages: list[str]) -> Path:
    """A venv with `packages`, created once under bench/.venvs."""
    venv = VENVS / name
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *packages], check=True)
    return python


def measure(command: list[str], cwd: Path) -> tuple[float, float, int, float]:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, *command],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), int(out[1]) / 1024, int(out[2]), float(out[3])


def benchmark(tree: Path, reps: int, jobs: int | None, torchfix_too: bool = True) -> list[dict]:
    ruff = Path(os.environ.get("RUFF") or tool_python("ruff", ["ruff"]).parent / "ruff")
    torchfix = (
        tool_python("torchfix", ["torchfix==0.7.0"]).parent / "torchfix" if torchfix_too else None
    )
    me = [sys.executable, "-m", "cuda2rocm"]
    cache = Path(tempfile.mkdtemp(prefix="c2r-cache-"))
    jobs_args = ["-j", str(jobs)] if jobs else []
    victim = next(tree.rglob("*.py"))
    original = victim.read_text()

    def lint(jobs_args: list[str], clear: bool) -> list[str]:
        if clear:
            shutil.rmtree(cache, ignore_errors=True)
        return [*me, "lint", "--exit-zero", "--cache-dir", str(cache), *jobs_args, "."]

    def one_changed() -> list[str]:
        victim.write_text(original + f"\n# edit {time.time_ns()}\n")
        return lint(jobs_args, clear=False)

    tools = {
        "byte scan (floor)": lambda: [sys.executable, "-c", FLOOR, "."],
        "ruff check (default rules, cold)": lambda: [
            str(ruff),
            "check",
            "--no-cache",
            "--exit-zero",
            "--quiet",
            ".",
        ],
        "tree-sitter parse of C/C++/CUDA, 1 thread": lambda: [
            sys.executable,
            "-c",
            TREE_SITTER,
            ".",
        ],
        "cuda2rocm lint (cold)": lambda: lint(jobs_args, clear=True),
        "cuda2rocm lint (warm)": lambda: lint(jobs_args, clear=False),
        "cuda2rocm fix --check (after warm lint)": lambda: [
            *me,
            "fix",
            "--check",
            "--cache-dir",
            str(cache),
            *jobs_args,
            ".",
        ],
        "cuda2rocm lint (one file changed)": one_changed,
        "cuda2rocm lint -j1 (cold)": lambda: lint(["-j", "1"], clear=True),
    }
    if torchfix is not None:
        tools["TorchFix"] = lambda: [str(torchfix), "."]
    times: dict[str, list[float]] = {k: [] for k in tools}
    cpus: dict[str, list[float]] = {k: [] for k in tools}
    peaks: dict[str, float] = dict.fromkeys(tools, 0.0)
    for rep in range(reps):
        for name, make in tools.items():
            if name == "TorchFix" and rep > 0 and times[name] and times[name][0] > 60:
                continue  # one TorchFix run is enough when it takes minutes
            wall, peak, _, cpu = measure(make(), tree)
            times[name].append(wall)
            cpus[name].append(cpu)
            peaks[name] = max(peaks[name], peak)
        print(f"  repetition {rep + 1}/{reps} done", file=sys.stderr)
    victim.write_text(original)
    shutil.rmtree(cache, ignore_errors=True)
    ruff_median = statistics.median(times["ruff check (default rules, cold)"])
    rows = []
    for name in tools:
        median = statistics.median(times[name])
        rows.append(
            {
                "tool": name,
                "median_s": median,
                "cpu_s": statistics.median(cpus[name]),
                "runs": len(times[name]),
                "vs_ruff": median / ruff_median,
                "peak_mb": peaks[name],
            }
        )
    return rows


def print_rows(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print(f"{'tool':40} {'median s':>9} {'cpu s':>8} {'runs':>5} {'× ruff':>8} {'peak MB':>8}")
    for r in rows:
        print(
            f"{r['tool']:40} {r['median_s']:9.3f} {r['cpu_s']:8.2f} {r['runs']:5} "
            f"{r['vs_ruff']:8.2f} {r['peak_mb']:8.0f}"
        )
    by = {r["tool"]: r["median_s"] for r in rows}
    ruff = by["ruff check (default rules, cold)"]
    cold, warm = by["cuda2rocm lint (cold)"], by["cuda2rocm lint (warm)"]
    bare = by["tree-sitter parse of C/C++/CUDA, 1 thread"]
    peak = max(r["peak_mb"] for r in rows if r["tool"].startswith("cuda2rocm"))
    print(
        f"ratios: cold/ruff {cold / ruff:.2f} (target 3) | warm/ruff {warm / ruff:.2f} (1) | "
        f"one changed/warm {by['cuda2rocm lint (one file changed)'] / warm:.2f} (~1) | "
        f"fix --check/warm {by['cuda2rocm fix --check (after warm lint)'] / warm:.2f} (2) | "
        f"cold/(tree-sitter + ruff) {cold / (bare + ruff):.2f} (3) | peak {peak:.0f} MB (300)"
    )
    cpu = {r["tool"]: r["cpu_s"] for r in rows}
    c_ruff, c_cold = cpu["ruff check (default rules, cold)"], cpu["cuda2rocm lint (cold)"]
    c_bare, c_warm = cpu["tree-sitter parse of C/C++/CUDA, 1 thread"], cpu["cuda2rocm lint (warm)"]
    print(
        "CPU-second ratios (less sensitive to a loaded machine): "
        f"cold/ruff {c_cold / c_ruff:.2f} | cold/(tree-sitter + ruff) "
        f"{c_cold / (c_bare + c_ruff):.2f} | warm/ruff {c_warm / c_ruff:.2f}"
    )
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if "TorchFix" in by:
        print(f"TorchFix / cuda2rocm cold: {by['TorchFix'] / by['cuda2rocm lint (cold)']:.1f}×")


def fetch_sdist(package: str, workdir: Path) -> Path:
    """Download and unpack a project's sdist from the package index (never committed)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--no-binary",
            ":all:",
            "-d",
            str(workdir),
            package,
        ],
        check=True,
    )
    archive = next(workdir.glob("*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(workdir, filter="data")
    return next(p for p in workdir.iterdir() if p.is_dir())


def clone(url: str, workdir: Path) -> Path:
    """A shallow clone of a real project (a URL or a local mirror), made now, never committed."""
    target = workdir / Path(url.rstrip("/")).name.removesuffix(".git")
    subprocess.run(["git", "clone", "-q", "--depth", "1", url, str(target)], check=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--python-files", type=int, default=3000)
    parser.add_argument("--cpp-files", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument(
        "--real", metavar="PACKAGE", help="also benchmark this sdist (e.g. diffusers)"
    )
    parser.add_argument(
        "--git", action="append", default=[], help="also benchmark this repository (cloned now)"
    )
    parser.add_argument(
        "--tree", action="append", default=[], help="also benchmark a copy of this folder"
    )
    parser.add_argument(
        "--issue-trees",
        action="store_true",
        help="also benchmark the issue-16 trees (diffusers, flash-attention), cloned now",
    )
    parser.add_argument("--no-torchfix", action="store_true", help="leave TorchFix out")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--real-only", action="store_true", help="skip the synthetic tree")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="c2r-bench-") as tmp:
        if not args.real_only:
            tree = Path(tmp) / "tree"
            info = generate(tree, args.seed, args.python_files, args.cpp_files)
            print(f"synthetic tree: {info}", file=sys.stderr)
            rows = benchmark(tree, args.reps, args.jobs, not args.no_torchfix)
            print_rows(
                f"Synthetic tree ({info['python_files']} .py, {info['cpp_files']} C++, "
                f"{info['lines']} lines, seed {args.seed}), {os.cpu_count()} cores",
                rows,
            )
            results["synthetic"] = {"tree": info, "rows": rows}
        if args.real:
            source = fetch_sdist(args.real, Path(tmp) / "real")
            rows = benchmark(source, args.reps, args.jobs, not args.no_torchfix)
            print_rows(f"Real project: {source.name}", rows)
            results["real"] = {"tree": source.name, "rows": rows}
        urls = [*args.git, *(ISSUE_TREES if args.issue_trees else ())]
        sources = [clone(url, Path(tmp)) for url in urls]
        for folder in args.tree:
            sources.append(Path(tmp) / Path(folder).name)
            shutil.copytree(folder, sources[-1], ignore=shutil.ignore_patterns(".cuda2rocm_cache"))
        for source in sources:
            commit = subprocess.run(
                ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True
            ).stdout.strip()
            rows = benchmark(source, args.reps, args.jobs, not args.no_torchfix)
            print_rows(f"Real project: {source.name} @ {commit[:12]}", rows)
            results[source.name] = {"tree": source.name, "commit": commit, "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
