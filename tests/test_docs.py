"""The README's commands, the front door's size, the docs site and its generated rule pages,
and the versions the examples pin stay true."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest
from conftest import ROOT

from cuda2rocm.catalogue import load_catalogue

PINNED = re.compile(r"(?:rev: |OWNER/cuda2rocm@)([0-9a-f]{40})\b")


def _generator():
    spec = importlib.util.spec_from_file_location("gen", ROOT / "tools" / "gen_rule_docs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)\n```", readme, re.S).group(1).splitlines()
    assert len(block) == 2 and "lint examples/" in block[0] and "pytest" in block[1]
    assert block[1] in (ROOT / ".ci" / "run").read_text()
    assert readme.startswith("# cuda2rocm\n\n```sh\n"), "the two commands open the README"


def test_readme_is_a_front_door():
    """Two screens, not a lab notebook: reference lives in docs/, history in git."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert not re.search(r"/work/|/tmp/", readme), "no paths of one machine"
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).exists(), link


def test_one_generated_page_per_rule():
    pages = _generator().pages()
    rules = load_catalogue()
    assert set(pages) == {"rules/index.md"} | {f"rules/{r.id}.md" for r in rules}
    for r in rules:
        assert pages[f"rules/{r.id}.md"].startswith(f"# {r.id} ({r.code})\n")
        assert f"[{r.id}]({r.id}.md)" in pages["rules/index.md"]


def test_docs_site_builds_strictly(tmp_path):
    """`mkdocs build --strict`: every link and anchor resolves, every page is in the nav (the
    hook appends pages the nav does not name, so a new docs/<topic>.md needs no edit)."""
    pytest.importorskip("material", reason="mkdocs-material not installed (the `test` extra)")
    (ROOT / "docs" / "zz-new-topic.md").write_text("# A page nobody named\n")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        (ROOT / "docs" / "zz-new-topic.md").unlink()
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "rules" / "warp-size-32" / "index.html").is_file()
    assert (tmp_path / "changelog" / "index.html").is_file()
    home = (tmp_path / "index.html").read_text()
    assert "zz-new-topic/" in home and "A page nobody named" in home  # in the nav


def _pinned() -> set[str]:
    texts = [(ROOT / "README.md").read_text(), (ROOT / "docs" / "integrations.md").read_text()]
    return {sha for text in texts for sha in PINNED.findall(text)}


def test_examples_pin_one_commit_that_has_the_hooks_and_the_action():
    pinned = _pinned()
    assert len(pinned) == 1, pinned  # one SHA, so a release updates every example at once
    assert "v0.1.0" not in (ROOT / "README.md").read_text()  # no tag that does not exist
    (sha,) = pinned
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    known = subprocess.run(["git", "cat-file", "-e", f"{sha}^{{commit}}"], cwd=ROOT)
    if known.returncode != 0:
        pytest.skip(f"{sha} is not in this clone (a shallow clone?)")
    listed = subprocess.run(
        ["git", "ls-tree", "--name-only", sha, "--", "action.yml", ".pre-commit-hooks.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(listed) == [".pre-commit-hooks.yaml", "action.yml"]
    run_sh = subprocess.run(
        ["git", "show", f"{sha}:action/run.sh"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    assert "--also-write" in run_sh  # the one-lint Action these pages describe
