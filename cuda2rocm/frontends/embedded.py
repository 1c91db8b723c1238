"""CUDA/C++ held in Python strings: `load_inline(cpp_sources=..., cuda_sources=...)` and kernels.

Each string is linted by the C++ front-end as a file of its own; positions are mapped back to the
exact line and column in the Python file, through any escape sequences. A fix is carried into
the string only where that is exact: the edited span has no escapes and the new text needs none
(no backslash, no closing quote, no newline in a one-line string). f-strings and byte strings
are left alone. Found with the standard library's parser: fast, and positions are exact.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from cuda2rocm.build_context import module_constants
from cuda2rocm.frontends.python_fast import parse_ast
from cuda2rocm.sources import LineIndex, SourceFile

TOKENS = (b"load_inline", b"__global__")
SOURCE_KEYWORDS = ("cpp_sources", "cuda_sources")
_ESCAPE = re.compile(r"x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}")
_PREFIX = re.compile(r"^([rRuUbBfF]*)('''|\"\"\"|'|\")")


@dataclass
class Embedded:
    """One string literal holding C++: its content and, per content index, the file offset."""

    text: str
    offsets: list[int]  # len(text) + 1 entries: offset in the Python file of each character
    quote: str
    raw: bool
    escaped: set[int]  # content indices whose character came from an escape sequence
    #: Sources of `load_inline` are built (and hipified) by torch's cpp_extension.
    torch_built: bool | None = None
    #: A kernel template handed to a JIT (found anywhere, not a load_inline source or a module
    #: constant): it may hold placeholders (`@dtype@`), so tree-sitter's recovery is expected.
    template: bool = False
    #: The string defines a `__global__` kernel: on ROCm hipcc (a `load_inline` CUDA source)
    #: or a run-time compiler builds it, never the plain C++ compiler.
    kernel: bool = False

    def to_file(self, index: int) -> int:
        return self.offsets[min(max(index, 0), len(self.text))]

    def can_edit(self, start: int, end: int, replacement: str) -> bool:
        if any(i in self.escaped for i in range(start, end)):
            return False
        if "\\" in replacement and not self.raw:
            return False
        if self.quote in replacement or (len(self.quote) == 1 and "\n" in replacement):
            return False
        return not (self.raw and replacement.endswith("\\"))


def _decode(body: str, body_start: int, raw: bool) -> tuple[str, list[int], set[int]] | None:
    """Decode a literal's body, remembering where each character came from."""
    out: list[str] = []
    offsets: list[int] = []
    escaped: set[int] = set()
    i = 0
    simple = {
        "n": "\n",
        "t": "\t",
        "r": "\r",
        "\\": "\\",
        "'": "'",
        '"': '"',
        "a": "\a",
        "b": "\b",
        "f": "\f",
        "v": "\v",
        "0": "\0",
    }
    while i < len(body):
        c = body[i]
        if c != "\\" or raw:
            out.append(c)
            offsets.append(body_start + i)
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt == "\n":  # line continuation: no character
            i += 2
            continue
        if nxt in simple:
            escaped.add(len(out))
            out.append(simple[nxt])
            offsets.append(body_start + i)
            i += 2
            continue
        match = re.match(
            r"x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}", body[i + 1 :]
        )
        if not match:
            return None
        code = match.group()
        value = int(code[1:], 16) if code[0] in "xuU" else int(code, 8)
        escaped.add(len(out))
        out.append(chr(value))
        offsets.append(body_start + i)
        i += 1 + len(code)
    offsets.append(body_start + len(body))
    return "".join(out), offsets, escaped


def _literal(node: ast.Constant, lines: LineIndex, text: str) -> Embedded | None:
    start = _offset(lines, text, node.lineno, node.col_offset)
    end = _offset(lines, text, node.end_lineno, node.end_col_offset)
    raw_text = text[start:end]
    match = _PREFIX.match(raw_text)
    if not match or not raw_text.endswith(match.group(2)):
        return None  # implicit concatenation or something unexpected: leave it
    prefix, quote = match.group(1).lower(), match.group(2)
    if "b" in prefix or "f" in prefix:
        return None
    body_start = start + match.end()
    body = text[body_start : end - len(quote)]
    decoded = _decode(body, body_start, "r" in prefix)
    if decoded is None or decoded[0] != node.value:
        return None
    content, offsets, escaped = decoded
    return Embedded(content, offsets, quote, "r" in prefix, escaped)


def _offset(lines: LineIndex, text: str, line: int, col_utf8: int) -> int:
    """ast columns count UTF-8 bytes; ours count characters."""
    start = lines.offset(line, 0)
    line_text = text[start : lines.offset(line + 1, 0) if line < len(lines.starts) else len(text)]
    return start + len(line_text.encode("utf-8")[:col_utf8].decode("utf-8", "replace"))


def _strings(node: ast.AST, constants: dict[str, ast.AST]) -> list[ast.Constant]:
    """String literals of a source argument: a literal, a list of them, or names bound to them."""
    if isinstance(node, ast.Name) and node.id in constants:
        node = constants[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [c for e in node.elts for c in _strings(e, constants) if e is not node]
    return []


#: A string that defines a kernel (not merely one that mentions `__global__`).
_KERNEL = re.compile(r"__global__\s+(?:void|__launch_bounds__)\b")


def find(source: SourceFile) -> list[Embedded]:
    """C++ strings of a Python file: `load_inline` sources (literal, list, or a module-level
    name bound to one) and module-level strings that define a `__global__` kernel."""
    tree = parse_ast(source.text)
    if tree is None:
        return []
    constants = module_constants(tree)
    chosen: dict[int, ast.Constant] = {}
    inline: set[int] = set()
    templates: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name != "load_inline":
            continue
        values = [kw.value for kw in node.keywords if kw.arg in SOURCE_KEYWORDS]
        values += node.args[1:3]  # load_inline(name, cpp_sources, cuda_sources, ...)
        for value in values:
            for constant in _strings(value, constants):
                chosen[id(constant)] = constant
                inline.add(id(constant))
    for value in constants.values():
        for constant in _strings(value, {}):
            if "__global__" in constant.value:
                chosen[id(constant)] = constant
    for node in ast.walk(tree):  # kernel templates handed to a JIT compiler, wherever they are
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _KERNEL.search(node.value)
            and id(node) not in chosen
        ):
            chosen[id(node)] = node
            templates.add(id(node))
    lines = source.lines
    found = []
    for constant in sorted(chosen.values(), key=lambda c: (c.lineno, c.col_offset)):
        literal = _literal(constant, lines, source.text)
        if literal is not None:
            literal.torch_built = True if id(constant) in inline else None
            literal.template = id(constant) in templates
            literal.kernel = bool(_KERNEL.search(constant.value))
            found.append(literal)
    return found
