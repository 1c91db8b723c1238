"""What a project's packaging ships, read from its files (never run): where the compatibility
header may go.

A source compiled from an installed package or an unpacked sdist (an op builder that
JIT-compiles from site-packages, a header installed by CMake) finds the compatibility header
only if the packaging ships it beside the source, in the same installed tree. `shipped_unit`
answers, for a path, which installed tree holds it:

- setuptools: `package_data` (setup.py keywords, `[tool.setuptools.package-data]`), with
  `include_package_data` and MANIFEST.in; a package is a folder with `__init__.py`, installed as
  its top-level package. Patterns are globs relative to the package's folder (`*` within one
  folder, `**` across folders), the `""` and `"*"` keys for every package (setuptools docs,
  "Data Files Support").
- MANIFEST.in alone (an sdist, which builds in its unpacked tree): include, exclude,
  recursive-include, recursive-exclude, global-include, global-exclude, graft, prune.
- CMake: `install(DIRECTORY ...)` (with `FILES_MATCHING PATTERN`) and `install(FILES ...)`.

The answer is the unit's root (a string) when shipped, NOT_SHIPPED when the path lies in a
packaged area that the packaging does not ship, None when no packaging concerns it (a source
compiled in the tree: any place in the tree works).
"""

from __future__ import annotations

import ast
import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

NOT_SHIPPED = "<not shipped>"
_PROJECT_FILES = ("setup.py", "pyproject.toml", "setup.cfg")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A setuptools/MANIFEST-style glob as a regex over POSIX relative paths."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append({"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c)))
        i += 1
    return re.compile("".join(out) + r"\Z")


@dataclass(frozen=True)
class _Manifest:
    """MANIFEST.in as ordered (include?, predicate over a root-relative POSIX path)."""

    steps: tuple = ()

    def matches(self, rel: str) -> bool:
        keep = False
        for include, test in self.steps:
            if test(rel):
                keep = include
        return keep


def _manifest(text: str) -> _Manifest:
    steps = []
    for raw in text.splitlines():
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        command, args = words[0], words[1:]
        include = not command.endswith(("exclude", "prune"))
        if command in ("include", "exclude"):
            pats = [glob_regex(a) for a in args]
            steps.append((include, lambda r, p=pats: any(x.match(r) for x in p)))
        elif command in ("recursive-include", "recursive-exclude") and args:
            base = args[0].strip("/")
            pats = [glob_regex(a) for a in args[1:]]
            steps.append(
                (
                    include,
                    lambda r, b=base, p=pats: (
                        (b in ("", ".") or r.startswith(b + "/"))
                        and any(x.match(r.rsplit("/", 1)[-1]) for x in p)
                    ),
                )
            )
        elif command in ("global-include", "global-exclude"):
            pats = [glob_regex(a) for a in args]
            steps.append((include, lambda r, p=pats: any(x.match(r.rsplit("/", 1)[-1]) for x in p)))
        elif command in ("graft", "prune") and args:
            base = args[0].strip("/")
            steps.append((include, lambda r, b=base: r.startswith(b + "/")))
    return _Manifest(tuple(steps))


@dataclass(frozen=True)
class _Python:
    root: Path
    package_root: Path
    package_data: dict = field(default_factory=dict)
    include_package_data: bool = False
    manifest: _Manifest | None = None
    scm: bool = False  # setuptools-scm: every tracked file in a package is data
    known: bool = True  # False when package_data or include_package_data is computed


#: A setup() keyword whose value is computed (not a literal): the packaging cannot be read.
DYNAMIC = object()


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return DYNAMIC


def _setup_py(path: Path) -> dict:
    """Literal keywords of the `setup(...)` call (names bound to literals are followed)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return {}
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                bound[target.id] = node.value
    out = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", getattr(node.func, "attr", ""))
        if name != "setup":
            continue
        for kw in node.keywords:
            value = kw.value
            if isinstance(value, ast.Name) and value.id in bound:
                value = bound[value.id]
            out[kw.arg] = _literal(value)
    return out


@functools.lru_cache(maxsize=256)
def _python_project(root: str) -> _Python | None:
    base = Path(root)
    setup = _setup_py(base / "setup.py") if (base / "setup.py").is_file() else {}
    data: dict = {}
    try:
        data = tomllib.loads((base / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeError):
        data = {}
    tool = data.get("tool", {}).get("setuptools", {})
    if not setup and not tool and "project" not in data:
        return None
    known = all(setup.get(k) is not DYNAMIC for k in ("package_data", "include_package_data"))
    package_data = {}
    for source in (tool.get("package-data"), setup.get("package_data")):
        if isinstance(source, dict):
            for key, pats in source.items():
                if isinstance(pats, str):
                    pats = [pats]
                if isinstance(pats, list):
                    package_data.setdefault(str(key), []).extend(str(p) for p in pats)
    # pyproject-configured setuptools includes package data by default; setup.py does not.
    include = setup.get("include_package_data")
    if include is None:
        include = tool.get("include-package-data", "project" in data)
    if include is DYNAMIC:
        include = False
    package_dir = setup.get("package_dir") or tool.get("package-dir") or {}
    where = package_dir.get("", "") if isinstance(package_dir, dict) else ""
    requires = " ".join(map(str, data.get("build-system", {}).get("requires", [])))
    manifest = None
    if (base / "MANIFEST.in").is_file():
        manifest = _manifest((base / "MANIFEST.in").read_text(encoding="utf-8", errors="replace"))
    return _Python(
        base,
        base / where,
        package_data,
        bool(include),
        manifest,
        "setuptools_scm" in requires.replace("-", "_") or bool(setup.get("use_scm_version")),
        known,
    )


def _project_root(path: Path) -> Path | None:
    for folder in path.parents:
        if any((folder / name).is_file() for name in _PROJECT_FILES):
            return folder
        if (folder / ".git").exists():
            return None
    return None


def _python_unit(path: Path) -> str | None:
    root = _project_root(path)
    project = _python_project(str(root)) if root is not None else None
    if project is None:
        return None
    # Package folders from the package root down to the file's folder (a contiguous chain).
    try:
        rel_parts = path.parent.relative_to(project.package_root).parts
    except ValueError:
        rel_parts = None
    packages: list[Path] = []
    if rel_parts:
        folder = project.package_root
        for part in rel_parts:
            folder = folder / part
            if not (folder / "__init__.py").is_file():
                break
            packages.append(folder)
    if packages:
        top = str(packages[0])
        for folder in packages:
            name = ".".join(folder.relative_to(project.package_root).parts)
            pats = [
                *project.package_data.get(name, []),
                *project.package_data.get("", []),
                *project.package_data.get("*", []),
            ]
            rel = path.relative_to(folder).as_posix()
            if any(glob_regex(p).match(rel) for p in pats):
                return top
        if project.include_package_data:
            rel = path.relative_to(project.root).as_posix()
            if project.scm or (project.manifest is not None and project.manifest.matches(rel)):
                return top
        return NOT_SHIPPED if project.known else None
    if project.manifest is not None:
        rel = path.relative_to(project.root).as_posix()
        return str(project.root) if project.manifest.matches(rel) else None
    return None


_INSTALL = re.compile(r"\binstall\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)", re.I | re.S)
_KEYWORDS = {
    "DESTINATION",
    "FILES_MATCHING",
    "PATTERN",
    "REGEX",
    "EXCLUDE",
    "COMPONENT",
    "PERMISSIONS",
    "OPTIONAL",
    "TYPE",
    "RENAME",
    "USE_SOURCE_PERMISSIONS",
    "CONFIGURATIONS",
    "MESSAGE_NEVER",
    "FILE_PERMISSIONS",
    "DIRECTORY_PERMISSIONS",
}


@functools.lru_cache(maxsize=256)
def _cmake_installs(cmakelists: str) -> tuple:
    """(kind, paths, patterns, destination) of each install(FILES|DIRECTORY ...)."""
    path = Path(cmakelists)
    try:
        text = re.sub(r"#[^\n]*", " ", path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return ()
    out = []
    for m in _INSTALL.finditer(text):
        words = [w.strip('"') for w in m.group(1).split()]
        if not words or words[0].upper() not in ("FILES", "DIRECTORY"):
            continue
        kind, items, patterns, dest, mode = words[0].upper(), [], [], "", "items"
        for w in words[1:]:
            up = w.upper()
            if up in _KEYWORDS:
                mode = {"DESTINATION": "dest", "PATTERN": "pattern"}.get(up, "other")
                continue
            if mode == "items":
                w = re.sub(r"\$\{CMAKE_CURRENT_(?:SOURCE|LIST)_DIR\}/?", "", w)
                items.append(os.path.normpath(path.parent / w) + ("/" if w.endswith("/") else ""))
            elif mode == "dest":
                dest = w
            elif mode == "pattern":
                patterns.append(w)
        out.append((kind, tuple(items), tuple(patterns), dest))
    return tuple(out)


def _cmake_unit(path: Path) -> str | None:
    unit = None
    for folder in path.parents:
        lists = folder / "CMakeLists.txt"
        if lists.is_file():
            for kind, items, patterns, dest in _cmake_installs(str(lists)):
                for item in items:
                    base = item.rstrip("/")
                    if kind == "FILES" and os.path.normpath(path) == base:
                        return f"{lists}:{dest}"
                    if kind == "DIRECTORY" and str(path).startswith(base + os.sep):
                        if patterns and not any(glob_regex(p).match(path.name) for p in patterns):
                            unit = unit or NOT_SHIPPED
                            continue
                        return base
                    if kind == "FILES" and os.path.dirname(base) == str(path.parent):
                        unit = unit or NOT_SHIPPED  # a sibling is installed, this file is not
        if (folder / ".git").exists():
            break
    return unit


def shipped_unit(path: str | os.PathLike) -> str | None:
    """The installed tree that ships `path` (its root), NOT_SHIPPED when the path lies in a
    packaged area its packaging does not ship, or None when no packaging concerns it."""
    p = Path(os.path.abspath(path))
    found = [u for u in (_python_unit(p), _cmake_unit(p)) if u is not None]
    shipped = [u for u in found if u != NOT_SHIPPED]
    if shipped:
        return shipped[0]
    return NOT_SHIPPED if found else None
