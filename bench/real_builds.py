"""Do real projects' CUDA files build for AMD GPUs after `cuda2rocm fix`? Beside the hipify tools.

For each translation unit of CASES (files of public projects, fetched at benchmark time, never
committed), on copies of the project folders it needs:

- `orig nvcc`: nvcc -arch=sm_80 on the untouched file;
- `portable`: `cuda2rocm fix --unsafe` (target portable) on the folders, then nvcc and hipcc for
  gfx90a and gfx1030;
- `hip`: `cuda2rocm fix --unsafe --target hip`, then hipcc for both;
- `hipify-perl` (ROCm/HIPIFY's bin/hipify-perl, -inplace on every C++ file of the folders) and
  torch's hipify (`torch.utils.hipify.hipify_python.hipify`, as an extension build runs it),
  then hipcc for both.

It prints pass counts per column and the first error of each failure, classed as: needs a human
(inline PTX, WMMA, 32-bit lane masks: what our lint reports as errors with no fix;
`block_tile_memory`), HIP 5.2 limit (a header or
builtin that newer HIP has), missing rule (a CUDA name or header left unmapped) or tool bug
(anything else). A failure is "needs a human" when any file its errors point at (not only the
first) holds such a construct: the port of that unit waits on a person whatever else is fixed.
Headers HIP 5.2 lacks come from bench/hip52_stubs/ (said so in the output).

    python bench/real_builds.py --real /work/real --hipify-perl /tmp/hipify-perl \\
        --hipcub /work/real/hipCUB/hipcub/include --cublas /work/real/cublas-headers \\
        --hipblas /work/real/hipBLAS-5.2.3/library/include --rocthrust /work/real/rocThrust-5.3.3

The folders can also come from CUDA2ROCM_REAL, HIPIFY_PERL, HIPCUB_INCLUDE, CUBLAS_INCLUDE,
HIPBLAS_INCLUDE, ROCTHRUST_INCLUDE. rocThrust (not packaged for this HIP either; it keeps Thrust's
`<thrust/...>` header names, so a port changes no include) is read from the ROCm/rocThrust
repository at tag rocm-5.3.3 (the folder that holds `thrust/`), over the installed rocPRIM 5.3.3.
hipBLAS (not packaged for this HIP) is read from the ROCm/hipBLAS repository at
tag rocm-5.2.3 and laid out as that release installs it (`include/hipblas/hipblas.h`, beside the
two headers its CMake generates, from the stub folder); its folder is also on the path, so the
top-level `<hipblas.h>` hipify-perl writes is found too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUBS = Path(__file__).resolve().parent / "hip52_stubs"
#: The ROCm release the stand-ins' library declarations come from (hipBLASLt / hipBLAS at
#: rocm-6.2.2): the compatibility header maps the names of that release, not of HIP 5.2.
STUB_RELEASE = "-DCUDA2ROCM_ROCM_VERSION=602"
ARCHS = ("gfx90a", "gfx1030")
COLUMNS = [
    "orig nvcc",
    "portable nvcc",
    "portable gfx90a",
    "portable gfx1030",
    "hip gfx90a",
    "hip gfx1030",
    "hipify-perl gfx90a",
    "hipify-perl gfx1030",
    "torch gfx90a",
    "torch gfx1030",
]


@dataclass(frozen=True)
class Case:
    project: str
    #: The translation unit, relative to the project's root.
    file: str
    #: Folders (relative to the root) copied and fixed: the file's own and its local headers'.
    folders: tuple[str, ...]
    #: Include folders, relative to the root.
    includes: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    #: What the project's own ROCm build adds for hipcc (a project that already has a HIP path
    #: selects it with a macro; without it hipcc compiles the CUDA branch the project keeps
    #: for nvcc).
    hip_flags: tuple[str, ...] = ()


_SAMPLES = ("Common",)
CASES = [
    *(
        Case(
            "cuda-samples",
            f"Samples/{path}",
            (str(Path("Samples") / Path(path).parent), *_SAMPLES),
            _SAMPLES,
        )
        for path in (
            "0_Introduction/vectorAdd/vectorAdd.cu",
            "0_Introduction/simpleAtomicIntrinsics/simpleAtomicIntrinsics.cu",
            "0_Introduction/matrixMul/matrixMul.cu",
            "0_Introduction/simpleVoteIntrinsics/simpleVoteIntrinsics.cu",
            "2_Concepts_and_Techniques/shfl_scan/shfl_scan.cu",
            "2_Concepts_and_Techniques/inlinePTX/inlinePTX.cu",
            "2_Concepts_and_Techniques/histogram/histogram64.cu",
            # cg::reduce over 32-thread tiles (grid sync; a templated reducer)
            "2_Concepts_and_Techniques/reductionMultiBlockCG/reductionMultiBlockCG.cu",
            "2_Concepts_and_Techniques/reduction/reduction_kernel.cu",
        )
    ),
    *(
        Case("llm.c", f"dev/cuda/{name}.cu", ("dev/cuda",))
        for name in ("layernorm_forward", "gelu_forward", "softmax_forward")
    ),
    *(
        Case(
            "ggml",
            f"src/ggml-cuda/{name}.cu",
            ("src/ggml-cuda", "src", "include"),
            ("include", "src", "src/ggml-cuda"),
            # ggml/src/ggml-hip/CMakeLists.txt: add_compile_definitions(GGML_USE_HIP)
            hip_flags=("-DGGML_USE_HIP",),
        )
        for name in ("arange", "scale")
    ),
    *(
        Case("faiss", f"faiss/gpu/{path}", ("faiss",), (".",))
        for path in ("utils/BlockSelectFloat.cu", "impl/L2Norm.cu")
    ),
]


@dataclass
class Result:
    case: Case
    passed: dict[str, bool] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    classes: dict[str, str] = field(default_factory=dict)
    #: Every error line of a failing column (its files are searched for human blockers).
    all_errors: dict[str, list[str]] = field(default_factory=dict)


# -- compilers ----------------------------------------------------------------------------------
def nvcc(tree: Path, case: Case, cublas: str | None) -> subprocess.CompletedProcess:
    cmd = ["nvcc", "-arch=sm_80", "-std=c++17", *case.flags]
    cmd += [f"-I{tree / i}" for i in case.includes] + ([f"-I{cublas}"] if cublas else [])
    cmd += ["-c", str(tree / case.file), "-o", os.devnull]
    return _run(cmd)


def hipcc(path: Path, tree: Path, case: Case, arch: str, libraries: list[str]):
    cmd = ["hipcc", f"--offload-arch={arch}", "-O0", "-std=c++17", "-x", "hip", *case.flags]
    cmd += case.hip_flags
    cmd += [f"-I{tree / i}" for i in case.includes]
    cmd += [f"-I{path.parent}", f"-I{STUBS}", STUB_RELEASE]
    cmd += [f"-I{folder}" for folder in libraries]
    cmd += ["-c", str(path), "-o", os.devnull]
    return _run(cmd, dict(os.environ, HIP_PLATFORM="amd"))


def _run(cmd, env=None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", "error: timed out after 600 s")


_DIAGNOSTIC = re.compile(r": (?:fatal )?error: ")


def error_lines(output: str, limit: int = 60) -> list[str]:
    """The compiler's error diagnostics (`file:line:col: error: ...`), not source lines that
    merely contain the word (a quoted `hipGetLastError(); // ... error state.`)."""
    return [line.strip() for line in output.splitlines() if _DIAGNOSTIC.search(line)][:limit]


def first_error(output: str) -> str:
    found = error_lines(output, 1)
    if found:
        return found[0][:220]
    for line in output.splitlines():
        if "error" in line.lower():
            return line.strip()[:220]
    return (output.strip().splitlines() or ["(no output)"])[-1][:220]


# -- the tools ----------------------------------------------------------------------------------
def copy_tree(src_root: Path, dst_root: Path, case: Case) -> None:
    for folder in case.folders:  # nested folders (src, src/ggml-cuda) are copied once each
        shutil.copytree(src_root / folder, dst_root / folder, dirs_exist_ok=True)


def run_cuda2rocm(tree: Path, folders: list[str], target: str) -> str:
    cmd = [sys.executable, "-m", "cuda2rocm", "fix", "--unsafe", "--target", target]
    cmd += [str(tree / f) for f in folders]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    return done.stdout + done.stderr


def run_hipify_perl(tree: Path, folders: list[str], script: str) -> None:
    files = [
        p
        for f in folders
        for p in (tree / f).rglob("*")
        if p.suffix in (".cu", ".cuh", ".h", ".hpp", ".cpp", ".inl", ".c")
    ]
    for chunk in range(0, len(files), 50):
        batch = [str(p) for p in files[chunk : chunk + 50]]
        subprocess.run(
            ["perl", script, "-inplace", "-quiet-warnings", *batch],
            capture_output=True,
            timeout=600,
        )


def run_torch_hipify(tree: Path, folders: list[str]) -> dict[str, str]:
    """torch's hipify as cpp_extension runs it; returns {original path: hipified path}."""
    from torch.utils.hipify import hipify_python

    results = hipify_python.hipify(
        project_directory=str(tree),
        output_directory=str(tree),
        includes=[str(tree / f / "*") for f in folders],
        show_detailed=False,
        show_progress=False,
        is_pytorch_extension=True,
    )
    return {k: (v.hipified_path or k) for k, v in results.items()}


# -- classification -----------------------------------------------------------------------------
_HIP52 = re.compile(
    r"hip_bf16\.h|hip_fp8\.h|hip_math_constants\.h|__(shfl|shfl_up|shfl_down|shfl_xor|ballot|any"
    r"|all|activemask|match_any|reduce_\w+)_sync|__hip_bfloat16|cuda_bf16"
    # ROCm libraries this HIP 5.2 install lacks (no Debian package for them):
    r"|'(hipblas|hipblaslt|hipsolver|hipfft)/[\w.]+' file not found"
    # thread_block_tile::meta_group_rank: in later HIP's amd_hip_cooperative_groups.h
    r"|meta_group_rank"
    # half-precision builtins HIP 5.2's hip_fp16.h / amd_warp_functions.h lack (__hmax; no
    # __half2 overload of the shuffles), which newer HIP has (ggml's own HIP path uses them)
    r"|undeclared identifier '__hmax'|no matching function for call to '__shfl"
)
_MISSING = re.compile(
    r"undeclared identifier '(cu|CU|nv|__nv|curand|cublas|cusparse)\w*'|unknown type name "
    r"'(cu|CU|nv|__nv)\w*'|'(cub|cuda|cublas|curand|cusparse|thrust/system/cuda)[\w/]*(\.h|\.cuh)?'"
    r" file not found|no template named '\w+' in namespace 'cub'"
    # every HIP's tile shuffles static_assert an integer or float (ROCm/clr 009b009 too): a
    # rewrite the tool makes (cooperative-groups), not a HIP 5.2 limit
    r"|Neither an integer or float type"
)


#: Constructs with no HIP form at all, whatever the version: a port redesigns the code (CUDA's
#: scratch for tiles larger than a warp; HIP tiles never exceed a wavefront).
_HUMAN = re.compile(r"block_tile_memory|Tiled partition with size > wavefront size")


def classify(error: str, blockers: set[str]) -> str:
    if blockers or _HUMAN.search(error):
        return "needs a human"
    if _HIP52.search(error):
        return "HIP 5.2 limit"
    if _MISSING.search(error):
        return "missing rule"
    return "tool bug"


_WHERE = re.compile(r"^(/[^:\s]+):\d+:\d+: (?:fatal )?error")


def human_blockers(path: Path, errors: list[str], extra: list[str] = ()) -> set[str]:
    """Errors our lint still reports with no fix (inline PTX, WMMA, 32-bit lane masks kept
    where a 64-bit one changes the result) in the translation unit or in the files hipcc's
    first errors point at: constructs a person must port."""
    paths = {str(path)} | {m[1] for e in errors if (m := _WHERE.match(e)) and Path(m[1]).is_file()}
    paths |= {p for p in extra if Path(p).is_file()}
    cmd = [sys.executable, "-m", "cuda2rocm", "lint", "--format", "json", "--exit-zero"]
    cmd += ["--select", "inline-ptx,wmma-cutlass,warp-mask-32bit", *sorted(paths)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    try:
        found = json.loads(done.stdout)
    except json.JSONDecodeError:
        return set()
    items = found.get("diagnostics", found) if isinstance(found, dict) else found
    return {
        d["rule"]
        for d in items
        if isinstance(d, dict) and d.get("severity") == "error" and not d.get("fix")
    }


# -- the run ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", default=os.environ.get("CUDA2ROCM_REAL", "/work/real"))
    parser.add_argument("--hipify-perl", default=os.environ.get("HIPIFY_PERL"))
    parser.add_argument("--hipcub", default=os.environ.get("HIPCUB_INCLUDE"))
    parser.add_argument("--cublas", default=os.environ.get("CUBLAS_INCLUDE"))
    parser.add_argument("--hipblas", default=os.environ.get("HIPBLAS_INCLUDE"))
    parser.add_argument("--rocthrust", default=os.environ.get("ROCTHRUST_INCLUDE"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--only",
        default="",
        help="run only cases whose file contains one of these (comma-separated)",
    )
    parser.add_argument("--nvcc-only", action="store_true", help="only the nvcc columns")
    parser.add_argument("--json", default="", help="write the results here")
    parser.add_argument("--from-json", default="", help="print (and classify) a saved run")
    args = parser.parse_args(argv)
    real = Path(args.real)
    if args.from_json:
        _print(_load(Path(args.from_json), real))
        return 0
    wanted = args.only.split(",")
    cases = [
        c
        for c in CASES
        if any(w in c.file for w in wanted) and (real / c.project / c.file).is_file()
    ]
    missing = [c.file for c in CASES if not (real / c.project / c.file).is_file()]
    print(f"stand-ins for headers HIP 5.2 lacks: {STUBS} ({', '.join(_stub_names())})")
    print(f"hipcc runs with {STUB_RELEASE}: the stand-ins declare ROCm 6.2's hipBLAS/hipBLASLt")
    for name in missing:
        print(f"missing (not fetched): {name}")
    work = Path(tempfile.mkdtemp(prefix="cuda2rocm-real-"))
    try:
        results = _run_all(cases, real, work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _print(results)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                [
                    {"file": f"{r.case.project}/{r.case.file}", **r.__dict__, "case": None}
                    for r in results
                ],
                indent=1,
                default=str,
            )
        )
    return 0


def _load(path: Path, real: Path) -> list[Result]:
    """A saved run, classified again (blockers read from the original files)."""
    by_file = {f"{c.project}/{c.file}": c for c in CASES}
    results = []
    for row in json.loads(path.read_text()):
        case = by_file[row["file"]]
        result = Result(case, row["passed"], row["errors"])
        failing = [c for c in result.errors if c != "orig nvcc"]
        originals = [
            str(real / case.project / m[1].split(f"/{case.project}/", 1)[1])
            for c in failing
            if (m := _WHERE.match(result.errors[c])) and f"/{case.project}/" in m[1]
        ]
        blockers = human_blockers(real / case.project / case.file, [], extra=originals)
        result.classes = {c: classify(result.errors[c], blockers) for c in failing}
        results.append(result)
    return results


def _stub_names() -> list[str]:
    return sorted(str(p.relative_to(STUBS)) for p in STUBS.rglob("*.h*") if p.name != "README.md")


def hipblas_layout(source: str, work: Path) -> list[str]:
    """hipBLAS's headers (its repository's library/include) as ROCm 5.2 installs them."""
    folder = work / "hipblas-include" / "hipblas"
    folder.mkdir(parents=True)
    shutil.copy(Path(source) / "hipblas.h", folder)
    for stub in (STUBS / "hipblas").glob("*.h"):
        shutil.copy(stub, folder)
    return [str(folder.parent), str(folder)]


def _run_all(cases: list[Case], real: Path, work: Path, args) -> list[Result]:
    libraries = [folder for folder in (args.hipcub, args.rocthrust) if folder]
    if args.hipblas:
        libraries += hipblas_layout(args.hipblas, work)
    variants = ["portable", "hip"] + (["hipify-perl"] if args.hipify_perl else []) + ["torch"]
    if args.nvcc_only:
        variants = ["portable"]
    trees: dict[tuple[str, str], Path] = {}
    torch_paths: dict[str, str] = {}
    for variant in variants:
        by_project: dict[str, list[Case]] = {}
        for case in cases:
            by_project.setdefault(case.project, []).append(case)
        for project, group in by_project.items():
            tree = work / variant / project
            for case in group:
                copy_tree(real / project, tree, case)
            folders = sorted({f for c in group for f in c.folders})
            print(f"{variant}: {project} ({len(folders)} folders)", file=sys.stderr)
            if variant in ("portable", "hip"):
                run_cuda2rocm(tree, folders, variant)
            elif variant == "hipify-perl":
                run_hipify_perl(tree, folders, args.hipify_perl)
            else:
                torch_paths.update(run_torch_hipify(tree, folders))
            trees[(variant, project)] = tree
    results = {case: Result(case) for case in cases}
    jobs = []
    for case in cases:
        jobs.append((case, "orig nvcc", lambda c=case: nvcc(real / c.project, c, args.cublas)))
        tree = trees[("portable", case.project)]
        jobs.append((case, "portable nvcc", lambda c=case, t=tree: nvcc(t, c, args.cublas)))
        for variant in variants if not args.nvcc_only else ():
            tree = trees[(variant, case.project)]
            path = tree / case.file
            if variant == "torch":
                path = Path(torch_paths.get(str(path), str(path)))
            label = "torch" if variant == "torch" else variant
            for arch in ARCHS:
                jobs.append(
                    (
                        case,
                        f"{label} {arch}",
                        lambda p=path, t=tree, c=case, a=arch: hipcc(p, t, c, a, libraries),
                    )
                )
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        done = list(pool.map(lambda job: (job[0], job[1], job[2]()), jobs))
    for case, column, proc in done:
        result = results[case]
        result.passed[column] = proc.returncode == 0
        if proc.returncode != 0:
            result.errors[column] = first_error(proc.stderr + proc.stdout)
            result.all_errors[column] = error_lines(proc.stderr + proc.stdout)
    for case, result in results.items():
        failing = [c for c in result.errors if c != "orig nvcc"]
        if failing:
            blockers = human_blockers(
                trees[("portable", case.project)] / case.file,
                [e for c in failing if c.startswith("portable") for e in result.all_errors[c]],
            )
            for column in failing:
                result.classes[column] = classify(result.errors[column], blockers)
    return list(results.values())


def _print(results: list[Result]) -> None:
    width = max((len(f"{r.case.project}/{Path(r.case.file).name}") for r in results), default=10)
    print()
    print("file".ljust(width), *[c.replace(" ", "\u00a0") for c in COLUMNS])
    for r in results:
        marks = [
            "ok" if r.passed.get(c) else ("-" if c not in r.passed else "FAIL") for c in COLUMNS
        ]
        print(f"{r.case.project}/{Path(r.case.file).name}".ljust(width), *marks)
    print()
    print("| column | pass |")
    print("|---|---|")
    for c in COLUMNS:
        ran = [r for r in results if c in r.passed]
        print(f"| {c} | {sum(r.passed[c] for r in ran)}/{len(ran)} |")
    print()
    for r in results:
        for column, error in r.errors.items():
            kind = r.classes.get(column, "not built before")
            print(f"{r.case.project}/{r.case.file} [{column}] ({kind}): {error}")


if __name__ == "__main__":
    raise SystemExit(main())
