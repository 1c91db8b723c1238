"""Which lines of a C/C++/CUDA source the HIP passes of a ROCm build compile: true/false/unknown.

The model evaluates `#if/#ifdef/#ifndef/#elif/#else/#endif` (with `defined`, `!`, `&&`, `||`,
comparisons, integer arithmetic and `?:`) in three-valued logic. A value is an integer interval
(a point when known; `[0, 1]` is "true or false"; unbounded is "unknown"), so `CUDA_VERSION >=
11000` is false when torch's hipify turned it into TORCH_HIP_VERSION (below 10000) and unknown
when nothing is known. Each ROCm compile that may build the file is a *pass* (hipcc host,
hipcc device, the plain C++ compiler; see data/hip_macros.toml), scanned separately with its own
macro facts; a line is compiled when any pass keeps it, and dropped only when every pass
provably skips it. `#define`/`#undef` in the file and in the project headers it includes (their
end state, from `project_macros`) update the facts as the scan goes; in a branch whose value is
unknown they make the macro unknown.

Why a line scanner and not tree-sitter's `preproc_*` nodes: directives around partial syntax
(`#ifdef X` opening a function whose `#else` opens another) give trees whose branches do not
line up with the directives, and tree-sitter reads no `#define` state. One compiled regex finds
the directives after comments are blanked (one pass over the text, in C); the cost is per
directive, not per line. Directive lines take the value of the group around them, so a finding on
`#if __CUDA_ARCH__ >= 800` itself is reported whenever that line is reached; an `#elif` that is
never evaluated (an earlier branch is always taken) is dropped.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

Tri = bool | None
INF = math.inf
PASSES = ("hip-host", "hip-device", "cxx")
HIPCC_PASSES = ("hip-host", "hip-device")
#: Suffixes hipcc compiles (torch's `_is_cuda_file`: .cu/.cuh, and .hip on ROCm).
HIPCC_SUFFIXES = frozenset({".cu", ".hip"})
#: Sources a C++ compiler builds alone; headers (anything else) may be included from both kinds.
CXX_SUFFIXES = frozenset({".cpp", ".cc", ".cxx", ".c", ".c++"})


@dataclass(frozen=True)
class Val:
    """A macro in one pass: defined (tri) and, when defined, its value range; `why` cites it."""

    defined: Tri
    lo: float = -INF
    hi: float = INF
    why: str = ""

    def as_range(self) -> tuple[float, float]:
        if self.defined is False:
            return (0, 0)
        if self.defined is None:
            return (min(self.lo, 0), max(self.hi, 0))
        return (self.lo, self.hi)


UNKNOWN = Val(None)
UNDEFINED = Val(False, 0, 0)


def join(a: Val, b: Val) -> Val:
    """Either a or b (a #define in a branch of unknown value)."""
    if a == b:
        return a
    defined = a.defined if a.defined == b.defined else None
    if a.defined is False:
        lo, hi = b.lo, b.hi
    elif b.defined is False:
        lo, hi = a.lo, a.hi
    else:
        lo, hi = min(a.lo, b.lo), max(a.hi, b.hi)
    return Val(defined, lo, hi, a.why or b.why)


# -- facts -------------------------------------------------------------------------------------
def _val(raw, why: str) -> Val:
    if raw == "undefined":
        return Val(False, 0, 0, why)
    if raw == "defined":
        return Val(True, -INF, INF, why)
    if isinstance(raw, int):
        return Val(True, raw, raw, why)
    return Val(None, -INF, INF, why)


@functools.lru_cache(maxsize=1)
def _facts() -> tuple[dict, dict, dict]:
    """(base, torch, hipify): pass -> name -> Val for the first two; name -> name for hipify."""
    text = resources.files("cuda2rocm.data").joinpath("hip_macros.toml").read_text("utf-8")
    data = tomllib.loads(text)
    base: dict[str, dict[str, Val]] = {p: {} for p in PASSES}
    torch: dict[str, dict[str, Val]] = {p: {} for p in PASSES}
    for table, out in (("macro", base), ("torch", torch)):
        for row in data.get(table, []):
            for p in PASSES:
                if "range" in row:
                    lo, hi = row["range"]
                    out[p][row["name"]] = Val(True, lo, hi, "")
                elif p in row:
                    out[p][row["name"]] = _val(row[p], "")
    for row in data.get("pattern", []):  # name families: after the exact names
        pattern = re.compile(row["regex"])
        for p in PASSES:
            if p in row:
                _PATTERNS.setdefault(p, []).append((pattern, _val(row[p], "")))
    return base, torch, dict(data.get("hipify", {}))


#: pass -> [(name pattern, value)] from hip_macros.toml's [[pattern]] rows (filled by _facts).
_PATTERNS: dict[str, list[tuple[re.Pattern[str], Val]]] = {}


def passes_for(path: str, torch_built: bool) -> tuple[str, ...]:
    """The ROCm compiles that may build this file.

    .cu/.hip: hipcc only. .cpp and friends: the plain C++ compiler in a torch build (torch
    sends only .cu/.cuh/.hip to hipcc); elsewhere unknown, so hipcc as well. Headers: all.
    """
    dot = path.rfind(".")
    suffix = path[dot:].lower() if dot > path.rfind("/") else ""
    if suffix in HIPCC_SUFFIXES:
        return HIPCC_PASSES
    if suffix in CXX_SUFFIXES and torch_built:
        return ("cxx",)
    return PASSES


# -- expressions -------------------------------------------------------------------------------
_TOKEN = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[uUlLzZ]*(?![\w.])"
    r"|([A-Za-z_]\w*)"
    r"|('(?:\\.|[^'\\])+')"
    r"|(&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^?:(),]))"
)


class _Unparsable(Exception):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            if text[pos:].strip():
                raise _Unparsable(text)
            break
        pos = m.end()
        if m.group(1) is not None:
            raw = m.group(1)
            base = 16 if raw[:2] in ("0x", "0X") else 2 if raw[:2] in ("0b", "0B") else 10
            if base == 10 and len(raw) > 1 and raw[0] == "0":
                base = 8
            out.append(("num", str(int(raw, base))))
        elif m.group(2) is not None:
            out.append(("id", m.group(2)))
        elif m.group(3) is not None:
            body = m.group(3)[1:-1]
            out.append(("num", str(ord(body[-1]) if len(body) == 1 else 0)))
            if len(body) != 1:
                raise _Unparsable(text)
        else:
            out.append(("op", m.group(4)))
    return out


Range = tuple[float, float]
TOP: Range = (-INF, INF)
_TRUE: Range = (1, 1)
_FALSE: Range = (0, 0)
_EITHER: Range = (0, 1)


def truth(r: Range) -> Tri:
    if r[0] > 0 or r[1] < 0:
        return True
    if r[0] == 0 and r[1] == 0:
        return False
    return None


def _from_tri(t: Tri) -> Range:
    return _TRUE if t is True else _FALSE if t is False else _EITHER


def _point(r: Range) -> int | None:
    return int(r[0]) if r[0] == r[1] and math.isfinite(r[0]) else None


def _binary(op: str, a: Range, b: Range) -> Range:
    if op in ("<", ">", "<=", ">=", "==", "!="):
        if op == ">":
            op, a, b = "<", b, a
        elif op == ">=":
            op, a, b = "<=", b, a
        if op == "<":
            return _TRUE if a[1] < b[0] else _FALSE if a[0] >= b[1] else _EITHER
        if op == "<=":
            return _TRUE if a[1] <= b[0] else _FALSE if a[0] > b[1] else _EITHER
        same = a[0] == a[1] == b[0] == b[1]
        apart = a[1] < b[0] or b[1] < a[0]
        eq = True if same else False if apart else None
        return _from_tri(eq if op == "==" or eq is None else not eq)
    if op in ("+", "-"):
        if op == "-":
            b = (-b[1], -b[0])
        lo, hi = a[0] + b[0], a[1] + b[1]
        return TOP if math.isnan(lo) or math.isnan(hi) else (lo, hi)
    if op == "*" and all(math.isfinite(x) for x in (*a, *b)):
        products = [x * y for x in a for y in b]
        return (min(products), max(products))
    x, y = _point(a), _point(b)
    if x is None or y is None:
        return TOP
    try:
        value = {
            "*": lambda: x * y,
            "/": lambda: int(x / y),
            "%": lambda: x - int(x / y) * y,
            "<<": lambda: x << y,
            ">>": lambda: x >> y,
            "&": lambda: x & y,
            "|": lambda: x | y,
            "^": lambda: x ^ y,
        }[op]()
    except (ZeroDivisionError, ValueError, KeyError):
        return TOP
    return (value, value)


_PRECEDENCE = [
    ("|",),
    ("^",),
    ("&",),
    ("==", "!="),
    ("<", ">", "<=", ">="),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
]


class _Parser:
    """Recursive descent over #if tokens; identifiers are looked up through `lookup`."""

    def __init__(self, tokens: list[tuple[str, str]], lookup: Callable[[str], Val]) -> None:
        self.tokens = tokens
        self.i = 0
        self.lookup = lookup
        #: Facts with a citation that the value depended on (for the guard's reason).
        self.used: list[str] = []

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.tokens):
            raise _Unparsable("end")
        self.i += 1
        return self.tokens[self.i - 1]

    def expect(self, op: str) -> None:
        if self.take() != ("op", op):
            raise _Unparsable(op)

    def parse(self) -> Range:
        value = self.ternary()
        if self.i != len(self.tokens):
            raise _Unparsable("trailing")
        return value

    def ternary(self) -> Range:
        cond = self.logical_or()
        if self.peek() != "?":
            return cond
        self.take()
        a = self.ternary()
        self.expect(":")
        b = self.ternary()
        t = truth(cond)
        return a if t is True else b if t is False else (min(a[0], b[0]), max(a[1], b[1]))

    def logical_or(self) -> Range:
        value = self.logical_and()
        while self.peek() == "||":
            self.take()
            right = self.logical_and()
            a, b = truth(value), truth(right)
            value = _from_tri(True if True in (a, b) else False if a is b is False else None)
        return value

    def logical_and(self) -> Range:
        value = self.binary(0)
        while self.peek() == "&&":
            self.take()
            right = self.binary(0)
            a, b = truth(value), truth(right)
            value = _from_tri(False if False in (a, b) else True if a is b is True else None)
        return value

    def binary(self, level: int) -> Range:
        if level == len(_PRECEDENCE):
            return self.unary()
        value = self.binary(level + 1)
        while self.peek() in _PRECEDENCE[level] and self.tokens[self.i][0] == "op":
            op = self.take()[1]
            value = _binary(op, value, self.binary(level + 1))
        return value

    def unary(self) -> Range:
        kind, tok = self.take()
        if kind == "op" and tok == "!":
            t = truth(self.unary())
            return _from_tri(None if t is None else not t)
        if kind == "op" and tok == "-":
            lo, hi = self.unary()
            return (-hi, -lo)
        if kind == "op" and tok == "+":
            return self.unary()
        if kind == "op" and tok == "~":
            p = _point(self.unary())
            return TOP if p is None else (~p, ~p)
        if kind == "op" and tok == "(":
            value = self.ternary()
            self.expect(")")
            return value
        if kind == "num":
            return (int(tok), int(tok))
        if kind != "id":
            raise _Unparsable(tok)
        if tok == "defined":
            paren = self.peek() == "("
            if paren:
                self.take()
            kind, name = self.take()
            if kind != "id":
                raise _Unparsable(name)
            if paren:
                self.expect(")")
            return _from_tri(self._fact(name).defined)
        if self.peek() == "(":  # a function-like macro or __has_include(...): unknown
            depth = 0
            while True:
                _, t = self.take()
                depth += t == "("
                depth -= t == ")"
                if depth == 0:
                    return TOP
        if tok in ("true", "false"):
            return _TRUE if tok == "true" else _FALSE
        return self._fact(tok).as_range()

    def _fact(self, name: str) -> Val:
        val = self.lookup(name)
        if val.why and val.defined is not None:
            self.used.append(val.why)
        return val


def evaluate(expression: str, lookup: Callable[[str], Val]) -> tuple[Tri, list[str]]:
    """The truth of an `#if` expression and the cited facts it used; unknown if unparsable."""
    try:
        parser = _Parser(_tokens(expression), lookup)
        return truth(parser.parse()), parser.used
    except (_Unparsable, RecursionError, ValueError, OverflowError):
        return None, []


# -- scanning ----------------------------------------------------------------------------------
_BLANK = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
_DIRECTIVE = re.compile(
    r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define|undef|include)\b"
    r"((?:[^\n]*\\\n)*[^\n]*)",
    re.M,
)
_DEFINE = re.compile(r"\s*([A-Za-z_]\w*)(\()?(.*)", re.S)
_INCLUDE = re.compile(r"\s*[<\"]([^>\"]+)[>\"]")
_NAME = re.compile(r"\s*([A-Za-z_]\w*)")


def blank_comments(text: str) -> str:
    """Comments become spaces (newlines kept, so lines do not move); strings stay."""

    def repl(m: re.Match[str]) -> str:
        s = m.group()
        if s[0] in "\"'":
            return s
        return "\n".join(" " * len(part) for part in s.split("\n"))

    return _BLANK.sub(repl, text)


#: (file path as the includer wrote it, includer's path, pass) -> the header's end state.
Resolver = Callable[[str, str, str], "Mapping[str, Val] | None"]


@dataclass
class _Frame:
    parent: Tri
    parent_reason: str
    taken: Tri  # some branch so far is taken
    taken_by: str  # the directive that is always taken (for the reason)
    live: Tri
    reason: str


def _and(a: Tri, b: Tri) -> Tri:
    return False if False in (a, b) else True if a is b is True else None


def _or(a: Tri, b: Tri) -> Tri:
    return True if True in (a, b) else False if a is b is False else None


def _not(a: Tri) -> Tri:
    return None if a is None else not a


def _test(word: str, rest: str, fact: Callable[[str], Val]) -> tuple[Tri, list[str]]:
    """The value of an `#if`/`#elif` expression or an `#ifdef`/`#ifndef`-style name test."""
    if word in ("if", "elif"):
        return evaluate(rest.replace("\\\n", " "), fact)
    nm = _NAME.match(rest)
    value, used = evaluate(f"defined {nm.group(1)}", fact) if nm else (None, [])
    return (_not(value) if word.endswith("ndef") else value), used


def _shown(directive: str, rest: str) -> str:
    text = " ".join(f"#{directive}{rest}".replace("\\\n", " ").split())
    return text if len(text) <= 80 else text[:77] + "..."


_GUARD_TEST = re.compile(r"\s*!\s*defined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))\s*$")


def include_guard(blanked: str) -> int | None:
    """Offset of the classic include guard's test, or None: the file's first directive is
    `#ifndef G` (or `#if !defined(G)`), the next one `#define G`, and the `#endif` closing the
    first is the file's last directive. Whatever G's state elsewhere (the project defines it,
    in this very file), the file's text is compiled on its first inclusion, and a repeated
    inclusion adds nothing: the model reads the guard as true."""
    found = list(_DIRECTIVE.finditer(blanked))
    if len(found) < 3:
        return None
    first, second = found[0], found[1]
    word, rest = first.group(1), first.group(2)
    if word == "ifndef":
        nm = _NAME.match(rest)
        name = nm.group(1) if nm and not rest[nm.end() :].strip() else None
    elif word == "if":
        gm = _GUARD_TEST.match(rest)
        name = (gm.group(1) or gm.group(2)) if gm else None
    else:
        return None
    dm = _NAME.match(second.group(2)) if second.group(1) == "define" else None
    if name is None or dm is None or dm.group(1) != name:
        return None
    depth = 0
    for i, m in enumerate(found):
        w = m.group(1)
        if w in ("if", "ifdef", "ifndef"):
            depth += 1
        elif w == "endif":
            depth -= 1
            if depth == 0:
                return first.start() if i == len(found) - 1 else None
    return None


@dataclass
class Scan:
    """One pass over a file: where liveness changes, and the macro state at the end."""

    points: list[tuple[int, Tri, str]]  # (first line, value from there on, reason if False)
    defines: list[tuple[str, int, Tri]]  # (macro, line, whether the pass reaches the #define)
    state: dict[str, Val]


def scan(
    text: str,
    lookup: Callable[[str], Val],
    path: str = "",
    resolve: Resolver | None = None,
    pass_name: str = "",
    rename: Mapping[str, str] | None = None,
) -> Scan:
    """Scan one file for one pass. `lookup` gives facts below the file's own state."""
    state: dict[str, Val] = {}
    rename = rename or {}

    def fact(name: str) -> Val:
        name = rename.get(name, name)
        return state[name] if name in state else lookup(name)

    def assign(name: str, val: Val, live: Tri) -> None:
        name = rename.get(name, name)
        state[name] = val if live else join(fact(name), val)

    points: list[tuple[int, Tri, str]] = [(1, True, "")]
    defines: list[tuple[str, int, Tri]] = []
    stack: list[_Frame] = []
    live: Tri = True
    reason = ""
    if "#" not in text:
        return Scan(points, defines, state)
    blanked = blank_comments(text)
    guard = include_guard(blanked)
    line, last = 1, 0
    for m in _DIRECTIVE.finditer(blanked):
        line += blanked.count("\n", last, m.start())
        last = m.start()
        word, rest = m.group(1), m.group(2)
        end_line = line + rest.count("\n")
        at = line
        if word in ("if", "ifdef", "ifndef"):
            shown = _shown(word, rest)
            if live is False:
                value, used = False, []
            elif guard is not None and m.start() == guard:
                value, used = True, []  # the file's include guard: compiled on first inclusion
            else:
                value, used = _test(word, rest, fact)
            why = f"`{shown}` at line {line}" + (f" ({used[0]})" if used else "")
            frame = _Frame(live, reason, value, why, _and(live, value), "")
            frame.reason = reason if live is False else why
            stack.append(frame)
            points.append((at, live, reason))
            live, reason = frame.live, frame.reason
        elif word in ("elif", "elifdef", "elifndef", "else") and stack:
            frame = stack[-1]
            shown = _shown(word, rest)
            reached = _and(frame.parent, _not(frame.taken))
            if reached is False:
                reached_reason = (
                    frame.parent_reason
                    if frame.parent is False
                    else f"the `#{word}` at line {line} after {frame.taken_by}, which is always "
                    "taken"
                )
            else:
                reached_reason = ""
            if word == "else":
                value, used = True, []
            elif reached is False:
                value, used = False, []
            else:
                value, used = _test(word, rest, fact)
            if word != "else" and value is True and frame.taken is False:
                frame.taken_by = f"`{shown}` at line {line}"
            elif word == "else" and frame.taken is False:
                frame.taken_by = f"the `#else` at line {line}"
            # Line of the directive itself: reached or not; the body: reached and true.
            points.append((at, reached if word != "else" else frame.parent, reached_reason))
            body = _and(reached, value)
            if body is False:
                if reached is False:
                    body_reason = reached_reason
                else:
                    body_reason = f"`{shown}` at line {line}" + (f" ({used[0]})" if used else "")
            else:
                body_reason = ""
            if word != "else" and frame.taken is not True and value is True:
                frame.taken_by = f"`{shown}` at line {line}"
            frame.taken = _or(frame.taken, value)
            frame.live, frame.reason = body, body_reason
            live, reason = body, body_reason
        elif word == "endif" and stack:
            frame = stack.pop()
            live, reason = frame.parent, frame.parent_reason
            points.append((at, live, reason))
        elif word == "define" and live is False:
            dm = _DEFINE.match(rest)
            if dm is not None:  # a definition ROCm never sees (project_macros counts these)
                defines.append((rename.get(dm.group(1), dm.group(1)), line, False))
        elif word in ("define", "undef"):
            dm = _DEFINE.match(rest)
            if dm is not None:
                name = dm.group(1)
                if word == "undef":
                    assign(name, UNDEFINED, live)
                else:
                    defines.append((rename.get(name, name), line, live))
                    if dm.group(2):  # function-like
                        val = Val(True)
                    else:
                        body = dm.group(3).replace("\\\n", " ").strip()
                        value_range = TOP
                        if body:  # `#if X` on an empty X is an error: unknown
                            try:
                                value_range = _Parser(_tokens(body), fact).parse()
                            except (_Unparsable, RecursionError, ValueError, OverflowError):
                                value_range = TOP
                        val = Val(True, value_range[0], value_range[1])
                    assign(name, val, live)
        elif live is not False and word == "include" and resolve is not None:
            im = _INCLUDE.match(rest)
            header = resolve(im.group(1), path, pass_name) if im else None
            if header:
                for name, val in header.items():
                    assign(name, val, live)
        if end_line != at or word in ("if", "ifdef", "ifndef", "elif", "else", "endif"):
            points.append((end_line + 1, live, reason))
        line = end_line
        last = m.end()
    return Scan(_compact(points), defines, state)


def _compact(points: list[tuple[int, Tri, str]]) -> list[tuple[int, Tri, str]]:
    """Sorted by line, one entry per line (the last wins), no repeats of the same value."""
    out: list[tuple[int, Tri, str]] = []
    for p in points:
        if out and out[-1][0] == p[0]:
            out[-1] = p
        elif out and out[-1][1:] == p[1:]:
            continue
        else:
            out.append(p)
    merged: list[tuple[int, Tri, str]] = []
    for p in out:
        if merged and merged[-1][1:] == p[1:]:
            continue
        merged.append(p)
    return merged


@dataclass
class LineModel:
    """For every line of a file: whether the ROCm build compiles it (any pass), and why not."""

    lines: list[int]
    values: list[Tri]
    reasons: list[str]

    def value(self, line: int) -> Tri:
        i = bisect.bisect_right(self.lines, line) - 1
        return self.values[i] if i >= 0 else True

    def reason(self, line: int) -> str:
        """Why no HIP pass compiles `line` ("" when one may)."""
        i = bisect.bisect_right(self.lines, line) - 1
        return self.reasons[i] if i >= 0 and self.values[i] is False else ""

    @property
    def all_live(self) -> bool:
        return all(v is True for v in self.values)


def combine(scans: Iterable[Scan]) -> LineModel:
    """A line is compiled when some pass keeps it; skipped only when every pass skips it."""
    scans = list(scans)
    cuts = sorted({p[0] for s in scans for p in s.points})
    lines: list[int] = []
    values: list[Tri] = []
    reasons: list[str] = []
    idx = [0] * len(scans)
    for cut in cuts:
        value: Tri = False
        why = ""
        for k, s in enumerate(scans):
            while idx[k] + 1 < len(s.points) and s.points[idx[k] + 1][0] <= cut:
                idx[k] += 1
            _, v, r = s.points[idx[k]]
            value = _or(value, v)
            if v is False and not why:
                why = r
        if values and values[-1] == value and (value is not False or reasons[-1] == why):
            continue
        lines.append(cut)
        values.append(value)
        reasons.append(why if value is False else "")
    return LineModel(lines, values, reasons)


def base_lookup(pass_name: str, torch_built: bool) -> Callable[[str], Val]:
    """Facts of data/hip_macros.toml for one pass (torch's flags too for torch-built files)."""
    base, torch, _ = _facts()
    table = dict(base[pass_name])
    if torch_built:
        table.update(torch[pass_name])
    patterns = _PATTERNS.get(pass_name, [])

    def lookup(name: str) -> Val:
        found = table.get(name)
        if found is not None:
            return found
        return next((v for pattern, v in patterns if pattern.match(name)), UNKNOWN)

    return lookup


def hipify_renames(torch_built: bool) -> Mapping[str, str]:
    return _facts()[2] if torch_built else {}


def model(
    text: str,
    path: str,
    torch_built: bool,
    project=None,
) -> LineModel:
    """The line model of one file. `project` (a `project_macros.ProjectMacros`) adds the
    project's own macros and the end state of the project headers the file includes."""
    scans = []
    rename = hipify_renames(torch_built)
    for p in passes_for(path, torch_built):
        lookup = base_lookup(p, torch_built)
        resolve = None
        if project is not None:
            lookup = project.lookup(p, lookup)
            resolve = project.resolve
        scans.append(scan(text, lookup, path, resolve, p, rename))
    return combine(scans)


# -- branches ----------------------------------------------------------------------------------
#: One enclosing branch: (line of its group's `#if`, branch index, the group's conditions up to
#: and including this branch, normalised: ("ifdef X", "elif Y", "else")).
Branch = tuple[int, int, tuple[str, ...]]
_WORDS = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Branches:
    """The preprocessor branches around each line of a file, read from its directives alone
    (no macro facts): which code compiles whenever another line compiles."""

    lines: tuple[int, ...]  # first line of each stretch of one path
    paths: tuple[tuple[Branch, ...], ...]
    #: (line, macro) of every `#define` / `#undef`, and the lines of `#undef NAME` per name.
    changes: tuple[tuple[int, str], ...]
    undefs: Mapping[str, tuple[int, ...]]

    def path(self, line: int) -> tuple[Branch, ...]:
        i = bisect.bisect_right(self.lines, line) - 1
        return self.paths[i] if i >= 0 else ()

    def encloses(self, outer: int, inner: int) -> bool:
        """Whether line `inner` compiles only where line `outer` does: each branch around
        `outer` is around `inner` too, or is one of another group of the same conditions with
        no `#define` / `#undef` of their macros in between."""
        here, there = self.path(outer), self.path(inner)
        if len(here) > len(there):
            return False
        for mine, theirs in zip(here, there, strict=False):
            if mine[:2] == theirs[:2]:
                continue
            if mine[2] != theirs[2] or self._redefined(mine[2], outer, inner):
                return False
        return True

    def undefined_between(self, name: str, first: int, last: int) -> bool:
        """An `#undef name` on a line from `first` to `last`."""
        return any(first <= line <= last for line in self.undefs.get(name, ()))

    def _redefined(self, conditions: tuple[str, ...], first: int, last: int) -> bool:
        words = {w for c in conditions for w in _WORDS.findall(c)}
        first, last = min(first, last), max(first, last)
        return any(first < line < last and name in words for line, name in self.changes)


_DEFINED_CALL = re.compile(r"defined\s*\(\s*([A-Za-z_]\w*)\s*\)")
_SPACED = re.compile(r"\s*([^\w\s])\s*")


def _condition(word: str, rest: str) -> str:
    """A directive's test in one spelling: `#ifdef X` and `#if defined(X)` read alike."""
    text = " ".join(rest.replace("\\\n", " ").split())
    if word.endswith("ndef"):
        word, text = word[:-4], f"!defined {text}"
    elif word.endswith("def"):
        word, text = word[:-3], f"defined {text}"
    text = _SPACED.sub(r"\1", _DEFINED_CALL.sub(r"defined \1", text))
    return f"{word} {text}".strip()


def branches(text: str) -> Branches:
    """`Branches` of one file's text (comments blanked; an unbalanced `#endif` is ignored)."""
    stack: list[tuple[int, int, tuple[str, ...]]] = []
    lines, paths = [1], [()]
    changes: list[tuple[int, str]] = []
    undefs: dict[str, list[int]] = {}
    blanked = blank_comments(text) if "#" in text else ""
    line, last = 1, 0
    for m in _DIRECTIVE.finditer(blanked):
        line += blanked.count("\n", last, m.start())
        last = m.start()
        word, rest = m.group(1), m.group(2)
        shown = _condition(word, rest)
        if word in ("if", "ifdef", "ifndef"):
            stack.append((line, 0, (shown,)))
        elif word in ("elif", "elifdef", "elifndef", "else") and stack:
            opened, index, conditions = stack[-1]
            stack[-1] = (opened, index + 1, (*conditions, shown))
        elif word == "endif" and stack:
            stack.pop()
        elif word in ("define", "undef") and (nm := _NAME.match(rest)) is not None:
            changes.append((line, nm.group(1)))
            if word == "undef":
                undefs.setdefault(nm.group(1), []).append(line)
            continue
        else:
            continue
        line += rest.count("\n")
        last = m.end()
        if lines[-1] == line + 1:
            paths[-1] = tuple(stack)
        else:
            lines.append(line + 1)
            paths.append(tuple(stack))
    return Branches(
        tuple(lines),
        tuple(paths),
        tuple(changes),
        {name: tuple(found) for name, found in undefs.items()},
    )
