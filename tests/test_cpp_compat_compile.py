"""Compiler-compatibility rules, proven with the real compilers.

Each fixture under tests/fixtures/cuda_compat/ compiles with nvcc and fails with hipcc (the
expected clang error is asserted); after `cuda2rocm fix --unsafe` on a copy it compiles with
nvcc and with hipcc for gfx90a (wave64) and gfx1030 (wave32) in one invocation. Rules without a
fix are proven by the diagnostic naming the construct hipcc rejects. Tests skip only when a
compiler is missing. All compiles of the module run once, in parallel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

FIXTURES = ROOT / "tests" / "fixtures" / "cuda_compat"
HIP_ARCHS = ("gfx90a", "gfx1030")

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
needs_hipcc = pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")


@dataclass(frozen=True)
class Case:
    fixture: str
    rule: str
    #: Lines of hipcc's output (gfx90a) before this rule's fix (the other rules' fixes applied).
    hip_errors: tuple[str, ...]
    #: Extra nvcc flags (torch's extension build passes --expt-relaxed-constexpr).
    nvcc_flags: tuple[str, ...] = ()
    #: Findings of `rule` that stay after the fix (diagnosis-only constructs).
    remaining: int = 0
    #: No fix exists: hipcc still fails after `fix`, only on lines the rule reports; errors
    #: inside HIP's own headers must contain one of these texts.
    blocked_by: tuple[str, ...] = ()


CASES = [
    Case(
        "dependent_typename.cu",
        "clang-dependent-typename",
        (
            "error: missing 'typename' prior to dependent type name 'FloatTraits::BlockLoad'",
            "error: missing 'typename' prior to dependent type name 'FloatTraits::Value'",
        ),
    ),
    Case(
        "std_minmax.cu",
        "std-minmax-device",
        (
            "error: constexpr variable 'kTile' must be initialized by a constant expression",
            "error: constexpr function never produces a constant expression",
            "error: no matching function for call to 'min'",
            "error: no matching function for call to 'max'",
        ),
        nvcc_flags=("--expt-relaxed-constexpr",),
    ),
    Case(
        "nvcc_only_guard.cu",
        "nvcc-only-guard",
        ("error: no matching function for call to 'square'",),
        remaining=1,  # the `#ifdef __NVCC__` pragma guard: info, no fix
    ),
    Case(
        "kernel_pointer_api.cu",
        "kernel-pointer-api",
        (
            "error: no matching function for call to 'hipFuncSetAttribute'",
            "error: no matching function for call to 'hipFuncSetCacheConfig'",
            "error: no matching function for call to 'hipFuncGetAttributes'",
        ),
    ),
    Case(
        "device_limits.cu",
        "device-limits",
        ("error: no member named 'sharedMemPerBlockOptin' in 'hipDeviceProp_t'",),
        remaining=4,
        blocked_by=("sharedMemPerBlockOptin",),
    ),
    Case(
        "cooperative_groups.cu",
        "cooperative-groups",
        (
            "error: no member named 'ballot' in 'cooperative_groups::thread_block_tile<32, void>'",
            "error: no member named 'num_threads' in 'cooperative_groups::thread_block'",
            "error: no member named 'labeled_partition' in namespace 'cooperative_groups'",
            "error: no member named 'meta_group_rank' in "
            "'cooperative_groups::thread_block_tile<32, void>'",
        ),
        remaining=5,  # warp.meta_group_rank() of a block tile is fixed; the rest stay
        blocked_by=("size > wavefront size", "greater than the wavefront size"),
    ),
]
IDS = [c.fixture for c in CASES]


def nvcc(path: Path, flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    cmd = ["nvcc", "-arch=sm_80", *flags, "-c", str(path), "-o", f"{path}.nv.o"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def hipcc(path: Path, *archs: str) -> subprocess.CompletedProcess:
    cmd = ["hipcc", *(f"--offload-arch={a}" for a in archs), "-x", "hip", "-c", str(path)]
    cmd += ["-o", f"{path}.amd.o"]
    env = dict(os.environ, HIP_PLATFORM="amd")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


#: The HIP these tests compile with (hipcc 5.2.3): lint and fix for that release.
HIP_RELEASE = ("--rocm-version", "5.2")


def _lint(path: Path) -> list[dict]:
    out = run_cli("lint", "--format", "json", *HIP_RELEASE, str(path))
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)["diagnostics"]


def _fixed(directory: Path, case: Case, *options: str) -> Path:
    """The fixture, copied into `directory` and fixed by `cuda2rocm fix --unsafe OPTIONS`."""
    directory.mkdir(parents=True)
    shutil.copy(FIXTURES / case.fixture, directory / case.fixture)
    result = run_cli("fix", "--unsafe", *HIP_RELEASE, *options, str(directory))
    assert result.returncode in (0, 1), result.stderr
    return directory / case.fixture


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> dict[tuple[str, str], Path]:
    """Per case: `before` (every fix but this rule's: the compatibility header is in place) and
    `after` (every fix)."""
    root = tmp_path_factory.mktemp("compat")
    paths = {}
    for case in CASES:
        stem = case.fixture.removesuffix(".cu")
        paths["before", case.fixture] = _fixed(root / stem / "before", case, "--ignore", case.rule)
        paths["after", case.fixture] = _fixed(root / stem / "after", case)
    return paths


@pytest.fixture(scope="module")
def compiled(trees):
    """Every compile of the module, run in parallel: {(kind, fixture): CompletedProcess}."""
    jobs = {}
    with ThreadPoolExecutor(max_workers=8) as pool:
        for case in CASES:
            before, after = trees["before", case.fixture], trees["after", case.fixture]
            if shutil.which("nvcc"):
                original = before.parent / "original.cu"
                shutil.copy(FIXTURES / case.fixture, original)
                jobs["nvcc", case.fixture] = pool.submit(nvcc, original, case.nvcc_flags)
                jobs["nvcc-fixed", case.fixture] = pool.submit(nvcc, after, case.nvcc_flags)
            if shutil.which("hipcc"):
                jobs["hipcc", case.fixture] = pool.submit(hipcc, before, HIP_ARCHS[0])
                jobs["hipcc-fixed", case.fixture] = pool.submit(hipcc, after, *HIP_ARCHS)
        return {key: job.result() for key, job in jobs.items()}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_rule_fires_on_its_fixture(case):
    found = [d for d in _lint(FIXTURES / case.fixture) if d["rule"] == case.rule]
    assert len(found) > case.remaining or (case.blocked_by and found)


@needs_nvcc
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_nvcc_accepts_the_original(case, compiled):
    result = compiled["nvcc", case.fixture]
    assert result.returncode == 0, result.stderr


@needs_hipcc
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_hipcc_rejects_the_construct(case, compiled):
    result = compiled["hipcc", case.fixture]
    assert result.returncode != 0
    for error in case.hip_errors:
        assert error in result.stderr, result.stderr


@needs_nvcc
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_nvcc_accepts_the_fixed_file(case, compiled, trees):
    result = compiled["nvcc-fixed", case.fixture]
    assert result.returncode == 0, result.stderr


@needs_hipcc
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_hipcc_accepts_the_fixed_file_for_wave64_and_wave32(case, compiled, trees):
    result = compiled["hipcc-fixed", case.fixture]
    if not case.blocked_by:
        assert result.returncode == 0, result.stderr
        return
    # No fix exists: hipcc fails only where the rule reports (or in HIP's own headers, on the
    # construct the rule names).
    after = trees["after", case.fixture]
    errors = [line for line in result.stderr.splitlines() if ": error:" in line]
    assert errors, result.stderr
    reported = [d for d in _lint(after) if d["rule"] == case.rule]
    lines = {d["line"] for d in reported}
    for error in errors:
        if error.startswith(str(after)):
            assert int(error[len(str(after)) + 1 :].split(":")[0]) in lines, error
        else:
            assert any(text in error for text in case.blocked_by), error


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fix_is_complete_and_idempotent(case, trees):
    after = trees["after", case.fixture]
    before = trees["before", case.fixture]
    assert after.read_text() != before.read_text() or case.blocked_by
    left = [d for d in _lint(after) if d["rule"] == case.rule]
    assert len(left) == case.remaining, left
    assert all(d["fix"] is None for d in left)
    again = run_cli("fix", "--unsafe", *HIP_RELEASE, str(after))
    assert "Fixed 0 findings" in again.stdout


def test_typename_cast_parses_cleanly():
    """`typename T::X(args)` is valid C++ the grammar cannot parse: the front-end copes."""
    from cuda2rocm.frontends import cpp
    from cuda2rocm.sources import SourceFile

    text = (
        "template <typename T> __device__ float f(float* s) {\n"
        "  float a = typename T::Loader(s).Load(0);\n"
        "  return a + typename T::Value(1);\n"
        "}\n"
        "template <typename T> struct A { typename T::Fn (*fp)(int); };\n"
    )
    view = cpp.parse(SourceFile("a.cu", "cuda", text))
    assert view.first_error is None
    assert [view.text(c) for c in view.calls] == [
        "T::Loader(s).Load(0)",
        "T::Loader(s)",
        "T::Value(1)",
    ]
