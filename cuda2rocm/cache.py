"""Result cache: re-linting an unchanged tree reads files and hashes them, nothing more.

One JSON file per run fingerprint (tool version, the package's own code and rule catalogue, the
selected rules and every option that changes results). Inside, each linted path maps to the hash
of its content and its diagnostics. The file is written whole, atomically: concurrent runs can
only replace it, never corrupt it, and a corrupt or foreign file is ignored and rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import cuda2rocm
from cuda2rocm.catalogue import catalogue_dir
from cuda2rocm.model import Diagnostic

DEFAULT_DIR = ".cuda2rocm_cache"
FORMAT = 1


def _code_digest() -> str:
    """Hash of the installed package and catalogue, so a changed rule never serves stale results."""
    digest = hashlib.sha256()
    package = Path(cuda2rocm.__file__).resolve().parent
    roots = [package, catalogue_dir()]
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".toml", ".json", ".tsv") and path.is_file():
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def fingerprint(options: Iterable[object], version: str | None = None) -> str:
    digest = hashlib.sha256()
    digest.update(f"format={FORMAT};version={version or cuda2rocm.__version__}".encode())
    digest.update(_code_digest().encode())
    digest.update(json.dumps([repr(o) for o in options], sort_keys=True).encode())
    return digest.hexdigest()[:32]


#: Within `hashing()`: id(bytes) -> (the bytes, their hash). A run's file contents are hashed
#: for the snapshot, the facts' inputs and the cache keys: each is hashed once.
_known: dict[int, tuple[bytes, str]] | None = None


def content_hash(data: bytes) -> str:
    if _known is not None:
        kept = _known.get(id(data))
        if kept is not None and kept[0] is data:
            return kept[1]
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        _known[id(data)] = (data, digest)  # the reference keeps the id from being reused
        return digest
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def remember(data: bytes, digest: str) -> None:
    """Within `hashing()`: take `digest` as the hash of `data` (a file whose stat the warm
    snapshot vouches for: its recorded hash, not hashed again)."""
    if _known is not None:
        _known[id(data)] = (data, digest)


@contextlib.contextmanager
def hashing():
    """Hash each bytes object once in this block (the objects are kept until it ends)."""
    global _known
    outer, _known = _known, ({} if _known is None else _known)
    try:
        yield
    finally:
        _known = outer


class Cache:
    def __init__(self, directory: Path, key: str, kind: str = "results") -> None:
        """`kind` names the file: "results" (findings per file), "fixes" (fix outcomes)."""
        self.directory = Path(directory)
        self.key = key
        self.file = self.directory / f"{kind}-{key}.json"
        self.entries: dict[str, list] = self._load()
        self.dirty = False
        self.hits = 0

    def _load(self) -> dict[str, list]:
        try:
            document = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(document, dict) or document.get("key") != self.key:
            return {}
        entries = document.get("entries")
        return entries if isinstance(entries, dict) else {}

    def get_raw(self, path: str, digest: str) -> object | None:
        """The JSON value stored for `path` under `digest`, or None."""
        entry = self.entries.get(path)
        if not isinstance(entry, list) or len(entry) != 2 or entry[0] != digest:
            return None
        return entry[1]

    def put_raw(self, path: str, digest: str, value: object) -> None:
        self.entries[path] = [digest, value]
        self.dirty = True

    def get(self, path: str, digest: str) -> list[Diagnostic] | None:
        entry = self.get_raw(path, digest)
        if entry is None:
            return None
        try:
            found = [Diagnostic.from_json(d) for d in entry]
        except (KeyError, TypeError, ValueError):
            return None
        self.hits += 1
        return found

    def put(self, path: str, digest: str, diagnostics: list[Diagnostic]) -> None:
        self.put_raw(path, digest, [d.to_json() for d in diagnostics])

    def save(self) -> None:
        """Write atomically; a cache that cannot be written is silently skipped."""
        if not self.dirty:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tag = self.directory / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
                (self.directory / ".gitignore").write_text("*\n")
            document = {"key": self.key, "entries": self.entries}
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".results-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(document, separators=(",", ":")))  # C encoder: dump() is not
            os.replace(tmp, self.file)
        except OSError:
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(tmp)


def clean(directory: Path) -> int:
    """Remove the cache directory's files; returns how many were removed."""
    removed = 0
    if not directory.is_dir():
        return 0
    for path in directory.iterdir():
        if path.is_file() or path.is_symlink():
            path.unlink()
            removed += 1
    with contextlib.suppress(OSError):
        directory.rmdir()
    return removed
