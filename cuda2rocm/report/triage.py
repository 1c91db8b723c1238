"""Triage order for reports read by people: what blocks ROCm first, grouped by component.

Severity says what a finding costs (model.Severity): an error breaks the ROCm build or run (a
blocker), a warning gives wrong results or a trap on ROCm, an info is worth a look. Within each,
findings are grouped by component: the top folder below the deepest folder common to every
reported path (a package, an extension's sources, a CMake subproject), so the work of one part
of the tree reads as one block; files directly in that folder form the "(top level)" group.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from cuda2rocm.model import Diagnostic

SECTIONS = {
    "error": "Blockers: break the build or the run on ROCm",
    "warning": "Wrong results or traps on ROCm",
    "info": "Notes",
}
TOP_LEVEL = "(top level)"


@dataclass(frozen=True)
class Group:
    severity: str
    component: str
    diagnostics: tuple[Diagnostic, ...]


def _parts(path: str) -> list[str]:
    return [p for p in os.path.normpath(path).replace(os.sep, "/").split("/") if p]


def components(paths: Iterable[str]) -> dict[str, str]:
    """path -> its component (top folder below the deepest folder common to all paths)."""
    paths = sorted(set(paths))
    split = {p: _parts(p) for p in paths}
    folders = [parts[:-1] for parts in split.values()]
    common = 0
    if folders:
        shortest = min(len(f) for f in folders)
        while common < shortest and len({f[common] for f in folders}) == 1:
            common += 1
    out = {}
    for path, parts in split.items():
        below = parts[common:]
        if len(below) > 1:
            out[path] = "/".join(parts[: common + 1]) + "/"
        else:  # directly in the common folder: that folder, or the top level of the run
            out[path] = "/".join(parts[:common]) + "/" if common else TOP_LEVEL
    return out


def groups(diagnostics: Iterable[Diagnostic]) -> list[Group]:
    """Findings in triage order: severity (errors first), component, then path and line."""
    found = list(diagnostics)
    of = components(d.path for d in found)
    keyed: dict[tuple[int, str], list[Diagnostic]] = {}
    for d in found:
        keyed.setdefault((d.severity.rank, of[d.path]), []).append(d)
    out = []
    for (_, component), items in sorted(
        keyed.items(), key=lambda kv: (kv[0][0], kv[0][1] == TOP_LEVEL, kv[0][1])
    ):
        items.sort(key=lambda d: d.sort_key)
        out.append(Group(items[0].severity.value, component, tuple(items)))
    return out
