"""Walk the given paths: which files to lint, in which language, honouring .gitignore and excludes.

Symlinks are never followed during the walk (no loops, nothing outside the tree); a symlink
named explicitly on the command line is linted like any file it points to.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pathspec

DEFAULT_EXCLUDE = (
    ".git/",
    ".hg/",
    ".svn/",
    ".venv/",
    "venv/",
    "__pycache__/",
    "node_modules/",
    ".tox/",
    ".nox/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".pytest_cache/",
    ".cuda2rocm_cache/",
    "*.egg-info/",
    "build/",
    "dist/",
)

_SUFFIXES = {
    ".py": "python",
    ".pyi": "python",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".cpp": "cuda",
    ".cc": "cuda",
    ".cxx": "cuda",
    ".c": "cuda",
    ".h": "cuda",
    ".hpp": "cuda",
    ".hxx": "cuda",
    ".inl": "cuda",
    ".cmake": "cmake",
    ".sh": "shell",
    ".bash": "shell",
    ".dockerfile": "dockerfile",
    # No rule reads Cython; its `cdef extern from` blocks are include edges (context).
    ".pyx": "cython",
    ".pxd": "cython",
    ".pxi": "cython",
}
#: Languages read only for the project's facts, never linted.
CONTEXT_ONLY = frozenset({"cython"})


def language_of(path: Path) -> str | None:
    """Language by file name; None for files no rule reads."""
    name = path.name
    lower = name.lower()
    if name == "CMakeLists.txt":
        return "cmake"
    if lower.startswith("dockerfile") or lower.endswith(".dockerfile"):
        return "dockerfile"
    if lower.startswith("requirements") and lower.endswith((".txt", ".in")):
        return "requirements"
    if name == "pyproject.toml":
        return "requirements"
    return _SUFFIXES.get(path.suffix.lower())


@dataclass(frozen=True)
class Found:
    path: Path
    display: str
    language: str


@dataclass(frozen=True)
class Problem:
    """A path that could not be walked (permission denied, missing); reported, never fatal."""

    display: str
    message: str


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # different drive on Windows
        return str(path)


class _Ignores:
    """Gitignore files seen so far, each matching relative to its own directory."""

    def __init__(self, extra: Iterable[str], root: Path) -> None:
        self.root = root
        self.specs: list[tuple[Path, pathspec.PathSpec]] = []
        patterns = list(DEFAULT_EXCLUDE) + list(extra)
        self.specs.append((root, pathspec.GitIgnoreSpec.from_lines(patterns)))

    def add_gitignore(self, directory: Path) -> None:
        gi = directory / ".gitignore"
        try:
            lines = gi.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
        self.specs.append((directory, pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(self, path: Path, is_dir: bool, tracked: bool = False) -> bool:
        """Whether to skip `path`. A file git tracks (`tracked`, or a folder holding one) is
        skipped only by the tool's own excludes, never by a .gitignore pattern: git keeps
        tracking a file added before its pattern (or with `add -f`), and it is built."""
        for base, spec in self.specs[:1] if tracked else self.specs:
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if spec.match_file(rel + "/" if is_dir else rel):
                return True
        return False


def discover(
    paths: Iterable[str | os.PathLike],
    exclude: Iterable[str] = (),
    respect_gitignore: bool = True,
    problems: list[Problem] | None = None,
    force_exclude: bool = False,
    root: Path | None = None,
) -> Iterator[Found]:
    """Yield lintable files under `paths` in a deterministic (sorted) order.

    A file named explicitly is linted even if excluded, unless `force_exclude` (what pre-commit
    needs, since it passes every changed file): then the excludes, read relative to `root`
    (the configuration's directory), apply to it too.
    """
    problems = problems if problems is not None else []
    exclude = list(exclude)
    seen: set[Path] = set()
    forced = _Ignores(exclude, (root or Path.cwd()).resolve()) if force_exclude else None
    for raw in paths:
        given = Path(raw)
        if not given.exists() and not given.is_symlink():
            problems.append(Problem(str(raw), "no such file or directory"))
            continue
        if given.is_file():
            lang = language_of(given)
            if forced is not None and forced.ignored(given.resolve(), False):
                continue
            if lang is not None and given not in seen:
                seen.add(given)
                yield Found(given, _display(given), lang)
            continue
        if not given.is_dir():
            problems.append(Problem(str(raw), "not a regular file or directory (or a broken link)"))
            continue
        root = given.resolve()
        ignores = _Ignores(exclude, root)
        if respect_gitignore:
            for directory in _repository_chain(root):
                ignores.add_gitignore(directory)
        tracked = tracked_files(root) if respect_gitignore else None
        yield from _walk(given, root, ignores, respect_gitignore, problems, seen, tracked)


def tracked_files(root: Path) -> frozenset[str] | None:
    """Paths (relative to `root`, POSIX, folders included) that git tracks under `root`, or None
    when git is absent, fails, or `root` is not in a work tree (then .gitignore alone decides).
    """
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached"],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    out: set[str] = set()
    for raw in done.stdout.split(b"\0"):
        if not raw:
            continue
        rel = PurePosixPath(os.fsdecode(raw))
        out.add(rel.as_posix())
        out.update(p.as_posix() for p in rel.parents if p.as_posix() != ".")
    return frozenset(out)


def _repository_chain(root: Path) -> list[Path]:
    """Directories from the enclosing repository's top down to `root` (outside git: `root`)."""
    chain = [root]
    if (root / ".git").exists():
        return chain
    for parent in root.parents:
        chain.append(parent)
        if (parent / ".git").exists():
            return list(reversed(chain))
    return [root]


def _walk(given, root, ignores, respect_gitignore, problems, seen, tracked=None) -> Iterator[Found]:
    tracked = tracked or frozenset()

    def known(path: Path) -> bool:
        return bool(tracked) and path.relative_to(root).as_posix() in tracked

    def onerror(exc: OSError) -> None:
        problems.append(
            Problem(_display(Path(exc.filename or given)), f"cannot read: {exc.strerror}")
        )

    for dirpath, dirnames, filenames in os.walk(given, onerror=onerror, followlinks=False):
        current = Path(dirpath)
        absolute = root / current.relative_to(given)
        if respect_gitignore and absolute != root:
            ignores.add_gitignore(absolute)
        keep = []
        for d in sorted(dirnames):
            if (current / d).is_symlink() or ignores.ignored(
                absolute / d, True, known(absolute / d)
            ):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            path = current / name
            lang = language_of(path)
            if (
                lang is None
                or path.is_symlink()
                or ignores.ignored(absolute / name, False, known(absolute / name))
            ):
                continue
            if path in seen:
                continue
            seen.add(path)
            yield Found(path, _display(path), lang)
