"""The port plan the HTML report shows: findings per component (a package, an extension's
sources, a CMake project), split into what blocks the ROCm build or run, what risks wrong
results, and notes; what `fix` settles; an effort estimate with its basis; the components that
stay CUDA-only and why; and the trend against a baseline.

Severity carries the meaning (rules/*.toml): an error breaks on ROCm (a blocker), a warning may
give wrong results or slow code (a risk), info asks for a look (a note). Errors and warnings are
*actions*; shares of what `fix` handles are shares of actions, never of notes.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cuda2rocm.model import Diagnostic

BUILD_FILES = ("CMakeLists.txt", "setup.py", "pyproject.toml")
CUDA_ONLY_RULE = "cuda-only-component"

#: Effort levels by the number of decisions left (see `Component.decisions`): the upper bound
#: of each level. Stated in the report; a level is a size, not a time.
EFFORT_LEVELS = ((0, "none"), (5, "small"), (25, "medium"))
EFFORT_BASIS = (
    "one decision per rule per file among the actions `fix` does not settle (findings of one "
    "rule in one file are usually one change, repeated): none 0, small up to 5, medium up to "
    "25, large above"
)


@dataclass(frozen=True)
class Component:
    name: str  # its folder (see `component_of`; "." for the scanned folder's top level)
    kind: str  # what makes it a component: "CMake project", "Python build", "package", "folder"
    files: int
    blockers: int  # errors
    risks: int  # warnings
    notes: int  # info
    safe: int  # actions with a safe fix (`cuda2rocm fix`)
    unsafe: int  # actions with a fix to review (`--unsafe-fixes`)
    manual: int  # actions with no fix
    decisions: int  # distinct (rule, file) among unsafe and manual actions

    @property
    def actions(self) -> int:
        return self.blockers + self.risks

    @property
    def effort(self) -> str:
        return effort_level(self.decisions)


@dataclass(frozen=True)
class CudaOnly:
    """A component the ROCm build leaves out (a `cuda-only-component` finding): its build
    line, why (the finding's message) and whether it is a decision the project already took
    (info) or one still to take (warning)."""

    path: str
    line: int
    why: str
    decided: bool


@dataclass(frozen=True)
class Trend:
    """Today against a baseline: entries it recorded, those still present (hidden), those that
    match nothing any more (fixed or changed code), and findings new since."""

    recorded: int
    still: int
    resolved: int
    new: int


def effort_level(decisions: int) -> str:
    for bound, name in EFFORT_LEVELS:
        if decisions <= bound:
            return name
    return "large"


def is_action(d: Diagnostic) -> bool:
    return d.severity.value in ("error", "warning")


def action_share(findings: Iterable[Diagnostic]) -> tuple[int, int, int]:
    """(safe, unsafe, actions): how many actions each kind of fix settles, notes left out."""
    actions = [d for d in findings if is_action(d) and d.rule != CUDA_ONLY_RULE]
    safe = sum(1 for d in actions if d.fix is not None and d.fix.safety.value == "safe")
    unsafe = sum(1 for d in actions if d.fix is not None and d.fix.safety.value == "unsafe")
    return safe, unsafe, len(actions)


@functools.lru_cache(maxsize=4096)
def _has(folder: str, name: str) -> bool:
    return os.path.isfile(os.path.join(folder or ".", name))


def _root_of(path: str, roots: Sequence[str]) -> str:
    """The deepest scanned folder an absolute path lies under; its own folder when none."""
    best = ""
    for root in roots:
        r = os.path.abspath(root)
        if os.path.isfile(r):
            r = os.path.dirname(r)
        if (path == r or path.startswith(r.rstrip(os.sep) + os.sep)) and len(r) > len(best):
            best = r
    return best or os.path.dirname(path)


def component_of(path: str, roots: Sequence[str] = ()) -> tuple[str, str]:
    """(folder, kind) of the component a file belongs to: the nearest folder below the scanned
    root with its own build (CMakeLists.txt, setup.py, pyproject.toml); else the topmost folder
    of the Python package the file is in; else the first folder under the root; else the root.
    The root's own build is the project, not one of its components. With one scanned folder
    the name is relative to it ("." for its top level); with several, spelled as the finding's
    path is."""
    absolute = os.path.abspath(path)
    root = _root_of(absolute, roots or (".",))
    chain = []
    folder = os.path.dirname(absolute)
    while len(folder) > len(root) and folder.startswith(root):
        chain.append(folder)
        folder = os.path.dirname(folder)
    found = (root, "top level")
    package = None
    for f in chain:  # nearest first
        if _has(f, "CMakeLists.txt"):
            found = (f, "CMake project")
            break
        if _has(f, "setup.py") or _has(f, "pyproject.toml"):
            found = (f, "Python build")
            break
    else:
        for f in chain:
            if not _has(f, "__init__.py"):
                break
            package = f
        if package:
            found = (package, "package")
        elif chain:
            found = (chain[-1], "folder")
    name, kind = found
    if len(roots) <= 1:  # one scanned folder: name components by their place in it
        return os.path.relpath(name, root), kind
    return (name if os.path.isabs(path) else os.path.relpath(name)), kind


def components(findings: Iterable[Diagnostic], roots: Sequence[str] = ()) -> list[Component]:
    """Per component, most work first (decisions left, then blockers)."""
    grouped: dict[tuple[str, str], list[Diagnostic]] = {}
    for d in findings:
        if d.rule == CUDA_ONLY_RULE:
            continue
        grouped.setdefault(component_of(d.path, roots), []).append(d)
    out = []
    for (name, kind), found in grouped.items():
        sev = [d.severity.value for d in found]
        actions = [d for d in found if is_action(d)]
        fix = [d.fix.safety.value if d.fix is not None else "manual" for d in actions]
        left = {(d.rule, d.path) for d, f in zip(actions, fix, strict=True) if f != "safe"}
        out.append(
            Component(
                name=name,
                kind=kind,
                files=len({d.path for d in found}),
                blockers=sev.count("error"),
                risks=sev.count("warning"),
                notes=sev.count("info"),
                safe=fix.count("safe"),
                unsafe=fix.count("unsafe"),
                manual=fix.count("manual"),
                decisions=len(left),
            )
        )
    return sorted(out, key=lambda c: (-c.decisions, -c.blockers, -c.actions, c.name))


def cuda_only(findings: Iterable[Diagnostic]) -> list[CudaOnly]:
    """The components that stay CUDA-only, from the run's `cuda-only-component` findings."""
    return [
        CudaOnly(d.path, d.position.line, d.message, d.severity.value == "info")
        for d in findings
        if d.rule == CUDA_ONLY_RULE
    ]
