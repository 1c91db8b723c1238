"""Baselines: accept today's findings so that an old codebase adopts the tool gradually.

An entry is keyed by rule, path and a hash of the finding's source line with whitespace folded,
so that moving code up or down a file (or re-indenting it) keeps it matched, while changing the
line itself makes the finding new again. Identical keys are counted, not collapsed.

Paths are stored relative to the baseline file's folder, so a baseline matches from any working
directory (version 1 stored them relative to the directory it was written from: read as such).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from cuda2rocm.model import Diagnostic

VERSION = 2


class BaselineError(Exception):
    pass


def _line_hash(line: str) -> str:
    folded = " ".join(line.split())
    return hashlib.sha256(folded.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _anchored(path: str, base: Path) -> str:
    """`path` (as reported: relative to the working directory) relative to `base`."""
    try:
        return PurePath(os.path.relpath(os.path.abspath(path), os.path.abspath(base))).as_posix()
    except ValueError:  # another drive on Windows
        return PurePath(os.path.abspath(path)).as_posix()


def key(diagnostic: Diagnostic, line_text: str, base: Path | None = None) -> tuple[str, str, str]:
    path = _anchored(diagnostic.path, base) if base is not None else diagnostic.path
    return (diagnostic.rule, PurePath(path).as_posix(), _line_hash(line_text))


LineReader = Callable[[str, int], str]


def _reader() -> LineReader:
    cache: dict[str, list[str]] = {}

    def read(path: str, line: int) -> str:
        if path not in cache:
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            cache[path] = text.splitlines()
        lines = cache[path]
        return lines[line - 1] if 0 < line <= len(lines) else ""

    return read


def write(path: Path, diagnostics: Iterable[Diagnostic], read: LineReader | None = None) -> int:
    read = read or _reader()
    base = Path(path).parent
    counts = Counter(key(d, read(d.path, d.position.line), base) for d in diagnostics)
    entries = [
        {"rule": rule, "path": p, "line_hash": h, "count": n}
        for (rule, p, h), n in sorted(counts.items())
    ]
    document = {"version": VERSION, "tool": "cuda2rocm", "entries": entries}
    try:
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write baseline: {exc.strerror or exc}") from exc
    return sum(counts.values())


def load(path: Path) -> Counter:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror}") from exc
    except ValueError as exc:
        raise BaselineError(f"{path}: not a cuda2rocm baseline (invalid JSON: {exc})") from exc
    if not isinstance(document, dict) or document.get("version") not in (1, VERSION):
        raise BaselineError(f"{path}: not a version-{VERSION} cuda2rocm baseline")
    counts: Counter = Counter()
    try:
        for e in document["entries"]:
            where = e["path"]
            if document["version"] == 1:  # relative to the working directory: re-anchor
                where = _anchored(where, path.parent)
            counts[(e["rule"], where, e["line_hash"])] += int(e["count"])
    except (KeyError, TypeError, ValueError) as exc:
        raise BaselineError(f"{path}: malformed baseline entry ({exc})") from exc
    return counts


@dataclass
class Filtered:
    new: list[Diagnostic]
    hidden: int
    #: Baseline entries (counted) that matched nothing: fixed or changed code.
    stale: int
    #: The entries still unmatched (to apply the same baseline to another part of a run).
    left: Counter = field(default_factory=Counter)


def apply(
    diagnostics: list[Diagnostic],
    accepted: Counter,
    read: LineReader | None = None,
    base: Path | None = None,
) -> Filtered:
    """Hide what `accepted` (loaded from a baseline in folder `base`) records."""
    read = read or _reader()
    remaining = Counter(accepted)
    new, hidden = [], 0
    for d in diagnostics:
        k = key(d, read(d.path, d.position.line), base)
        if remaining[k] > 0:
            remaining[k] -= 1
            hidden += 1
        else:
            new.append(d)
    return Filtered(new, hidden, sum(n for n in remaining.values() if n > 0), remaining)
