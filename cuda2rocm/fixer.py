"""Applying fixes: non-overlapping text edits, repeated to a fixed point, re-parsed, then written.

Every edit carries the text it believes it replaces (`Edit.original`, derived by the rule
independently of the offsets); a file where any chosen edit's span holds other text is refused
whole, with an internal-error finding naming the rule, and nothing is written. A fix that makes
the file unparsable is never written either. Writes are atomic (temporary file in
the same directory, then rename) and keep the encoding, BOM, newlines and mode of the file.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cuda2rocm.catalogue import find_rule
from cuda2rocm.model import Diagnostic, Edit, Fix, Safety
from cuda2rocm.sources import SourceFile

MAX_ROUNDS = 10
_PARSE_FAILURES = ("parse-error", "internal-error")


class FixError(Exception):
    pass


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """`text` with every edit applied; FixError when edits overlap or one's span does not hold
    its declared original (callers check first, so this is a last line of defence)."""
    out, last = [], 0
    for edit in sorted(edits):
        if edit.start < last:
            raise FixError(f"overlapping edits at offset {edit.start}")
        if not edit.matches(text):
            raise FixError(
                f"edit at offset {edit.start} expects {edit.original!r}, "
                f"the file has {text[edit.start : edit.end]!r}"
            )
        out.append(text[last : edit.start])
        out.append(edit.replacement)
        last = edit.end
    out.append(text[last:])
    return "".join(out)


def choose_fixes(diagnostics: Iterable[Diagnostic], unsafe: bool) -> list[Fix]:
    """Fixes to apply in one round: allowed by safety, first come first served, no overlaps.

    Identical fixes (several findings sharing one binding-wide rewrite) are applied once.
    """
    chosen: list[Fix] = []
    for diag in sorted(diagnostics, key=lambda d: d.sort_key):
        fix = diag.fix
        if (
            fix is None
            or diag.guarded
            or (fix.safety is Safety.UNSAFE and not unsafe)
            or not fix.edits
        ):
            continue
        if any(fix.edits == c.edits for c in chosen):
            continue
        if any(fix.overlaps(c) for c in chosen):
            continue
        chosen.append(fix)
    return chosen


def mismatched(text: str, diagnostics: Iterable[Diagnostic], fixes: list[Fix]) -> Diagnostic | None:
    """An internal-error finding for the first chosen fix with an edit whose span in `text` is
    not the text the rule declared it replaces (a wrong span: applying it would corrupt the
    file), else None."""
    chosen = {f.edits for f in fixes}
    for diag in sorted(diagnostics, key=lambda d: d.sort_key):
        if diag.fix is None or diag.fix.edits not in chosen:
            continue
        for edit in diag.fix.edits:
            if edit.matches(text):
                continue
            found = text[edit.start : edit.end]
            spec = find_rule("internal-error")
            return Diagnostic(
                path=diag.path,
                rule=spec.id,
                code=spec.code,
                severity=spec.severity,
                step=spec.step,
                position=diag.position,
                message=(
                    f"rule {diag.rule} made an edit at offset {edit.start} that expects "
                    f"{_clip(edit.original)} but the file has {_clip(found)} there; no fix was "
                    f"written to this file; this is a bug in cuda2rocm, please report it"
                ),
            )
    return None


def _clip(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


@dataclass
class FixOutcome:
    path: str
    original: str
    fixed: str
    applied: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    #: Set when the fixes were refused (the result did not re-parse); nothing is written.
    refused: str | None = None
    #: The fixed text in the file's own encoding, BOM included (what `fix` writes).
    encoded: bytes = b""

    @property
    def changed(self) -> bool:
        return self.refused is None and self.fixed != self.original

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.original.splitlines(keepends=True),
                self.fixed.splitlines(keepends=True),
                fromfile=f"a/{self.path}",
                tofile=f"b/{self.path}",
            )
        )


def fix_source(source: SourceFile, lint, unsafe: bool = False, syntax_error=None) -> FixOutcome:
    """Lint, apply, re-lint until nothing changes.

    `lint(source) -> list[Diagnostic]`; `syntax_error(source) -> str | None` checks each result
    independently of the linter's prefilter, so a fix that breaks the file is always caught.
    """
    original = source.text
    diagnostics = lint(source)
    outcome = FixOutcome(source.path, original, original)
    current = source
    for _ in range(MAX_ROUNDS):
        fixes = choose_fixes(diagnostics, unsafe)
        if not fixes:
            break
        stale = mismatched(current.text, diagnostics, fixes)
        if stale is not None:
            outcome.refused = stale.message
            outcome.remaining = [*lint(source), stale]
            return outcome
        new_text = apply_edits(current.text, [e for f in fixes for e in f.edits])
        if new_text == current.text:
            break
        candidate = SourceFile(source.path, source.language, new_text, source.encoding, source.bom)
        new_diagnostics = lint(candidate)
        broken = next((d.message for d in new_diagnostics if d.rule in _PARSE_FAILURES), None)
        if broken is None and syntax_error is not None:
            broken = syntax_error(candidate)
        # Whether the original parsed is asked only now: it is a whole parse of the file.
        if broken and not (syntax_error(source) if syntax_error else None):
            outcome.refused = f"the fixed file would not parse ({broken}); not written"
            outcome.remaining = lint(source)
            return outcome
        applied_edits = {f.edits for f in fixes}
        outcome.applied += [d for d in diagnostics if d.fix and d.fix.edits in applied_edits]
        current, diagnostics = candidate, new_diagnostics
    outcome.fixed = current.text
    outcome.remaining = diagnostics
    return outcome


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` by `data` so that a crash leaves either the old or the new file."""
    path = Path(path)
    mode = stat.S_IMODE(path.stat().st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".cuda2rocm", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@dataclass
class FixReport:
    outcomes: list[FixOutcome] = field(default_factory=list)
    #: (path, message) for files that could not be read, decoded or written.
    errors: list[tuple[str, str]] = field(default_factory=list)
    #: Compatibility headers written (or, without writing, that would be): path -> outcome.
    headers: list[FixOutcome] = field(default_factory=list)


def fix_paths(
    linter,
    paths,
    exclude=(),
    unsafe: bool = False,
    write: bool = True,
    jobs: int = 1,
    cache=None,
    progress=None,
    items=None,
    **discovery,
) -> FixReport:
    """Fix every file under `paths` (in parallel when there are many); write only files that
    change, atomically, from this process.

    With `cache` (lint's result cache), a file whose cached findings have no fix to apply is
    not parsed again, and a file's fix outcome is kept (under its cache digest): on a tree
    unchanged since the last lint or fix (warm.Snapshot), nothing is parsed and the project
    facts are not derived again. `progress(done, total)` counts the bytes of the files parsed.
    `items`: the files under `paths`, already discovered (then `paths` is not walked again)."""
    from cuda2rocm.discover import Problem, discover

    report = FixReport()
    problems: list[Problem] = []
    if items is None:
        items = list(discover(paths, exclude=exclude, problems=problems, **discovery))
    else:
        items = list(items)
    outcomes = None
    if cache is not None:
        outcomes = _fixes_from_snapshot(linter, cache, items, unsafe, jobs, progress)
    if outcomes is None:
        outcomes = _fix_items(linter, items, report, unsafe, jobs, cache, progress)
    targets: list[tuple] = []
    for item, (outcome, error) in outcomes:
        if error:
            report.errors.append((item.display, error))
            continue
        report.outcomes.append(outcome)
        targets.append((item, outcome))
    report.errors += [(p.display, p.message) for p in problems]
    cpp = {
        str(Path(o.path)): o
        for o in report.outcomes
        if o.changed and Path(o.path).suffix.lower() in _CPP_SUFFIXES
    }
    if cpp:
        _compat_headers(cpp, report, write, _oldest_code(linter))
    for item, outcome in targets:
        if write and outcome.changed:
            try:
                write_atomic(item.path, outcome.encoded)
            except OSError as exc:
                report.errors.append((item.display, f"cannot write: {exc.strerror}"))
    return report


def _fix_items(linter, items, report: FixReport, unsafe: bool, jobs: int, cache, progress):
    """(item, (outcome, error)) of every file with something to fix: read all, derive the
    project facts, fix in parallel what neither cache answers."""
    from cuda2rocm import runner

    read = []
    for index, item in enumerate(items):
        data, (early, _) = linter.read(item)
        if data is None:
            report.errors += [(d.path, d.message) for d in early]
        else:
            read.append((index, item, data))
    runner.prepare(linter, items, read)  # never fix code ROCm does not build or run
    kept = _fix_cache(cache)
    work, known = [], []
    for _, item, data in read:
        if not linter.wants(item.language, data):
            continue
        digest = runner.file_digest(linter, item, data) if cache is not None else None
        if runner.nothing_to_fix(linter, cache, item, data, unsafe, digest):
            continue
        outcome = _kept_outcome(kept, item, data, digest, unsafe)
        if outcome is not None:
            known.append((item, outcome))
        else:
            found = cache.get(item.display, digest) if cache is not None else None
            work.append((item, data, unsafe, digest, found))
    fixed = _fix_work(linter, work, kept, unsafe, jobs, progress) + known
    order = {item.display: k for k, item in enumerate(items)}
    return sorted(fixed, key=lambda pair: order[pair[0].display])


def _fix_cache(cache):
    """Fix outcomes kept beside lint's result cache, under the same fingerprint."""
    from cuda2rocm.cache import Cache

    return Cache(cache.directory, cache.key, kind="fixes") if cache is not None else None


def _outcome_json(outcome: FixOutcome) -> dict:
    return {
        "fixed": outcome.fixed if outcome.fixed != outcome.original else None,
        "applied": [d.to_json() for d in outcome.applied],
        "remaining": [d.to_json() for d in outcome.remaining],
        "refused": outcome.refused,
    }


def _kept_outcome(kept, item, data: bytes, digest: str | None, unsafe: bool):
    """The kept fix outcome of these bytes, rebuilt without parsing, or None."""
    from cuda2rocm import sources

    value = kept.get_raw(item.display, f"{digest}|{unsafe}") if kept is not None else None
    if not isinstance(value, dict) or digest is None:
        return None
    try:
        text, encoding, bom = sources.decode(data, item.display, item.language)
        source = SourceFile(item.display, item.language, text, encoding, bom)
        fixed = text if value["fixed"] is None else str(value["fixed"])
        outcome = FixOutcome(
            item.display,
            text,
            fixed,
            applied=[Diagnostic.from_json(d) for d in value["applied"]],
            remaining=[Diagnostic.from_json(d) for d in value["remaining"]],
            refused=value["refused"],
        )
        outcome.encoded = source.encode(fixed)
    except (sources.SourceError, KeyError, TypeError, ValueError, UnicodeError):
        return None
    return outcome, None


def _fixes_from_snapshot(linter, cache, items, unsafe: bool, jobs: int, progress):
    """On a tree unchanged since the last lint or fix (warm.Snapshot), the outcome of every
    file with something to fix: kept outcomes, else fixed now with the recorded project facts
    (only those files are read and parsed). None when the tree changed or the facts cannot be
    restored: then the full path."""
    from cuda2rocm import runner, warm

    snapshot = warm.Snapshot(cache, items)
    if not snapshot.unchanged():
        return None
    kept = _fix_cache(cache)
    out, work = [], []
    for item in items:
        digest = snapshot.digest(item.display)
        if digest is None or runner.nothing_to_fix(linter, cache, item, None, unsafe, digest):
            continue  # not linted (the prefilter) or nothing to fix
        try:
            data = item.path.read_bytes()
        except OSError:
            return None
        outcome = _kept_outcome(kept, item, data, digest, unsafe)
        if outcome is not None:
            out.append((item, outcome))
        else:
            work.append((item, data, unsafe, digest, cache.get(item.display, digest)))
    if work:
        if not warm.restore_facts(snapshot, linter):
            return None
        out += _fix_work(linter, work, kept, unsafe, jobs, progress)
        order = {item.display: k for k, item in enumerate(items)}
        out.sort(key=lambda pair: order[pair[0].display])
    return out


def _fix_work(linter, work: list, kept, unsafe: bool, jobs: int, progress) -> list:
    """Fix `work` ((item, bytes, unsafe, digest, cached findings or None)) in parallel;
    keep the outcomes."""
    from cuda2rocm import runner

    done, total = 0, sum(len(w[1]) for w in work)

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    results = runner.map_files(linter, _fix_one, work, jobs, advance, weight=lambda w: len(w[1]))
    if kept is not None:
        for (item, _, _, digest, _), (outcome, error) in zip(work, results, strict=True):
            if outcome is not None and error is None:
                kept.put_raw(item.display, f"{digest}|{unsafe}", _outcome_json(outcome))
        kept.save()
    return [(w[0], r) for w, r in zip(work, results, strict=True)]


def _fix_one(linter, work) -> tuple[FixOutcome | None, str | None]:
    """Fix one file's bytes; runs in a worker process (module-level so it can be sent)."""
    from cuda2rocm import sources

    item, data, unsafe = work[:3]
    cached = work[4] if len(work) > 4 else None
    try:
        text, encoding, bom = sources.decode(data, item.display, item.language)
    except sources.SourceError as exc:
        return None, str(exc)
    source = SourceFile(item.display, item.language, text, encoding, bom)

    def lint(candidate: SourceFile) -> list[Diagnostic]:
        # The original's findings are lint's, cached under this very content and context:
        # only the fixed text needs linting.
        if candidate is source and cached is not None:
            return list(cached)
        return linter.lint_source(candidate)

    outcome = fix_source(source, lint, unsafe, linter.syntax_error)
    outcome.encoded = source.encode(outcome.fixed)
    return outcome, None


def _existing_headers(users: list[str], name: str) -> list[Path]:
    """Compatibility headers already on disk: in the users' common folder and its parents (up
    to a repository root; none above the folder when no repository holds it), and where the
    users' own includes point."""
    import os
    import re

    found: list[Path] = []
    folder = Path(os.path.commonpath([os.path.abspath(os.path.dirname(u) or ".") for u in users]))
    above: list[tuple[Path, bool]] = []
    rooted = False
    tree = True  # still inside the contiguous source tree around the fixed files
    for directory in (folder, *folder.parents):
        tree = tree and (directory == folder or _holds_sources(directory, name))
        if (directory / name).is_file():
            above.append((directory / name, tree))
        if (directory / ".git").exists():
            rooted = True
            break
    # Up to the repository root; with no repository around the fixed files, only up through
    # folders that hold sources or build files themselves (a stray header in a folder of
    # unrelated checkouts is not this project's). A header a previous run wrote elsewhere is
    # still found through the includes it left (below).
    found += [h for h, inside in above if rooted or inside]
    pattern = re.compile(rf'#\s*include\s*"((?:[^"\n]*/)?{re.escape(name)})"')
    for user in users:
        try:
            text = Path(user).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for m in pattern.finditer(text):
            target = Path(os.path.dirname(user) or ".") / m[1]
            if target.is_file() and target not in found:
                found.append(target)
    return [Path(os.path.relpath(f)) if not os.path.isabs(users[0]) else f.resolve() for f in found]


_BUILD_FILES = ("setup.py", "pyproject.toml", "setup.cfg", "CMakeLists.txt")


def _holds_sources(directory: Path, header: str) -> bool:
    """Whether `directory` itself holds C/C++ sources (besides a compatibility header) or a
    build file: a folder of the project, not one that only collects checkouts."""
    try:
        return any(
            (e.suffix in _CPP_SUFFIXES and e.name != header) or e.name in _BUILD_FILES
            for e in directory.iterdir()
            if e.is_file()
        )
    except OSError:
        return False


def _relink_bytes(outcome: FixOutcome, relinked: str) -> bytes:
    """The new include spelling in the file's own bytes (the directives are ASCII)."""
    encoded = outcome.encoded
    for old, new in zip(
        outcome.fixed.splitlines(keepends=True), relinked.splitlines(keepends=True), strict=False
    ):
        if old != new:
            encoded = encoded.replace(old.strip().encode("ascii"), new.strip().encode("ascii"), 1)
    return encoded


_CPP_SUFFIXES = {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx", ".inl"}


def _oldest_code(linter) -> int:
    """The oldest ROCm release the port supports, as major * 100 + minor (0: unknown)."""
    targets = getattr(linter, "targets", None)
    return targets.oldest[0] * 100 + targets.oldest[1] if targets is not None else 0


def _compat_headers(
    outcomes: dict[str, FixOutcome], report: FixReport, write: bool, oldest: int = 0
) -> None:
    """Write the project's one compatibility header and point every fixed file's include at it.

    The header goes where compat_header.location says: an existing one (found above the fixed
    files, or through the includes a previous run wrote) when it holds them all, else their
    deepest common folder. Includes are rewritten to the path relative to each file.
    """
    from cuda2rocm import compat_header
    from cuda2rocm.frontends import cpp

    name = cpp.DEFAULT_COMPAT_HEADER
    files = {p: (o.original, o.fixed) for p, o in outcomes.items()}
    users = compat_header.including(files, name)
    if not users:
        return
    existing = {}
    for candidate in _existing_headers(users, name):
        existing[str(candidate)] = candidate.read_text(encoding="utf-8", errors="replace")
    planned = compat_header.plan(files, existing, name, oldest=oldest)
    for planned_path, content in planned.items():
        # The packaging decides where a shipped file finds the header (compat_header.place);
        # files it refuses do not count towards the common folder.
        chosen, refused = compat_header.place(users, planned_path, name)
        if refused and len(refused) < len(users):
            kept = {p: f for p, f in files.items() if p not in refused}
            for again in compat_header.plan(kept, existing, name, oldest=oldest):
                chosen, more = compat_header.place(
                    [u for u in users if u not in refused], again, name
                )
                refused.update(more)
        for user, why in refused.items():
            outcomes[user].refused = why  # reported with the file; nothing is written
        for user, path in chosen.items():
            outcome = outcomes[user]
            relinked = compat_header.relink(outcome.fixed, user, path, name)
            if relinked != outcome.fixed:
                outcome.encoded = _relink_bytes(outcome, relinked)
                outcome.fixed = relinked
        for path in sorted(set(chosen.values())):
            _write_header(path, existing, content, report, write)


def _write_header(path: str, existing: dict, content: str, report: FixReport, write: bool) -> None:
    """Write one copy of the compatibility header (an unchanged copy is not touched)."""
    if path not in existing and Path(path).is_file():
        existing[path] = Path(path).read_text(encoding="utf-8", errors="replace")
    before = existing.get(path, "")
    if before == content:
        return
    report.headers.append(FixOutcome(path, before, content))
    if not write:
        return
    try:
        if Path(path).exists():
            write_atomic(Path(path), content.encode("utf-8"))
        else:
            Path(path).write_text(content, encoding="utf-8")
    except OSError as exc:
        report.errors.append((path, f"cannot write the compatibility header: {exc.strerror}"))
