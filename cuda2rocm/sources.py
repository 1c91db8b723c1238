"""Reading a file into text without losing what `fix` must write back: encoding, BOM, newlines."""

from __future__ import annotations

import bisect
import codecs
import functools
import io
import re
import tokenize
from dataclasses import dataclass

from cuda2rocm.model import Position

#: Files larger than this are skipped with a notice (configurable).
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
_NEWLINE = re.compile(r"\r\n|\r|\n")


class SourceError(Exception):
    """A file that cannot be read or decoded; becomes a diagnostic, never a crash."""


@dataclass
class SourceFile:
    path: str
    language: str
    text: str
    encoding: str = "utf-8"
    bom: bool = False

    def encode(self, text: str | None = None) -> bytes:
        data = (self.text if text is None else text).encode(self.encoding)
        return (codecs.BOM_UTF8 + data) if self.bom else data

    @functools.cached_property
    def lines(self) -> LineIndex:
        return LineIndex(self.text)


class LineIndex:
    """Offsets <-> 1-based line / 1-based column, with \\n, \\r\\n and \\r as line ends."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def offset(self, line: int, column: int) -> int:
        """Offset of 1-based `line` and 0-based `column` (LibCST's and tree-sitter's form)."""
        line = min(max(line, 1), len(self.starts))
        return min(self.starts[line - 1] + column, len(self.text))

    def position(self, start: int, end: int) -> Position:
        sl = bisect.bisect_right(self.starts, start) - 1
        el = bisect.bisect_right(self.starts, max(end, start)) - 1
        return Position(sl + 1, start - self.starts[sl] + 1, el + 1, end - self.starts[el] + 1)

    def line_text(self, line: int) -> str:
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")


def decode(data: bytes, path: str, language: str) -> tuple[str, str, bool]:
    """Decode as the file declares (BOM, PEP 263 cookie for Python), else strict UTF-8."""
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    encoding = "utf-8"
    if language == "python" and not bom:
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:
            raise SourceError(f"cannot decode: {exc}") from exc
        if encoding == "utf-8-sig":
            encoding = "utf-8"
    try:
        return body.decode(encoding), encoding, bom
    except (UnicodeDecodeError, LookupError) as exc:
        where = f" at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
        raise SourceError(
            f"not valid {encoding}{where}; declare the file's encoding or convert it to UTF-8"
        ) from exc


def is_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]
