"""The release process works from what a user or CI actually has: a tagged clone, a clone
without tags, a shallow clone, a tree without git metadata, an sdist. Each builds a wheel that
installs offline and whose `cuda2rocm --version` names the version and the date of its facts;
the pre-commit hooks install from this repository and run."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from conftest import ROOT

import cuda2rocm
from cuda2rocm import provenance

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HAVE_BUILD = all(importlib.util.find_spec(m) for m in ("hatchling", "hatch_vcs"))
needs_build = pytest.mark.skipif(not HAVE_BUILD, reason="hatchling and hatch-vcs not installed")
PEP440 = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[a-z0-9.]+)?$")


def _git(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
    )
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


def _copy_worktree(dest: Path) -> None:
    """The files git would commit (tracked and untracked, not ignored): today's work, not HEAD."""
    listed = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


@pytest.fixture(scope="module")
def tagged_repo(tmp_path_factory) -> Path:
    """A git repository of the working tree, tagged v9.8.7 (a release as CI would build it)."""
    repo = tmp_path_factory.mktemp("release") / "repo"
    repo.mkdir()
    _copy_worktree(repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "snapshot")
    _git(repo, "tag", "v9.8.7")
    return repo


def _build(src: Path, out: Path, target: str = "wheel") -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", target, "-d", str(out)],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = out.glob("*.whl" if target == "wheel" else "*.tar.gz")
    return built


PIP_OFFLINE = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index"]


def _installed_version(wheel: Path, target: Path) -> str:
    """Install the wheel offline (no index, no dependencies: they are this interpreter's) and
    run its console script, as a user's shell would."""
    done = subprocess.run(
        [*PIP_OFFLINE, "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    env = dict(os.environ, PYTHONPATH=str(target))
    done = subprocess.run(
        [str(target / "bin" / "cuda2rocm"), "--version"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_fallback_version_is_the_one_pyproject_gives_hatch_vcs():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert data["tool"]["hatch"]["version"]["fallback-version"] == cuda2rocm.FALLBACK_VERSION
    assert PEP440.match(cuda2rocm.__version__)


def test_version_names_the_date_of_the_rocm_facts(cli):
    out = cli("--version").stdout.strip()
    facts = provenance.facts()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", facts.checked)
    assert out.startswith(f"cuda2rocm {cuda2rocm.__version__} ")
    assert f"ROCm facts checked {facts.checked}" in out and facts.rocm in out


def test_unreadable_facts_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "facts.toml"
    bad.write_text("checked = \n")
    with pytest.raises(RuntimeError, match=r"facts\.toml"):
        provenance.facts(bad)


def test_changelog_has_an_entry_for_the_fallback_release():
    text = (ROOT / "CHANGELOG.md").read_text()
    release = cuda2rocm.FALLBACK_VERSION.split(".dev")[0]
    assert re.search(rf"^## \[?{re.escape(release)}\]?", text, re.M), release


@needs_build
def test_tagged_clone_builds_the_tagged_version(tagged_repo, tmp_path):
    wheel = _build(tagged_repo, tmp_path / "dist")
    assert wheel.name.startswith("cuda2rocm-9.8.7-")
    line = _installed_version(wheel, tmp_path / "site")
    assert line.startswith("cuda2rocm 9.8.7 (ROCm facts checked ")


@needs_build
def test_sdist_keeps_its_version_without_git(tagged_repo, tmp_path):
    sdist = _build(tagged_repo, tmp_path / "dist", "sdist")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    (unpacked,) = (tmp_path / "x").iterdir()
    assert not (unpacked / ".git").exists()
    wheel = _build(unpacked, tmp_path / "wheel")
    assert wheel.name.startswith("cuda2rocm-9.8.7-")


@needs_build
def test_shallow_clone_without_tags_builds_a_dev_version(tagged_repo, tmp_path):
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", str(tagged_repo), str(work))
    (work / "NEWS").write_text("after the release\n")
    _git(work, "add", "NEWS")
    _git(work, "commit", "-q", "-m", "after")
    shallow = tmp_path / "shallow"
    _git(tmp_path, "clone", "-q", "--depth", "1", "--no-tags", f"file://{work}", str(shallow))
    assert not _git(shallow, "tag").strip()
    wheel = _build(shallow, tmp_path / "dist")
    version = wheel.name.split("-")[1]
    assert PEP440.match(version) and ".dev" in version, version


@needs_build
def test_tree_without_git_metadata_builds_the_fallback(tagged_repo, tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(tagged_repo, plain, ignore=shutil.ignore_patterns(".git"))
    wheel = _build(plain, tmp_path / "dist")
    assert wheel.name.startswith(f"cuda2rocm-{cuda2rocm.FALLBACK_VERSION}-")


# -- pre-commit --------------------------------------------------------------------------------

TRY_REPO = [sys.executable, "-m", "pre_commit", "try-repo"]
HOOKS = ROOT / ".pre-commit-hooks.yaml"
HAVE_PRE_COMMIT = importlib.util.find_spec("pre_commit") is not None
PORTABLE = "import torch\n\nx = torch.zeros(2).cuda()\n"
BROKEN = 'import torch\n\nx = torch.zeros(2, device="hip")\n'  # CR102, an error


@pytest.mark.skipif(not HAVE_PRE_COMMIT, reason="pre-commit not installed")
def test_hooks_manifest_is_valid_and_installs_from_this_repository():
    from pre_commit.clientlib import load_manifest

    hooks = {h["id"]: h for h in load_manifest(str(HOOKS))}
    assert set(hooks) == {"cuda2rocm-lint", "cuda2rocm-fix"}
    for hook in hooks.values():
        # `language: python` installs this repository with pip: no other download than its
        # dependencies, no system tool.
        assert hook["language"] == "python"
        assert shlex.split(hook["entry"])[0] == "cuda2rocm"


@pytest.mark.skipif(not HAVE_PRE_COMMIT, reason="pre-commit not installed")
def test_hook_entries_run_as_written(tmp_path):
    """Each entry as pre-commit runs it (entry + the changed files), without pre-commit."""
    from pre_commit.clientlib import load_manifest

    hooks = {h["id"]: h for h in load_manifest(str(HOOKS))}
    (tmp_path / "bad.py").write_text(BROKEN)
    (tmp_path / "good.py").write_text(PORTABLE)
    env = dict(os.environ, NO_COLOR="1")

    def run(hook: str, *files: str):
        argv = shlex.split(hooks[hook]["entry"])[1:]
        cmd = [sys.executable, "-m", "cuda2rocm", *argv, *files]
        return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env)

    assert run("cuda2rocm-lint", "good.py").returncode == 0
    bad = run("cuda2rocm-lint", "good.py", "bad.py")
    assert bad.returncode == 1 and "bad.py:3" in bad.stdout
    fixed = run("cuda2rocm-fix", "bad.py")
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr  # it changed the file: review it
    assert 'device="cuda"' in (tmp_path / "bad.py").read_text()
    assert run("cuda2rocm-fix", "bad.py").returncode == 0  # nothing left to change


@pytest.mark.skipif(not HAVE_PRE_COMMIT, reason="pre-commit not installed")
def test_pre_commit_try_repo_against_this_repository(tagged_repo, tmp_path):
    """`pre-commit try-repo` builds the hook's environment with pip from this repository; its
    dependencies come from whatever index pip is configured with. Without one it skips."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "bad.py").write_text(BROKEN)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pc-home"), NO_COLOR="1")
    done = subprocess.run(
        [*TRY_REPO, str(tagged_repo), "cuda2rocm-lint", "--files", "bad.py", "--color", "never"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    out = done.stdout + done.stderr
    if "An unexpected error has occurred" in out and re.search(
        r"pip|No matching distribution|Could not find a version|network", out, re.I
    ):
        pytest.skip(f"pre-commit could not build the hook environment (no package index?):\n{out}")
    assert done.returncode == 1, out
    assert "cuda2rocm lint (ROCm portability)" in out and "Failed" in out
    assert "bad.py:3" in out
