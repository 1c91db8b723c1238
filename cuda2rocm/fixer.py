"""Applying fixes: non-overlapping text edits, repeated to a fixed point, re-parsed, then written.

A fix that makes the file unparsable is never written. Writes are atomic (temporary file in
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

from cuda2rocm.model import Diagnostic, Edit, Fix, Safety
from cuda2rocm.sources import SourceFile

MAX_ROUNDS = 10
_PARSE_FAILURES = ("parse-error", "internal-error")


class FixError(Exception):
    pass


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    out, last = [], 0
    for edit in sorted(edits):
        if edit.start < last:
            raise FixError(f"overlapping edits at offset {edit.start}")
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
        if fix is None or diag.guarded or (fix.safety is Safety.UNSAFE and not unsafe) or not fix.edits:
            continue
        if any(fix.edits == c.edits for c in chosen):
            continue
        if any(fix.overlaps(c) for c in chosen):
            continue
        chosen.append(fix)
    return chosen


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
    was_broken = syntax_error(source) if syntax_error else None
    current = source
    for _ in range(MAX_ROUNDS):
        fixes = choose_fixes(diagnostics, unsafe)
        if not fixes:
            break
        new_text = apply_edits(current.text, [e for f in fixes for e in f.edits])
        if new_text == current.text:
            break
        candidate = SourceFile(source.path, source.language, new_text, source.encoding, source.bom)
        new_diagnostics = lint(candidate)
        broken = next((d.message for d in new_diagnostics if d.rule in _PARSE_FAILURES), None)
        if broken is None and syntax_error is not None:
            broken = syntax_error(candidate)
        if broken and not was_broken:
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
    **discovery,
) -> FixReport:
    """Fix every file under `paths` (in parallel when there are many); write only files that
    change, atomically, from this process.

    With `cache` (lint's result cache), a file whose cached findings have no fix to apply is
    not parsed again. `progress(done, total)` counts the bytes of the files parsed."""
    from cuda2rocm import runner
    from cuda2rocm.build_context import python_sources, torch_built_dirs
    from cuda2rocm.discover import Problem, discover

    report = FixReport()
    problems: list[Problem] = []
    items = list(discover(paths, exclude=exclude, problems=problems, **discovery))
    read = []
    for index, item in enumerate(items):
        data, (early, _) = linter.read(item)
        if data is None:
            report.errors += [(d.path, d.message) for d in early]
        else:
            read.append((index, item, data))
    linter.torch_built_dirs = torch_built_dirs(python_sources(items, read))
    work = [
        (item, data, unsafe)
        for _, item, data in read
        if linter.wants(item.language, data)
        and not runner.nothing_to_fix(linter, cache, item, data, unsafe)
    ]
    done, total = 0, sum(len(w[1]) for w in work)

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    results = runner.map_files(linter, _fix_one, work, jobs, advance, weight=lambda w: len(w[1]))
    for (item, _, _), (outcome, error) in zip(work, results, strict=True):
        if error:
            report.errors.append((item.display, error))
            continue
        report.outcomes.append(outcome)
        if write and outcome.changed:
            try:
                write_atomic(item.path, outcome.encoded)
            except OSError as exc:
                report.errors.append((item.display, f"cannot write: {exc.strerror}"))
    report.errors += [(p.display, p.message) for p in problems]
    cpp_files = {
        str(Path(o.path)): (o.original, o.fixed)
        for o in report.outcomes
        if o.changed and Path(o.path).suffix.lower() in _CPP_SUFFIXES
    }
    if cpp_files:
        _compat_headers(cpp_files, report, write)
    return report


def _fix_one(linter, work) -> tuple[FixOutcome | None, str | None]:
    """Fix one file's bytes; runs in a worker process (module-level so it can be sent)."""
    from cuda2rocm import sources

    item, data, unsafe = work
    try:
        text, encoding, bom = sources.decode(data, item.display, item.language)
    except sources.SourceError as exc:
        return None, str(exc)
    source = SourceFile(item.display, item.language, text, encoding, bom)
    outcome = fix_source(source, linter.lint_source, unsafe, linter.syntax_error)
    outcome.encoded = source.encode(outcome.fixed)
    return outcome, None


_CPP_SUFFIXES = {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx", ".inl"}


def _compat_headers(files: dict[str, tuple[str, str]], report: FixReport, write: bool) -> None:
    """Write the project-local compatibility header beside every fixed file that includes it."""
    from cuda2rocm import compat_header
    from cuda2rocm.frontends import cpp

    existing = {}
    for directory in {str(Path(p).parent) for p in files}:
        header = Path(directory) / cpp.DEFAULT_COMPAT_HEADER
        if header.is_file():
            existing[str(header)] = header.read_text(encoding="utf-8", errors="replace")
    for path, content in compat_header.plan(files, existing).items():
        before = existing.get(path, "")
        if before == content:
            continue
        report.headers.append(FixOutcome(path, before, content))
        if not write:
            continue
        try:
            if Path(path).exists():
                write_atomic(Path(path), content.encode("utf-8"))
            else:
                Path(path).write_text(content, encoding="utf-8")
        except OSError as exc:
            report.errors.append((path, f"cannot write the compatibility header: {exc.strerror}"))
