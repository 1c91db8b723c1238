"""The whole-tree warm path: an unchanged tree is answered from one snapshot, without reading,
prefiltering or re-deriving the project's facts.

The result cache (cache.py) keys each file's findings by its content and the project facts
(build membership, Python flags, macros); computing those facts reads and analyses the whole
tree, so a warm run used to cost most of a cold run's reading. A snapshot, kept beside the
result cache under the same fingerprint (tool version and code, rules, options, config), records
for one list of files each file's size, mtime and content hash, the files and folders outside
that list the facts read, each file's prefilter verdict and cache digest, and the run's whole
result. A later run with the same files answers from it when nothing changed: `stat` every file,
hash only those whose stat differs or is too recent to trust (a write within the same clock tick
leaves size and mtime alike), then report. Anything else falls back to the full run, which
still reuses the recorded prefilter verdicts of files whose content is unchanged.

Snapshots are written whole and atomically; a corrupt, foreign or unreadable one is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from cuda2rocm.cache import Cache, content_hash
from cuda2rocm.discover import Found
from cuda2rocm.engine import LintResult, Notice
from cuda2rocm.model import Diagnostic

FORMAT = 1
#: A file whose mtime is this close to the run that recorded it may change again without its
#: size or mtime changing (coarse file-system clocks): it is hashed next time, not trusted.
RACY_NS = 2_000_000_000
#: Snapshots kept per cache folder (one per list of files: a whole tree, a pre-commit subset).
KEEP = 32


def _stat(path: Path | str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


class Snapshot:
    """The recorded state of one list of files under one cache key (see the module doc)."""

    def __init__(self, cache: Cache, items: list[Found]) -> None:
        self.started_ns = time.time_ns()
        self.cache = cache
        self.directory = cache.directory
        self.key = cache.key
        names = "\0".join([os.getcwd(), *(f"{i.display}\1{i.language}" for i in items)])
        names = names.encode("utf-8", "surrogateescape")
        self.ident = hashlib.blake2b(names, digest_size=12).hexdigest()
        self.file = self.directory / f"tree-{self.key[:16]}-{self.ident}.json"
        self.items = items
        #: display -> [size, mtime_ns or None (not to be trusted), hash or None, wants, digest]
        self.previous: dict[str, list] = {}
        #: Paths outside the list that the project facts read: path -> [size, mtime_ns] or None
        self.outside: dict[str, list | None] = {}
        self.result: dict | None = None
        #: The token of the facts kept beside the loaded snapshot (None: none kept).
        self.recorded_facts: str | None = None
        #: (file, token) of the facts of the latest snapshot of another list of files, whose
        #: per-file parts `FactsMemo` may reuse.
        self.other_facts: tuple[Path, str] | None = None
        #: The token of the facts this run keeps (`save_facts`).
        self.facts_token: str | None = None
        self._load()
        #: This run's records, written by `save`.
        self.records: dict[str, list] = {}
        #: This run's stats and hashes, as `unchanged` found them.
        self.stats: dict[str, tuple[int, int] | None] = {}
        self.hashes: dict[str, str] = {}

    def _load(self) -> None:
        """The snapshot of this list of files; else, for its prefilter verdicts only, the
        latest one of this key (a file was added or removed since)."""
        candidates = [self.file]
        if not self.file.exists():
            with contextlib.suppress(OSError, ValueError):  # none: nothing to reuse
                others = self.directory.glob(f"tree-{self.key[:16]}-*.json")
                candidates = [max(others, key=lambda p: p.stat().st_mtime_ns)]
        try:
            document = json.loads(candidates[0].read_text(encoding="utf-8"))
            if document.get("format") != FORMAT or document.get("key") != self.key:
                return
            files, outside, result = document["files"], document["outside"], document["result"]
            if not (
                isinstance(files, dict) and isinstance(outside, dict) and isinstance(result, dict)
            ):
                return
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return
        self.previous = files
        facts = document.get("facts")
        if document.get("ident") == self.ident:
            self.outside, self.result = outside, result
            self.recorded_facts = facts if isinstance(facts, str) else None
        elif isinstance(facts, str):
            # Another list of files (one added or removed): its per-file facts still hold.
            self.other_facts = (_facts_file_of(candidates[0]), facts)

    # -- reading the snapshot ------------------------------------------------------------------
    def _same(self, item: Found) -> bool:
        """Whether `item` holds what the snapshot recorded (hashing it only when its stat
        cannot tell)."""
        record = self.previous.get(item.display)
        stat = self.stats[item.display] = _stat(item.path)
        if not isinstance(record, list) or len(record) != 5 or stat is None:
            return False
        size, mtime, digest = record[0], record[1], record[2]
        if stat[0] != size:
            return False
        if stat[1] == mtime:
            return True
        if digest is None:
            return False
        try:
            data = item.path.read_bytes()
        except OSError:
            return False
        self.hashes[item.display] = content_hash(data)
        return self.hashes[item.display] == digest

    def _outside_same(self) -> bool:
        for path, record in self.outside.items():
            if record is None or list(_stat(path) or ()) != record:
                return False
        return True

    def unchanged(self) -> bool:
        """Whether every file (and what the facts read outside them) is as recorded. Stats
        every file even after the first difference: `save` records them."""
        same = self.result is not None
        for item in self.items:
            same = self._same(item) and same
        return same and self._outside_same() and self._cached()

    def _cached(self) -> bool:
        """The result cache still holds every linted file's findings under the recorded digest
        (`fix` reads them there; a lost or rebuilt result cache means a full run)."""
        entries = self.cache.entries
        for display, record in self.previous.items():
            if not isinstance(record, list) or len(record) != 5:
                return False
            if record[3]:
                entry = entries.get(display)
                if not isinstance(entry, list) or not entry or entry[0] != record[4]:
                    return False
        return True

    def known_hash(self, item: Found, size: int) -> str | None:
        """The recorded content hash of a file `unchanged` found with the recorded, trusted
        size and mtime (and now `size` bytes long): what the warm path would trust, so the
        full run need not hash it again. Only from this list's own snapshot."""
        record = self.previous.get(item.display)
        stat = self.stats.get(item.display)
        if self.result is None or stat is None or not isinstance(record, list):
            return None
        if len(record) != 5 or record[1] is None or not isinstance(record[2], str):
            return None
        if stat != (record[0], record[1]) or size != record[0]:
            return None
        return record[2]

    def lint_result(self) -> LintResult | None:
        """The recorded result, or None when it cannot be read back."""
        try:
            assert self.result is not None
            return LintResult(
                diagnostics=[Diagnostic.from_json(d) for d in self.result["diagnostics"]],
                guarded=[Diagnostic.from_json(d) for d in self.result["guarded"]],
                notices=[Notice(*n) for n in self.result["notices"]],
                files=int(self.result["files"]),
            )
        except (AssertionError, KeyError, TypeError, ValueError):
            return None

    def digest(self, display: str) -> str | None:
        """The result-cache digest the recorded run used for this file (it includes the
        project facts; valid only while `unchanged()`)."""
        record = self.previous.get(display)
        return record[4] if isinstance(record, list) and len(record) == 5 else None

    def wants(self, display: str, data: bytes) -> bool | None:
        """The recorded prefilter verdict for these bytes, or None when not recorded."""
        record = self.previous.get(display)
        if not isinstance(record, list) or len(record) != 5 or record[3] is None:
            return None
        # Hashed again: the file may have changed since `unchanged` read it.
        return bool(record[3]) if content_hash(data) == record[2] else None

    # -- recording -----------------------------------------------------------------------------
    def record(
        self,
        item: Found,
        data: bytes | None,
        wants: bool | None = None,
        digest: str | None = None,
        error: bool = False,
    ) -> None:
        """What one file held. `data` None: never read (no rule reads it, or it was skipped);
        `error`: it could not be read, so it is never taken as unchanged."""
        stat = self.stats.get(item.display) or _stat(item.path)
        if stat is None or error:
            self.records[item.display] = [-1, None, None, None, None]
            return
        trusted = stat[1] < self.started_ns - RACY_NS
        hashed = None if data is None else content_hash(data)
        self.records[item.display] = [
            stat[0],
            stat[1] if trusted else None,
            hashed,
            wants,
            digest,
        ]

    def save(self, result: LintResult, outside: Iterable[str] = ()) -> None:
        """Write this run's records and result (atomically; a failure is silently skipped)."""
        known = {os.path.abspath(i.path) for i in self.items}
        recorded: dict[str, list | None] = {}
        for path in sorted(set(outside) - known):
            if path.startswith(_OWN):
                continue  # the interpreter's and this package's files: in the fingerprint
            stat = _stat(path)
            trusted = stat is not None and stat[1] < self.started_ns - RACY_NS
            recorded[path] = list(stat) if trusted else None
        document = {
            "format": FORMAT,
            "key": self.key,
            "ident": self.ident,
            "files": self.records,
            "outside": recorded,
            "facts": self.facts_token,
            "result": {
                "diagnostics": [d.to_json() for d in result.diagnostics],
                "guarded": [d.to_json() for d in result.guarded],
                "notices": [[n.path, n.message, n.skipped] for n in result.notices],
                "files": result.files,
            },
        }
        tmp = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tree-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(document, separators=(",", ":")))  # C encoder: dump() is not
            os.replace(tmp, self.file)
            tmp = None
            _prune(self.directory)
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def _prune(directory: Path) -> None:
    """Keep the `KEEP` most recently written snapshots, and the facts of those only."""
    snapshots = []
    for path in directory.glob("tree-*.json"):
        with contextlib.suppress(OSError):
            snapshots.append((path.stat().st_mtime_ns, path))
    for _, path in sorted(snapshots, reverse=True)[KEEP:]:
        with contextlib.suppress(OSError):
            path.unlink()
    for facts in directory.glob("facts-*.pickle"):
        tree = facts.with_name(facts.name.replace("facts-", "tree-", 1)).with_suffix(".json")
        if not tree.exists():
            with contextlib.suppress(OSError):
                facts.unlink()


# -- the project facts themselves ----------------------------------------------------------
#: What `runner.prepare` sets on the linter.
FACTS = (
    "torch_built_dirs",
    "hipified_dirs",
    "torch_unhipified",
    "other_builds",
    "project_macros",
    "python_index",
    "build_membership",
    "context_key",
    "cmake_key",
)


class _FactsUnpickler(pickle.Unpickler):
    """Only the context model's own classes and paths: a cache folder is a file in the user's
    tree, and unpickling anything else could run code from it."""

    def find_class(self, module: str, name: str):
        if module == "pathlib" and name in ("PosixPath", "WindowsPath", "PurePosixPath", "Path"):
            return super().find_class(module, name)
        if module.startswith("cuda2rocm.context.") and not name.startswith("_"):
            found = super().find_class(module, name)
            if isinstance(found, type) and found.__module__ == module:
                return found
        raise pickle.UnpicklingError(f"not a context-model class: {module}.{name}")


def _facts_file(snapshot: Snapshot) -> Path:
    return _facts_file_of(snapshot.file)


def _facts_file_of(tree: Path) -> Path:
    return tree.with_name(tree.stem.replace("tree-", "facts-", 1) + ".pickle")


class FactsMemo:
    """The project facts, part by part, each kept under a digest of exactly what it was
    derived from: its input files' contents, the run's list of files, and whatever it read
    besides (files and folders, items or not, watched through audit events). A part whose
    inputs and reads are unchanged is taken as kept; the others are derived again. So a
    changed C++ file does not re-derive the Python side of the facts, and the reverse."""

    def __init__(self, snapshot: Snapshot | None = None) -> None:
        self.snapshot = snapshot
        self.previous: dict[str, tuple] = {}
        self.current: dict[str, tuple] = {}
        #: Which parts were taken as kept (tests read this).
        self.reused: list[str] = []
        #: Per-file parts (`per_file`): (kind, *key) -> value, kept and derived this run.
        self.files_previous: dict[tuple, object] = {}
        self.files: dict[tuple, object] = {}
        #: How many per-file parts were kept and derived (tests read these).
        self.file_hits = 0
        self.file_misses = 0
        #: The per-file keys each part now being computed used (kept with the part: a kept
        #: part keeps its per-file parts for the next run).
        self._using: list[set[tuple]] = []
        if snapshot is not None:
            loaded = _load_facts(snapshot)
            if loaded is None and snapshot.other_facts is not None:
                loaded = _load_facts(snapshot, *snapshot.other_facts)
                if loaded is not None and isinstance(loaded[1], dict):
                    loaded = (loaded[0], {_PER_FILE: loaded[1].get(_PER_FILE)})
            if loaded is not None and isinstance(loaded[1], dict):
                self.previous = dict(loaded[1])
                files = self.previous.pop(_PER_FILE, None)
                self.files_previous = files if isinstance(files, dict) else {}

    def _carry(self, used) -> None:
        """Keep for the next run the parts a kept part used (per-file parts, nested parts):
        they were not asked for this run."""
        for k in used if isinstance(used, (set, frozenset)) else ():
            for outer in self._using:
                outer.add(k)
            if k[0] == _PART:
                old = self.previous.get(k[1])
                if k[1] not in self.current and isinstance(old, tuple) and len(old) == 4:
                    self.current[k[1]] = old
                    self._carry(old[3])
            elif k in self.files_previous and k not in self.files:
                self.files[k] = self.files_previous[k]

    def per_file(self, kind: str, key: tuple, compute, valid=None, again: bool = False):
        """`compute()`, a function of one file alone, kept per file across runs: a changed file
        derives only its own part again. `key` must hold all it depends on (the file's path
        and content hash, the options it takes); `compute` must read nothing else. `valid`,
        when given, also decides whether a kept value still holds (a value that consulted
        other files' parts records what it saw, and `valid` asks again). `again`: a second
        call in the same run is not answered with the first one's value (what the value
        consulted may differ between the calls): the kept value is checked, or it computes."""
        if self.snapshot is None:
            return compute()  # nowhere to keep it (no cache)
        k = (kind, *key)
        for used in self._using:
            used.add(k)
        if k in self.files and not again:
            return self.files[k]
        value = self.files_previous.get(k, _MISSING)
        if value is not _MISSING and (valid is None or valid(value)):
            self.file_hits += 1
        else:
            value = compute()
            self.file_misses += 1
        self.files[k] = value
        return value

    def call(self, name: str, inputs: list, compute, valid=None):
        """`compute()`, or its kept value when `inputs` (JSON-able: paths, content hashes,
        anything else it depends on) and what it read are as they were, and `valid(value)`
        (when given) says the kept value still holds."""
        if self.snapshot is None:
            return compute()
        for used in self._using:
            used.add((_PART, name))
        key = hashlib.blake2b(
            repr((self.snapshot.ident, os.getcwd(), inputs)).encode(), digest_size=16
        ).hexdigest()
        old = self.previous.get(name)
        if (
            isinstance(old, tuple)
            and len(old) == 4
            and old[0] == key
            and isinstance(old[1], dict)
            and all(r is not None and list(_stat(p) or ()) == r for p, r in old[1].items())
            and (valid is None or valid(old[2]))
        ):
            self.current[name] = old
            self.reused.append(name)
            if _reads is not None:  # an enclosing watch (the snapshot's) still needs them
                _reads.update(old[1])
            self._carry(old[3])
            return old[2]
        used: set[tuple] = set()
        self._using.append(used)
        try:
            with watching_reads() as seen:
                value = compute()
        finally:
            self._using.pop()
        reads = {}
        for path in sorted(seen):
            if path.startswith(_OWN):
                continue
            stat = _stat(path)
            trusted = stat is not None and stat[1] < self.snapshot.started_ns - RACY_NS
            reads[path] = list(stat) if trusted else None
        self.current[name] = (key, reads, value, frozenset(used))
        return value


_MISSING = object()
#: The name under which the per-file parts are kept among the memo's parts.
_PER_FILE = "\0per-file"
#: Marks a part's name among the keys another part used.
_PART = "\0part"


def _load_facts(snapshot: Snapshot, file: Path | None = None, expected: str | None = None):
    """(values of FACTS, memo parts) kept for this snapshot (or in `file` under the token
    `expected`), or None."""
    if file is None:
        file, expected = _facts_file(snapshot), snapshot.recorded_facts
    if not expected:
        return None
    try:
        with open(file, "rb") as fh:
            token, values, parts = _FactsUnpickler(fh).load()
    except Exception:  # any unreadable or refused file: derive the facts again
        return None
    if token != expected or not isinstance(values, list):
        return None
    return values, parts


def save_facts(snapshot: Snapshot, linter, memo: FactsMemo | None = None) -> None:
    """Keep the project facts of this run (whole, and part by part for `FactsMemo`) beside
    its snapshot (`restore_facts` reads them back only while the snapshot says the tree is
    unchanged)."""
    snapshot.facts_token = f"{snapshot.started_ns}-{os.getpid()}"
    tmp = None
    try:
        data = pickle.dumps(
            (
                snapshot.facts_token,
                [getattr(linter, n) for n in FACTS],
                {**memo.current, _PER_FILE: memo.files} if memo is not None else {},
            ),
            protocol=pickle.HIGHEST_PROTOCOL,
        )
        snapshot.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=snapshot.directory, prefix=".facts-", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, _facts_file(snapshot))
        tmp = None
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        snapshot.facts_token = None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def restore_facts(snapshot: Snapshot, linter) -> bool:
    """Set the recorded project facts on `linter` instead of deriving them again; False when
    they cannot be read back or do not belong to the snapshot."""
    from cuda2rocm.build_context import clear_resolved

    clear_resolved()  # paths are resolved again by each run (build_context.resolved_path)
    loaded = _load_facts(snapshot)
    if loaded is None or len(loaded[0]) != len(FACTS):
        return False
    values = loaded[0]
    for name, value in zip(FACTS, values, strict=True):
        setattr(linter, name, value)
    return True


# -- what the project facts read -------------------------------------------------------------
#: Folders whose files are the tool's own (modules imported on the way, rule data).
_OWN = tuple(
    os.path.join(os.path.abspath(p), "")
    for p in {sys.prefix, sys.base_prefix, os.path.dirname(__file__)}
)
_reads: set[str] | None = None
_hooked = False


def _audit(event: str, args: tuple) -> None:
    if _reads is None:
        return
    if event == "open" and args and isinstance(args[0], (str, Path)):
        mode = args[1] if len(args) > 1 else "r"
        if not isinstance(mode, str) or not any(c in mode for c in "wax+"):
            _reads.add(os.path.abspath(args[0]))
    elif event in ("os.scandir", "os.listdir") and args and isinstance(args[0], (str, Path)):
        _reads.add(os.path.abspath(args[0]))  # a folder's mtime changes with its entries


def note_read(path: Path | str) -> None:
    """Count `path` as read by the facts being derived (a reader that decides on a file's
    size or existence without opening it says so here)."""
    if _reads is not None:
        _reads.add(os.path.abspath(path))


@contextlib.contextmanager
def watching_reads():
    """Collect the files opened and folders listed in this block (through the interpreter's
    audit events, so every reader of the project facts is covered without its cooperation).
    Yields the set, filled when the block ends."""
    global _reads, _hooked
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked = True
    seen: set[str] = set()
    outer, _reads = _reads, seen
    try:
        yield seen
    finally:
        _reads = outer
        if outer is not None:
            outer |= seen
