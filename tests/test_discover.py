"""Which files are linted: languages by name, .gitignore and excludes, links, binaries."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cuda2rocm.catalogue import load_catalogue, select_rules
from cuda2rocm.discover import Problem, discover, language_of
from cuda2rocm.engine import Linter


@pytest.mark.parametrize(
    ("name", "language"),
    [
        ("train.py", "python"),
        ("kernel.cu", "cuda"),
        ("kernel.cuh", "cuda"),
        ("ops.cpp", "cuda"),
        ("ops.hpp", "cuda"),
        ("CMakeLists.txt", "cmake"),
        ("requirements-dev.txt", "requirements"),
        ("Dockerfile", "dockerfile"),
        ("Dockerfile.rocm", "dockerfile"),
        ("run.sh", "shell"),
        ("README.md", None),
        ("notes.txt", None),
    ],
)
def test_language_by_name(name, language):
    assert language_of(Path(name)) == language


def _names(tmp_path, **kwargs):
    return sorted(f.path.relative_to(tmp_path).as_posix() for f in discover([tmp_path], **kwargs))


def test_gitignore_nested_and_default_excludes(write, tmp_path):
    write(".gitignore", "generated/\n*_hip.cpp\n")
    write("src/a.py", "")
    write("src/.gitignore", "local.py\n")
    write("src/local.py", "")
    write("generated/b.py", "")
    write("src/ops_hip.cpp", "")
    write(".venv/lib/c.py", "")
    write("build/d.py", "")
    write("node_modules/e.py", "")
    assert _names(tmp_path) == ["src/a.py"]


def test_config_excludes(write, tmp_path):
    write("a.py", "")
    write("third_party/b.py", "")
    assert _names(tmp_path, exclude=["third_party/"]) == ["a.py"]


def test_symlink_loops_and_links_out_of_the_tree_are_not_followed(write, tmp_path):
    outside = tmp_path.parent / (tmp_path.name + "-outside")
    outside.mkdir()
    (outside / "secret.py").write_text("x = 1\n")
    write("tree/a.py", "")
    os.symlink(tmp_path / "tree", tmp_path / "tree" / "loop")
    os.symlink(outside, tmp_path / "tree" / "out")
    os.symlink(outside / "secret.py", tmp_path / "tree" / "linked.py")
    assert _names(tmp_path) == ["tree/a.py"]


def test_missing_path_is_a_problem_not_a_crash(tmp_path):
    problems: list[Problem] = []
    assert list(discover([tmp_path / "nope"], problems=problems)) == []
    assert problems and "no such file" in problems[0].message


def test_explicit_file_is_always_linted(write, tmp_path):
    path = write("build/special.py", "")
    assert [f.path for f in discover([path])] == [path]


def test_binary_and_oversized_files_are_skipped_with_a_notice(write, tmp_path):
    write("blob.py", b"import torch\x00\x01" + b"torch.version.cuda" * 10)
    write("big.py", "import torch\nd = torch.device('hip')\n" + "#" * 5000)
    linter = Linter(select_rules(load_catalogue()), max_bytes=4096)
    result = linter.lint_paths([tmp_path])
    assert result.diagnostics == []
    messages = sorted(n.message for n in result.notices)
    assert messages == [
        "skipped: binary file (contains NUL bytes)",
        "skipped: larger than 4096 bytes",
    ]


def test_unreadable_file_is_a_diagnostic(write, tmp_path, monkeypatch):
    write("a.py", "import torch\nd = torch.device('hip')\n")
    write("b.py", "import torch\nd = torch.device('hip')\n")
    real_open = Path.open

    def failing_open(self, *args, **kwargs):
        if self.name == "a.py":
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", failing_open)
    result = Linter(select_rules(load_catalogue())).lint_paths([tmp_path])
    found = sorted((Path(d.path).name, d.rule) for d in result.diagnostics)
    assert found == [("a.py", "read-error"), ("b.py", "device-string-hip")]


def _git(root: Path, *args: str) -> None:
    import subprocess

    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t", *args],
        check=True,
        capture_output=True,
    )


@pytest.mark.skipif(__import__("shutil").which("git") is None, reason="needs git")
def test_tracked_files_are_linted_despite_gitignore(write, tmp_path):
    """A repository that tracks `.cuh` files under a `*.cuh` pattern (added before the pattern,
    or with `add -f`) builds them: they are linted. Untracked matches stay skipped, and so do
    the tool's own excludes."""
    write(".gitignore", "*.cuh\ngen/\n")
    write("csrc/kernel.cuh", "__global__ void k() {}\n")
    write("gen/tracked.cu", "__global__ void g() {}\n")
    write("csrc/main.cu", "__global__ void m() {}\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-f", "csrc/kernel.cuh", "gen/tracked.cu", "csrc/main.cu", ".gitignore")
    _git(tmp_path, "commit", "-q", "-m", "x")
    write("csrc/scratch.cuh", "__global__ void s() {}\n")  # untracked, ignored
    write("gen/new.cu", "__global__ void n() {}\n")  # untracked in an ignored folder
    assert _names(tmp_path) == ["csrc/kernel.cuh", "csrc/main.cu", "gen/tracked.cu"]
    assert _names(tmp_path, exclude=["gen/"]) == ["csrc/kernel.cuh", "csrc/main.cu"]


def test_gitignore_alone_outside_a_repository(write, tmp_path, monkeypatch):
    """No repository (or no git): the .gitignore decides, and nothing fails."""
    write(".gitignore", "*.cuh\n")
    write("a.cuh", "x\n")
    write("a.cu", "x\n")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert _names(tmp_path) == ["a.cu"]
    monkeypatch.setenv("PATH", "/nonexistent")
    assert _names(tmp_path) == ["a.cu"]
