"""End to end: does a project still build from its package after `cuda2rocm fix`, and does the
HIP build keep every kernel launch?

For each project folder given (public projects, fetched at benchmark time, never committed):

1. two copies, `before` and `after`; `cuda2rocm fix` on `after` (safe fixes, as a user runs it);
2. the *package* of each copy: the files its packaging ships (`cuda2rocm.packaging`: package
   data, MANIFEST.in, pyproject package-data, CMake install rules), plus the files no packaging
   concerns (compiled in the tree), laid out as in the tree; files in a packaged area that the
   packaging does not ship are left out, as a wheel leaves them out;
3. every translation unit (.cu) of the package, preprocessed with nvcc from the package copy
   when the packaging ships it (else from the tree, where an in-tree build compiles it)
   (`nvcc -E`). System headers the machine lacks (torch, CUTLASS...) become
   empty stubs, created on demand and shared by both copies, so only the project's own
   includes can fail: a quoted include that does not resolve is a failure. Nothing that built
   before may fail after.
4. where hipcc is installed, the same units preprocessed for HIP's host pass (`hipcc -E
   --cuda-host-only`), and the kernel launches (`<<<`) counted: after the fix, the HIP host code
   holds at least as many launches as before it (a fix never drops one), and the count is shown
   beside nvcc's (launches ROCm never had, a guard the fix left for a human, show there).

    python bench/fix_e2e.py --cuda2rocm /work/wt/c2r-fixes /work/corpus/OWNER+NAME ...

Exit status 1 when a unit that preprocessed before fails after, or a launch is lost.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cuda2rocm import packaging

_MISSING = re.compile(r"fatal error: ([^:\s]+): No such file|fatal error: '([^']+)' file not found")
_SKIP = {".git", "build", "dist", "__pycache__", ".eggs"}
MAX_UNITS = 60


def _copy(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(*_SKIP))


def package(tree: Path, out: Path) -> list[Path]:
    """Copy what the packaging ships (and what no packaging concerns) to `out`."""
    kept = []
    for path in sorted(tree.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        if packaging.shipped_unit(path) == packaging.NOT_SHIPPED:
            continue
        rel = path.relative_to(tree)
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, out / rel)
        kept.append(rel)
    return kept


def preprocess(compiler: list[str], unit: Path, stubs: Path, root: Path) -> tuple[str | None, str]:
    """(error or None, preprocessed text). Missing angle includes get empty stubs."""
    for _ in range(80):
        # The project's own include folders (`include/` near the top, `src/`, `csrc/`), as its
        # builds pass them.
        folders = [*root.glob("include"), *root.glob("*/include"), *root.glob("src")]
        own = [f"-I{d}" for d in sorted(folders) + sorted(root.glob("csrc"))]
        cmd = [*compiler, *own, "-I", str(stubs), "-I", str(root), str(unit)]
        env = {**os.environ, "HIP_PLATFORM": "amd"}  # hipcc picks nvidia when nvcc is found
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=300, check=False, env=env
        )
        if done.returncode == 0:
            return None, done.stdout
        m = _MISSING.search(done.stderr)
        if m is None:
            return done.stderr.strip().splitlines()[-1:][0] if done.stderr.strip() else "?", ""
        name = m.group(1) or m.group(2)
        line = next((x for x in done.stderr.splitlines() if name in x and "#include" in x), "")
        if f'"{name}"' in line or (stubs / name).exists():
            return f"missing project include {name}", ""
        (stubs / name).parent.mkdir(parents=True, exist_ok=True)
        (stubs / name).write_text("")
    return "too many missing headers", ""


def run_project(project: Path, tool: str, work: Path) -> tuple[bool, str]:
    before, after = work / "before", work / "after"
    _copy(project, before)
    _copy(project, after)
    subprocess.run([tool, "fix", str(after)], capture_output=True, text=True, check=False)
    changed = sum(
        1
        for p in after.rglob("*")
        if p.is_file()
        and (
            not (before / p.relative_to(after)).is_file()
            or (before / p.relative_to(after)).read_bytes() != p.read_bytes()
        )
    )
    pkg_before, pkg_after = work / "pkg_before", work / "pkg_after"
    kept_b = package(before, pkg_before)
    package(after, pkg_after)
    units = [r for r in kept_b if r.suffix == ".cu"][:MAX_UNITS]
    stubs_nv, stubs_hip = work / "stubs_nvcc", work / "stubs_hip"
    stubs_nv.mkdir()
    stubs_hip.mkdir()
    nvcc = ["nvcc", "-E", "-x", "cu", "-std=c++17"]
    hipcc = None
    if shutil.which("hipcc"):
        hipcc = ["hipcc", "-E", "--cuda-host-only", "--offload-arch=gfx90a", "-x", "hip"]
        # What ROCm builds define: hip-config.cmake's hip::host (`__HIP_PLATFORM_AMD__=1`),
        # torch's extension build (`-D__HIP_PLATFORM_AMD__=1`); hipcc 5.2 alone does not.
        hipcc += ["-std=c++17", "-w", "-D__HIP_PLATFORM_AMD__=1"]
    ok, lines = True, []
    counts = [0, 0, 0]
    failed_before = 0
    shipped = 0
    for rel in units:
        # A unit the packaging ships compiles from the package (a JIT build from
        # site-packages, an unpacked sdist); one no packaging concerns compiles in the tree.
        unit = packaging.shipped_unit(before / rel)
        in_package = unit is not None and unit != packaging.NOT_SHIPPED
        shipped += in_package
        pkg_before, pkg_after = (
            (work / "pkg_before", work / "pkg_after")
            if in_package
            else (
                before,
                after,
            )
        )
        err_b, text_nv = preprocess(nvcc, pkg_before / rel, stubs_nv, pkg_before)
        if not (pkg_after / rel).exists():
            ok = False
            lines.append(f"  LOST FROM PACKAGE {rel}")
            continue
        err_a, _ = preprocess(nvcc, pkg_after / rel, stubs_nv, pkg_after)
        failed_before += err_b is not None
        if err_b is None and err_a is not None:
            ok = False
            lines.append(f"  BROKE {rel}: {err_a}")
        if hipcc is None:
            continue
        herr_b, hip_b = preprocess(hipcc, pkg_before / rel, stubs_hip, pkg_before)
        herr_a, hip_a = preprocess(hipcc, pkg_after / rel, stubs_hip, pkg_after)
        if herr_b is None and herr_a is not None:
            ok = False
            lines.append(f"  BROKE (hipcc) {rel}: {herr_a}")
        n = [text_nv.count("<<<"), hip_b.count("<<<"), hip_a.count("<<<")]
        counts = [c + k for c, k in zip(counts, n, strict=True)]
        if hip_a and n[2] < n[1]:
            ok = False
            lines.append(f"  LAUNCH LOST {rel}: HIP host launches {n[1]} -> {n[2]}")
    head = (
        f"{project.name}: fix changed {changed} files; {len(units)} units, {shipped} packaged "
        f"({failed_before} fail nvcc -E before the fix too); "
        f"launches nvcc {counts[0]}, hip before {counts[1]}, hip after {counts[2]}: "
        f"{'ok' if ok else 'FAILED'}"
    )
    return ok, "\n".join([head, *lines])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("projects", nargs="+", type=Path)
    parser.add_argument("--cuda2rocm", default="cuda2rocm", help="the tool's command")
    args = parser.parse_args()
    failed = 0
    for project in args.projects:
        with tempfile.TemporaryDirectory(prefix="fix_e2e.") as tmp:
            ok, report = run_project(project.resolve(), args.cuda2rocm, Path(tmp))
        print(report, flush=True)
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
