"""Inline suppressions: `# cuda2rocm: ignore[rule, CODE]`, `// ...`, `/* ... */`, `# noqa: CR101`.

A suppression applies to its own line, or — when it stands alone on a comment line — to the
next line. `ignore-file[...]` anywhere in a file applies to the whole file. Empty brackets (or
none) mean every rule. Only comments count: in Python the comments are found with `tokenize`, so
the same words inside a string literal suppress nothing.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from cuda2rocm.catalogue import RuleSpec, matches
from cuda2rocm.model import Diagnostic, Position
from cuda2rocm.sources import LineIndex

_DIRECTIVE = re.compile(
    r"cuda2rocm:\s*(?P<kind>ignore-file|ignore)(?:\[(?P<names>[^\]]*)\])?"
    r"|\bnoqa:\s*(?P<noqa>CR\d+(?:[\s,]+CR\d+)*)",
    re.IGNORECASE,
)
_CPP_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_HASH_COMMENT = re.compile(r"#[^\n]*")


@dataclass
class Suppression:
    line: int
    column: int
    end_column: int
    #: Rule selectors; empty means every rule.
    names: tuple[str, ...]
    whole_file: bool = False
    #: Lines it covers (its own, and the next one when it stands alone).
    lines: tuple[int, ...] = ()
    used: set[str] = field(default_factory=set)

    def covers(self, diagnostic: Diagnostic, rules: dict[str, RuleSpec]) -> str | None:
        """The selector that suppresses `diagnostic`, or None."""
        if not self.whole_file and diagnostic.position.line not in self.lines:
            return None
        if not self.names:
            return "*"
        spec = rules.get(diagnostic.rule)
        for name in self.names:
            if name in (diagnostic.rule, diagnostic.code) or (spec and matches(spec, name)):
                return name
        return None


def _comments(text: str, language: str) -> list[tuple[int, int, str, bool]]:
    """(line, column, comment text, stands alone on its line) for each comment."""
    out = []
    if language == "python":
        try:
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type == tokenize.COMMENT:
                    alone = not tok.line[: tok.start[1]].strip()
                    out.append((tok.start[0], tok.start[1], tok.string, alone))
            return out
        except (tokenize.TokenError, SyntaxError, IndentationError):
            out = []  # unparsable: fall back to a plain scan of '#' comments
    pattern = _CPP_COMMENT if language == "cuda" else _HASH_COMMENT
    lines = LineIndex(text)
    for match in pattern.finditer(text):
        line = lines.position(match.start(), match.start()).line
        before = text[lines.starts[line - 1] : match.start()]
        out.append((line, len(before), match.group(0), not before.strip()))
    return out


def parse(text: str, language: str) -> list[Suppression]:
    low = text.lower()  # the directive is case-blind; `in` is far faster than its pattern
    if ("cuda2rocm:" not in low and "noqa" not in low) or _DIRECTIVE.search(text) is None:
        return []  # no directive anywhere: no comment to tokenize
    found = []
    for line, column, comment, alone in _comments(text, language):
        for match in _DIRECTIVE.finditer(comment):
            if match.group("noqa"):
                names = tuple(re.split(r"[\s,]+", match.group("noqa").strip()))
                whole = False
            else:
                raw = match.group("names") or ""
                names = tuple(n.strip() for n in raw.split(",") if n.strip())
                whole = match.group("kind").lower() == "ignore-file"
            start = column + match.start()
            found.append(
                Suppression(
                    line=line,
                    column=start + 1,
                    end_column=column + match.end() + 1,
                    names=names,
                    whole_file=whole,
                    lines=(line, line + 1) if alone else (line,),
                )
            )
    return found


def apply(
    diagnostics: list[Diagnostic],
    suppressions: list[Suppression],
    rules: dict[str, RuleSpec],
) -> list[Diagnostic]:
    """Drop suppressed diagnostics; record on each suppression what it was used for."""
    if not suppressions:
        return diagnostics
    kept = []
    for diagnostic in diagnostics:
        hit = False
        for suppression in suppressions:
            name = suppression.covers(diagnostic, rules)
            if name is not None:
                suppression.used.add(name)
                hit = True
        if not hit:
            kept.append(diagnostic)
    return kept


def position(suppression: Suppression) -> Position:
    s = suppression
    return Position(s.line, s.column, s.line, s.end_column)
