"""Fix regression run on real projects (issue 14): `fix --unsafe` into a temporary copy, then
every changed Python file must still compile, and every changed C++ file that nvcc compiled
before must still compile after.

    python bench/fix_regression.py /work/real/flash-attention /work/real/gsplat --cpp-limit 10

C++ translation units are compiled standalone (`nvcc -c`, include dirs: the file's folder, the
project root, its folders named `include` or `csrc` (20 at most), torch's headers); a unit that
does not compile before the fix is reported as skipped, not counted. `--fixes FILE` writes one
line per applied fix (path:line rule) for hand review.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from cuda2rocm.catalogue import load_catalogue, select_rules
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_paths

CPP = {".cu", ".cuh", ".cpp", ".cc", ".cxx"}


def _nvcc(path: Path, root: Path) -> bool:
    import torch.utils.cpp_extension as ext

    found = [d for d in root.rglob("*") if d.is_dir() and d.name in ("include", "csrc")][:20]
    includes = [path.parent, root, *found, *ext.include_paths()]
    cmd = ["nvcc", "-std=c++17", "-x", "cu", "-c", str(path), "-o", "/dev/null"]
    cmd += [f"-I{d}" for d in includes if Path(d).is_dir()]
    try:
        return subprocess.run(cmd, capture_output=True, timeout=300).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def run(project: Path, cpp_limit: int, review) -> dict[str, int]:
    counts = dict.fromkeys(
        (
            "fixes",
            "py_changed",
            "py_broken",
            "cpp_changed",
            "cpp_checked",
            "cpp_skipped",
            "cpp_broken",
            "refused",
        ),
        0,
    )
    with tempfile.TemporaryDirectory() as tmp:
        before, after = Path(tmp, "before").resolve(), Path(tmp, "after").resolve()
        shutil.copytree(project, before, symlinks=True)
        shutil.copytree(project, after, symlinks=True)
        report = fix_paths(Linter(select_rules(load_catalogue())), [after], unsafe=True)
        for outcome in report.outcomes:
            counts["refused"] += outcome.refused is not None
            if not outcome.changed:
                continue
            path = Path(outcome.path).resolve()
            rel = path.relative_to(after)
            counts["fixes"] += len(outcome.applied)
            for d in outcome.applied:
                if review is not None:
                    print(f"{project.name}/{rel}:{d.position.line} {d.rule}", file=review)
            if path.suffix == ".py":
                counts["py_changed"] += 1
                try:
                    compile(outcome.fixed, str(path), "exec")
                except SyntaxError as exc:
                    counts["py_broken"] += 1
                    print(f"BROKEN {rel}: {exc}", file=sys.stderr)
            elif path.suffix in CPP:
                counts["cpp_changed"] += 1
                if counts["cpp_checked"] + counts["cpp_skipped"] >= cpp_limit:
                    continue
                if not _nvcc(before / rel, before):
                    counts["cpp_skipped"] += 1
                    print(
                        f"skip {rel}: does not compile standalone before the fix", file=sys.stderr
                    )
                    continue
                counts["cpp_checked"] += 1
                if not _nvcc(path, after):
                    counts["cpp_broken"] += 1
                    print(f"BROKEN {rel}: nvcc fails after the fix", file=sys.stderr)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("projects", nargs="+", type=Path)
    parser.add_argument(
        "--cpp-limit", type=int, default=10, help="C++ files nvcc-checked per project"
    )
    parser.add_argument("--fixes", type=Path, help="write path:line rule of every applied fix")
    args = parser.parse_args(argv)
    review = args.fixes.open("w") if args.fixes else None
    broken = 0
    for project in args.projects:
        counts = run(project, args.cpp_limit, review)
        broken += counts["py_broken"] + counts["cpp_broken"]
        print(project.name, " ".join(f"{k}={v}" for k, v in counts.items()), flush=True)
    if review is not None:
        review.close()
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
