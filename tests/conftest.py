from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_cli(*args: str, cwd: Path | None = None, input: str | None = None):
    """Run the installed command line in a subprocess, as a user would."""
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "cuda2rocm", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        input=input,
        timeout=300,
    )


@pytest.fixture
def cli():
    return run_cli


def lint_json(root: Path, *paths: str) -> list[dict]:
    """Every diagnostic, guarded ones included, of `cuda2rocm lint` run in `root` (JSON)."""
    out = run_cli(
        "lint", "--no-cache", "--format", "json", "--show-guarded", "--exit-zero",
        *(paths or (".",)), cwd=root,
    ).stdout  # fmt: skip
    return json.loads(out)["diagnostics"]


def fix_alone(tmp_path: Path, target: str, name: str, text: str) -> Path:
    """The file `name` after `fix --unsafe --target target`, alone in a folder of its own."""
    folder = tmp_path / target
    folder.mkdir()
    (folder / name).write_text(text)
    done = run_cli("fix", "--unsafe", "--exit-zero", "--target", target, str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    return folder / name


@pytest.fixture
def fixed_file(tmp_path):
    """fixed_file(name, text, target) -> `fix_alone` in this test's folder."""
    return lambda name, text, target: fix_alone(tmp_path, target, name, text)


@pytest.fixture
def write(tmp_path):
    """write("a/b.py", text) -> Path, creating directories."""

    def _write(name: str, text: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_bytes(text.encode("utf-8"))
        return path

    return _write


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Write a fixture project: relative name -> text."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def lint_rules(root: Path, *rules: str):
    """The runner's result for `root` with only `rules` selected."""
    from cuda2rocm import runner
    from cuda2rocm.catalogue import load_catalogue
    from cuda2rocm.engine import Linter

    specs = [r for r in load_catalogue() if r.id in rules]
    return runner.run(Linter(specs), [root])


def reported_and_guarded(result, root: Path) -> tuple[set, dict]:
    """(path, line) of reported findings (component summaries left out), and of guarded ones
    with their reasons."""

    def rel(d):
        return Path(d.path).resolve().relative_to(root.resolve()).as_posix()

    reported = {
        (rel(d), d.position.line) for d in result.diagnostics if d.rule != "cuda-only-component"
    }
    guarded = {(rel(d), d.position.line): d.guarded for d in result.guarded}
    return reported, guarded


def check_marked_lines(code: str, paths) -> None:
    """Each line ending in `# dead` must have a guard reason at its first column, each ending
    in `# live` none; at least one line is marked."""
    marked = 0
    for number, line in enumerate(code.splitlines(), 1):
        mark = line.rsplit("#", 1)[-1].strip() if "#" in line else ""
        if mark not in ("dead", "live"):
            continue
        marked += 1
        column = len(line) - len(line.lstrip()) + 1
        reason = paths.reason(number, column)
        assert bool(reason) == (mark == "dead"), f"line {number}: {line.strip()!r} -> {reason!r}"
    assert marked


# -- markers (registered in pyproject.toml) -----------------------------------------------------
# Applied here, by file and by test, so that `pytest -m "not compilers and not slow"` is a quick
# loop and no test file has to remember its marks. `compilers`: runs nvcc, hipcc, clang, g++
# (HIP-CPU) or headless Chromium (each such test also skips when its tool is missing). `slow`:
# lints large trees, kills and restarts runs, or creates virtual environments and installs into
# them (> ~10 s each on two cores); chosen from a full run's --durations=0.

COMPILER_FILES = {
    "test_compiler_facts.py",
    "test_cpp_compat_compile.py",
    "test_cpp_compile.py",
    "test_fix_builds_shims.py",
    "test_nvcc_flags_hipcc.py",
    "test_fix_builds_project.py",
    "test_warp_fix_behaviour.py",
}
COMPILER_TESTS = {
    "test_cublas_mapping.py::test_hipcc_builds_the_fixed_cublas_file",
    "test_cublas_mapping.py::test_nvcc_builds_the_portable_cublas_file",
    "test_cublaslt_mapping.py::test_hipcc_builds_the_fixed_file_over_rocm6_declarations",
    "test_cublaslt_mapping.py::test_nvcc_builds_the_portable_file",
    "test_preprocessor_model.py::test_model_agrees_with_hipcc",
    "test_report_html.py::test_report_renders_in_headless_chromium",
    "test_report_plan.py::test_plan_renders_at_desktop_and_phone_width",
}
SLOW_TESTS = {
    "test_reliability.py::test_sigkill_mid_fix_leaves_every_file_original_or_fully_fixed",
    "test_reliability.py::test_smoke_run_over_a_large_varied_tree",
    "test_workflow.py::test_pre_commit_hook_fails_on_bad_file_and_passes_on_clean",
    "test_workflow.py::test_action_install_step_installs_this_checkout_into_its_own_environment",
    "test_release.py::test_pre_commit_try_repo_against_this_repository",
}
# A skip condition that names one of these tools marks a compiler test wherever it is.
_TOOL_WORDS = ("nvcc", "hipcc", "clang", "g++", "chromium", "hip-cpu")


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        name = Path(str(item.fspath)).name
        test = f"{name}::{getattr(item, 'originalname', item.name)}"
        reasons = " ".join(
            str(m.kwargs.get("reason", "")) for m in item.iter_markers(name="skipif")
        ).lower()
        if (
            name in COMPILER_FILES
            or test in COMPILER_TESTS
            or any(w in reasons for w in _TOOL_WORDS)
        ):
            item.add_marker(pytest.mark.compilers)
        if test in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
