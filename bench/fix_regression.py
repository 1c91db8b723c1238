"""Fix regression run on real projects (issue 14): `fix --unsafe` into a temporary copy, then
every changed Python file must still compile, every changed C++ file that nvcc compiled before
must still compile after, and changed C++ files the tool now calls portable go through hipcc.

    python bench/fix_regression.py /work/real/gsplat /work/real/faiss --cpp-limit 10 \\
        --fixes fixes.tsv --sample 40 --seed 14 --sample-out sample.md

Changed C++ translation units (.cu/.cpp/.cc/.cxx), and units that include a changed header by
its file name, are compiled standalone (`nvcc -c`, which gives .cpp files to the host compiler
as torch's extension build does; include dirs: the file's folder, the project root, its folders
named `include` or `csrc` (20 at most), torch's and Python's headers, `--include` folders,
bench/nvcc_stubs for what a CPU build of torch lacks); a unit that does not compile before the
fix is reported as skipped, not counted. `--cpp-limit` caps the units compiled per project
(changed units first, and among them those that claim portability). A changed unit "claims
portability" when no error finding remains in it after the fix: `hipcc --offload-arch=gfx90a`
then compiles the fixed unit (bench/hip52_stubs for headers HIP 5.2 lacks). Units that include
torch's headers are not given to hipcc: torch's extension build hipifies them against a ROCm
torch's headers, which this machine lacks (counted as `hip_torch`). hipcc failures are listed,
not counted as broken: the unit did not build for AMD before the fix either.

`--fixes FILE` writes one JSON line per applied fix (project, path, line, rule, safety, edits).
`--sample N --seed S` draws N applied fixes stratified by (project, rule): strata in a seeded
order, one fix from each in turn, so every pair is represented before any repeats (over this
run and the `--fixes` files named by `--sample-from`, so projects can be run one at a time);
`--sample-out` writes each drawn fix's edits with the original lines around it, for hand review.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

UNITS = {".cu", ".cpp", ".cc", ".cxx"}
CPP = UNITS | {".cuh", ".h", ".hpp", ".hxx", ".inl"}
STUBS = Path(__file__).resolve().parent / "hip52_stubs"
NVCC_STUBS = Path(__file__).resolve().parent / "nvcc_stubs"
TORCH_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](torch|ATen|c10)/', re.M)
COUNTS = (
    "fixes",
    "files",
    "py_changed",
    "py_broken",
    "cpp_changed",
    "cpp_units",
    "nvcc_before",
    "nvcc_after",
    "cpp_skipped",
    "cpp_broken",
    "hip_claimed",
    "hip_torch",
    "hip_ok",
    "hip_fail",
    "refused",
)


@dataclasses.dataclass(frozen=True)
class Applied:
    """One applied fix, as written to `--fixes` and drawn by `--sample`."""

    project: str
    root: str
    path: str
    line: int
    rule: str
    safety: str
    edits: tuple[tuple[str, str], ...]  # (original, replacement)

    def row(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_row(cls, row: str) -> Applied:
        data = json.loads(row)
        return cls(**{**data, "edits": tuple(map(tuple, data["edits"]))})


def _includes(root: Path) -> list[Path]:
    import torch.utils.cpp_extension as ext

    found = [d for d in root.rglob("*") if d.is_dir() and d.name in ("include", "csrc")][:20]
    python = Path(sysconfig.get_paths()["include"])  # torch's extension headers need Python.h
    return [root, *found, *map(Path, ext.include_paths()), python]


def _compile(cmd: list[str], env=None) -> tuple[bool, str]:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    except subprocess.TimeoutExpired:
        return False, "timed out after 600 s"
    errors = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    return done.returncode == 0, (errors or [done.stderr.strip()[-200:]])[0][:220]


#: nvcc flags every project here passes for its CUDA sources (flash-attention's setup.py,
#: TransformerEngine's build_tools/pytorch.py, gsplat's build.py): without them their device code
#: calling constexpr host functions (`std::get`, `std::max`) does not compile at all.
NVCC_FLAGS = ("--expt-relaxed-constexpr", "--extended-lambda")


def _nvcc(path: Path, includes: list[Path], std: str) -> tuple[bool, str]:
    # .cu files as CUDA; .cpp ones go to the host compiler, as torch's extension build does
    language = ["-x", "cu", *NVCC_FLAGS] if path.suffix == ".cu" else []
    cmd = ["nvcc", f"-std={std}", *language, "-c", str(path), "-o", os.devnull]
    dirs = [path.parent, *includes, NVCC_STUBS]
    return _compile(cmd + [f"-I{d}" for d in dirs if d.is_dir()])


def _hipcc(path: Path, includes: list[Path], std: str) -> tuple[bool, str]:
    cmd = ["hipcc", "--offload-arch=gfx90a", "-O0", f"-std={std}", "-x", "hip", "-c", str(path)]
    cmd += ["-o", os.devnull] + [f"-I{d}" for d in [path.parent, *includes, STUBS] if d.is_dir()]
    return _compile(cmd, dict(os.environ, HIP_PLATFORM="amd"))


def _including(root: Path, headers: set[str], known: set[str]) -> list[dict]:
    """Unchanged units that include one of `headers` by name (never given to hipcc)."""
    if not headers:
        return []
    names = "|".join(re.escape(h) for h in sorted(headers))
    include = re.compile(rf'^\s*#\s*include\s*[<"](?:[^>"]*/)?(?:{names})[>"]', re.M)
    found = []
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if (
            path.suffix in UNITS
            and rel not in known
            and path.is_file()
            and include.search(path.read_text(errors="replace"))
        ):
            found.append({"path": rel, "direct": False, "claims": False, "torch": False})
    return found


def fix_project(project: Path, work: Path, applied: list[Applied]) -> dict:
    """`fix --unsafe` on a copy of `project` under work/NAME/after (the original beside it in
    work/NAME/before); checks the Python files; returns the counts and the C++ units to compile."""
    from cuda2rocm.catalogue import load_catalogue, select_rules  # not needed to compile
    from cuda2rocm.engine import Linter
    from cuda2rocm.fixer import fix_paths
    from cuda2rocm.model import Severity

    counts = dict.fromkeys(COUNTS, 0)
    before, after = (work / project.name / "before").resolve(), (work / project.name / "after")
    shutil.copytree(project, before, symlinks=True)
    shutil.copytree(project, after, symlinks=True)
    after = after.resolve()
    report = fix_paths(Linter(select_rules(load_catalogue())), [after], unsafe=True)
    units: list[dict] = []
    headers: set[str] = set()
    for outcome in report.outcomes:
        counts["refused"] += outcome.refused is not None
        if not outcome.changed:
            continue
        path = Path(outcome.path).resolve()
        rel = path.relative_to(after)
        counts["fixes"] += len(outcome.applied)
        counts["files"] += 1
        applied += [
            Applied(
                project.name,
                str(project.resolve()),
                str(rel),
                d.position.line,
                d.rule,
                d.fix.safety.value,
                tuple((e.original, e.replacement) for e in d.fix.edits),
            )
            for d in outcome.applied
        ]
        if path.suffix == ".py":
            counts["py_changed"] += 1
            try:
                compile(outcome.fixed, str(path), "exec")
            except SyntaxError as exc:
                counts["py_broken"] += 1
                print(f"BROKEN {rel}: {exc}", file=sys.stderr)
        elif path.suffix in CPP:
            counts["cpp_changed"] += 1
            if path.suffix not in UNITS:
                headers.add(path.name)
                continue
            claims = not any(
                d.severity is Severity.ERROR and not d.guarded for d in outcome.remaining
            )
            torch = bool(TORCH_INCLUDE.search(outcome.fixed))
            units.append({"path": str(rel), "direct": True, "claims": claims, "torch": torch})
    units += _including(after, headers, {u["path"] for u in units})
    counts["cpp_units"] = len(units)
    order = sorted(units, key=lambda u: (not u["direct"], not u["claims"], u["path"]))
    builds = [
        *before.glob("setup.py"),
        *before.glob("*/**/build.py"),
        *before.glob("CMakeLists.txt"),
    ]
    cxx20 = any("c++20" in p.read_text(errors="replace") for p in builds if p.is_file())
    return {"counts": counts, "units": order, "c++20": cxx20}


def compile_project(work: Path, name: str, job: dict, limit: int, jobs: int, tools: set[str]):
    """nvcc before and after for each unit (C++17, else C++20 where the original needs it;
    C++20 first for a project whose build asks for it);
    hipcc gfx90a for the units that claim portability. Adds to job["counts"]."""
    counts, lock = job["counts"], threading.Lock()
    before, after = work / name / "before", work / name / "after"
    extra = sorted(work.glob("include/*"))
    inc_before, inc_after = _includes(before) + extra, _includes(after) + extra

    stds = ("c++20", "c++17") if job.get("c++20") else ("c++17", "c++20")

    def count(key: str, n: int = 1) -> None:
        with lock:
            counts[key] += n

    def one(unit: dict) -> list[str]:
        rel, log, std = unit["path"], [], "c++17"
        if "nvcc" in tools:
            for std in stds:
                ok, error = _nvcc(before / rel, inc_before, std)
                if ok:
                    break
            if not ok:
                count("cpp_skipped")
                log.append(f"skip {name}/{rel}: nvcc fails before the fix: {error}")
            else:
                count("nvcc_before")
                ok, error = _nvcc(after / rel, inc_after, std)
                count("nvcc_after", ok)
                if not ok:
                    count("cpp_broken")
                    log.append(f"BROKEN {name}/{rel}: nvcc fails after the fix: {error}")
        if "hipcc" in tools and unit["claims"]:
            count("hip_claimed")
            if unit["torch"]:
                count("hip_torch")
                return log
            for std in stds:
                ok, error = _hipcc(after / rel, inc_after, std)
                if ok:
                    break
            count("hip_ok" if ok else "hip_fail")
            if not ok:
                log.append(f"hipcc {name}/{rel}: {error}")
        return log

    with ThreadPoolExecutor(max(jobs, 1)) as pool:
        for log in pool.map(one, job["units"][:limit]):
            for line in log:
                print(line, file=sys.stderr, flush=True)


def sample(applied: list[Applied], n: int, seed: int) -> list[Applied]:
    """`n` fixes stratified by (project, rule): a seeded order of strata, one from each in turn."""
    rng = random.Random(seed)
    strata: dict[tuple[str, str], list[Applied]] = {}
    for a in sorted(applied, key=lambda a: (a.project, a.path, a.line, a.rule)):
        strata.setdefault((a.project, a.rule), []).append(a)
    order = sorted(strata)
    rng.shuffle(order)
    for key in order:
        rng.shuffle(strata[key])
    drawn: list[Applied] = []
    while len(drawn) < n and any(strata.values()):
        for key in order:
            if strata[key] and len(drawn) < n:
                drawn.append(strata[key].pop())
    return drawn


def _original_line(text: list[str], a: Applied, reach: int = 8) -> int:
    """The line of the original file the fix edits: a fix found on a later pass of `fix` (after
    another added a compatibility include above it) reports a line of the partly fixed text,
    so the nearest line holding the first edit's original text wins."""
    first = next((o.splitlines()[0] for o, _ in a.edits if o.strip()), "")
    if not first or (0 < a.line <= len(text) and first in text[a.line - 1]):
        return a.line
    near = [
        i + 1
        for i in range(max(a.line - 1 - reach, 0), min(a.line + reach, len(text)))
        if first in text[i]
    ]
    return min(near, key=lambda n: abs(n - a.line)) if near else a.line


def describe(a: Applied, context: int = 6) -> str:
    """One drawn fix: its edits and the original lines around it."""
    lines = [f"### {a.project}/{a.path}:{a.line} {a.rule} ({a.safety})"]
    lines += [f"- `{o!r}` -> `{r!r}`" for o, r in a.edits]
    source = Path(a.root, a.path)
    text = source.read_text(errors="replace").splitlines()
    line = _original_line(text, a)
    if line != a.line:
        lines.append(f"(line {line} of the original: a fix above it added lines first)")
    lo, hi = max(line - 1 - context, 0), min(line + context, len(text))
    lines += ["```", *(f"{i + 1:5} {text[i]}" for i in range(lo, hi)), "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("projects", nargs="*", type=Path)
    parser.add_argument("--cpp-limit", type=int, default=10, help="C++ units compiled per project")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="compilers run at once")
    parser.add_argument("--include", type=Path, nargs="*", default=[], help="extra -I folders")
    parser.add_argument("--work", type=Path, help="keep the copies and jobs.json here")
    parser.add_argument("--no-compile", action="store_true", help="fix only; compile later")
    parser.add_argument("--compile", type=Path, help="compile a --work folder made earlier")
    parser.add_argument(
        "--tools", default="nvcc,hipcc", help="compilers to run (a machine may lack one)"
    )
    parser.add_argument("--fixes", type=Path, help="write one line per applied fix")
    parser.add_argument("--sample", type=int, default=0, help="draw N fixes for hand review")
    parser.add_argument("--seed", type=int, default=14, help="seed of the sample")
    parser.add_argument("--sample-out", type=Path, help="write the drawn fixes with context")
    parser.add_argument(
        "--sample-from", type=Path, nargs="+", default=[], help="--fixes files of earlier runs"
    )
    args = parser.parse_args(argv)
    applied: list[Applied] = []
    work = args.compile or args.work or Path(tempfile.mkdtemp(prefix="fix-regression-"))
    state = json.loads((work / "jobs.json").read_text()) if args.compile else {}
    for project in args.projects:
        state[project.name] = fix_project(project, work, applied)
    for extra in args.include:
        shutil.copytree(extra, work / "include" / extra.name, dirs_exist_ok=True)
    (work / "jobs.json").write_text(json.dumps(state, indent=1))
    broken = 0
    for name, job in state.items():
        if not args.no_compile:
            tools = set(args.tools.split(","))
            compile_project(work, name, job, args.cpp_limit, args.jobs, tools)
        counts = job["counts"]
        broken += counts["py_broken"] + counts["cpp_broken"]
        print(name, " ".join(f"{k}={v}" for k, v in counts.items()), flush=True)
    if not (args.work or args.compile):
        shutil.rmtree(work)
    if args.fixes:
        args.fixes.write_text("".join(a.row() + "\n" for a in applied))
    for path in args.sample_from:
        applied += [Applied.from_row(r) for r in path.read_text().splitlines() if r]
    if args.sample:
        drawn = sample(applied, args.sample, args.seed)
        text = "\n".join(describe(a) for a in drawn)
        if args.sample_out:
            args.sample_out.write_text(text)
        else:
            print(text)
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
