"""Python that needs extension attributes a ROCm build never binds.

A pybind11 extension binds its Python names in C++ (`m.def("name", ...)`, `py::class_<T>(m,
"Name")`, `py::enum_<E>(m, "Name")`). When every place the run's C++ spells a name sits on a
line the HIP passes skip (TransformerEngine's pybind.cpp binds `UbufBootstrapCallbacks` only
under `#ifndef USE_ROCM`, which torch's ROCm build defines), the ROCm build of the module has
no such attribute: `tex.UbufBootstrapCallbacks` raises AttributeError there.

Python code that evaluates such an access unconditionally cannot get past it on ROCm:

- **after it** (the rest of the same function body, or of the module when the module's top level
  does it: the import fails): never runs on ROCm;
- **before it, in the same function body**, with no way out of the function but an exception
  (no `return`, `yield`, `sys.exit()` on the way): it runs only on the way to that failure, so
  the function as a whole is CUDA-only and its findings are part of porting the feature the
  attribute belongs to.

The module alias must be provably the extension: `import E as X` / `import E` where E is the
extension's name (`PYBIND11_MODULE(E, m)`, or `TORCH_EXTENSION_NAME` and the run's one
`CUDAExtension(name=...)`), or a project module whose top level does `from E import *`. The
attribute name must not appear in any Python file of the run other than after a `.` (a `def`,
an assignment, `hasattr(x, "name")` make it unknown), and the alias must be bound once.
Unconditional means: a statement directly in the function (or module) body, and for `if`,
`while`, `for` and `with` only their header expression; not under a `lambda`, comprehension,
the right of `and`/`or`, one side of `a if t else b` (unless both sides make such an access),
or an `assert` (dropped by `python -O`).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

_MODULE = re.compile(r"PYBIND11_MODULE\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")
_EXTENSION_NAME = re.compile(
    r"\b(?:CUDAExtension|CppExtension)\s*\(\s*(?:name\s*=\s*)?[\"'](\w[\w.]*)[\"']"
)
_EXIT = {"sys.exit", "exit", "quit", "os._exit", "os.abort"}


@dataclass
class Bindings:
    """Extension module name -> attribute -> why ROCm never binds it."""

    missing: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Project module (dotted, as imported) -> the extension it star-imports at top level.
    reexports: dict[str, str] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        return repr(
            (
                sorted((m, sorted(a.items())) for m, a in self.missing.items()),
                sorted(self.reexports.items()),
            )
        )


def _binding_patterns(var: str) -> re.Pattern[str]:
    v = re.escape(var)
    return re.compile(
        rf"\b{v}\s*\.\s*(?:def|attr|def_submodule)\s*\(\s*\"(\w+)\"|\(\s*{v}\s*,\s*\"(\w+)\""
    )


def cuda_only_bindings(
    cpp: dict[str, str],
    python: Iterable[tuple[str, str]],
    skipped: Callable[[str, int], str],
) -> Bindings:
    """`cpp`: path -> text of the run's C/C++ files; `python`: (dotted module, text) of its
    Python files; `skipped(path, line)`: why no HIP pass compiles that line ("" if one may)."""
    python = list(python)
    modules = [(p, m.group(1), m.group(2), m) for p, t in cpp.items() for m in _MODULE.finditer(t)]
    if not modules:
        return Bindings()
    # (the substring first: the pattern's leading \b makes a search over every file slow)
    names = {n for _, t in python if "Extension" in t for n in _EXTENSION_NAME.findall(t)}
    out = Bindings()
    for path, name, var, match in modules:
        if name == "TORCH_EXTENSION_NAME":
            torch_modules = [m for m in modules if m[1] == "TORCH_EXTENSION_NAME"]
            if len(names) != 1 or len(torch_modules) != 1:
                continue  # which extension this is cannot be told
            name = next(iter(names)).rsplit(".", 1)[-1]
        text = cpp[path]
        found: dict[str, str] = {}
        for m in _binding_patterns(var).finditer(text, match.end()):
            attr = m.group(1) or m.group(2)
            line = text.count("\n", 0, m.start()) + 1
            why = skipped(path, line)
            if not why:
                found[attr] = ""  # bound where ROCm compiles it
            elif attr not in found:
                found[attr] = f"`{name}.{attr}` is bound only at {path}:{line}, where {why}"
        missing = {a: w for a, w in found.items() if w and _only_skipped(a, cpp, skipped)}
        if missing:
            out.missing.setdefault(name, {}).update(missing)
    if not out.missing:
        return out
    # a name any Python file binds, tests or spells outside `x.name`: unknown
    for attrs in out.missing.values():
        for attr in list(attrs):
            bare = re.compile(rf"(?<![.\w]){re.escape(attr)}\b")
            if any(bare.search(t) for _, t in python if attr in t):
                del attrs[attr]
    out.missing = {m: a for m, a in out.missing.items() if a}
    for module, text in python:
        for ext in out.missing:
            if "__getattr__" in text:
                continue  # a module-level __getattr__ may supply any name
            if "import *" in text and re.search(
                rf"^from\s+{re.escape(ext)}\s+import\s+\*", text, re.M
            ):
                out.reexports[module] = ext
    return out


def _only_skipped(attr: str, cpp: dict[str, str], skipped: Callable[[str, int], str]) -> bool:
    """Every `"attr"` string of the run's C++ sits on a line no HIP pass compiles."""
    needle = f'"{attr}"'
    for path, text in cpp.items():
        start = text.find(needle)
        while start >= 0:
            if not skipped(path, text.count("\n", 0, start) + 1):
                return False
            start = text.find(needle, start + 1)
    return True


# -- Python ------------------------------------------------------------------------------------
def _aliases(tree: ast.Module, bindings: Bindings) -> dict[str, str]:
    """Local name -> extension, for `import E as X`, `import E`, `import P as X` (P re-exports
    E); a name bound more than once is dropped."""
    found: dict[str, str] = {}
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            for a in node.names:
                local = a.asname or a.name.split(".")[0]
                targets.append(local)
                ext = a.name if a.name in bindings.missing else _reexport(bindings, a.name)
                if ext and (a.asname or "." not in a.name):
                    found[local] = ext
        elif isinstance(node, ast.ImportFrom):
            targets += [a.asname or a.name for a in node.names]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            targets.append(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            targets.append(node.id)
        elif isinstance(node, ast.arg):
            targets.append(node.arg)
        for t in targets:
            counts[t] = counts.get(t, 0) + 1
    return {k: v for k, v in found.items() if counts.get(k) == 1}


def _reexport(bindings: Bindings, module: str) -> str | None:
    """The extension a project module re-exports, the module named by its dotted import name
    (matched as a suffix of the file's dotted path; several matches: unknown)."""
    found = {
        ext
        for path, ext in bindings.reexports.items()
        if path == module or path.endswith("." + module)
    }
    return found.pop() if len(found) == 1 else None


class _Fatal:
    """Unconditional accesses to missing attributes, per statement."""

    def __init__(self, aliases: dict[str, str], bindings: Bindings) -> None:
        self.aliases = aliases
        self.bindings = bindings

    def access(self, node: ast.AST) -> str:
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.aliases
        ):
            ext = self.aliases[node.value.id]
            why = self.bindings.missing.get(ext, {}).get(node.attr)
            if why:
                return f"`{node.value.id}.{node.attr}` (line {node.lineno}): {why}"
        return ""

    def expression(self, node: ast.AST | None) -> str:
        """A missing attribute this expression always evaluates, or ""."""
        if node is None:
            return ""
        found = self.access(node)
        if found:
            return found
        if isinstance(
            node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
        ):
            return ""
        if isinstance(node, ast.BoolOp):
            return self.expression(node.values[0])
        if isinstance(node, ast.IfExp):
            test = self.expression(node.test)
            if test:
                return test
            body, orelse = self.expression(node.body), self.expression(node.orelse)
            return body if body and orelse else ""
        for child in ast.iter_child_nodes(node):
            if isinstance(
                child, (ast.expr, ast.keyword, ast.comprehension, ast.arg, ast.arguments)
            ):
                found = self.expression(child)
                if found:
                    return found
        return ""

    def statement(self, stmt: ast.stmt) -> str:
        if isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)):
            return self.expression(stmt.value) if stmt.value is not None else ""
        if isinstance(stmt, (ast.If, ast.While)):
            return self.expression(stmt.test)
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            return self.expression(stmt.iter)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            return next((w for w in (self.expression(i.context_expr) for i in stmt.items) if w), "")
        return ""


def _leaves(stmt: ast.stmt) -> bool:
    """`stmt` may leave the function other than by an exception."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)):
            return True
        if (
            isinstance(node, ast.While)
            and isinstance(node.test, ast.Constant)
            and node.test.value
            and not any(isinstance(n, ast.Break) for n in ast.walk(node))
        ):
            return True  # `while True:` with no break: may never get to the failure
        if isinstance(node, ast.Call) and ast.unparse(node.func) in _EXIT:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


@dataclass
class _Region:
    start: tuple[int, int]
    end: tuple[int, int]  # inclusive when `through`, else exclusive
    why: str
    through: bool = True

    def contains(self, at: tuple[int, int]) -> bool:
        return self.start <= at and (at <= self.end if self.through else at < self.end)


def dead_regions(text: str, bindings: Bindings) -> list[_Region]:
    """Regions of a Python file that cannot run (or cannot complete) on ROCm."""
    if not bindings.missing or not any(a in text for m in bindings.missing.values() for a in m):
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    aliases = _aliases(tree, bindings)
    if not aliases:
        return []
    fatal = _Fatal(aliases, bindings)
    regions: list[_Region] = []
    bodies: list[tuple[ast.AST, list[ast.stmt]]] = [(tree, tree.body)]
    bodies += [
        (n, n.body)
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    for owner, body in bodies:
        generator = owner is not tree and any(
            isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(owner)
        )
        for index, stmt in enumerate(body):
            why = fatal.statement(stmt)
            if not why:
                continue
            where = "the module" if owner is tree else f"`{owner.name}()`"  # type: ignore[attr-defined]
            after = body[index + 1 :]
            if after:
                regions.append(
                    _Region(
                        (after[0].lineno, after[0].col_offset),
                        (after[-1].end_lineno or after[-1].lineno, after[-1].end_col_offset or 0),
                        f"ROCm never runs this: {where} fails before it on ROCm at {why}",
                    )
                )
            if owner is not tree and not generator:
                before = body[:index]
                # from the last statement that may leave the function, the rest must fail
                first = max((i + 1 for i, s in enumerate(before) if _leaves(s)), default=0)
                if first < index:
                    regions.append(
                        _Region(
                            (before[first].lineno, before[first].col_offset),
                            (stmt.lineno, stmt.col_offset),
                            f"{where} cannot complete on ROCm: it always reaches {why}; this "
                            "runs only on the way to that failure (porting it is part of "
                            "porting that feature)",
                            through=False,
                        )
                    )
            break  # the first fatal statement of a body decides
    return regions


def _own_nodes(function: ast.AST):
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def guard(diagnostics: list, text: str, bindings: Bindings | None) -> list:
    """`diagnostics` with `guarded` set on those in code that cannot run on ROCm because it
    needs an attribute the ROCm build of an extension never binds."""
    if not diagnostics or bindings is None or not bindings.missing:
        return diagnostics
    regions = dead_regions(text, bindings)
    if not regions:
        return diagnostics
    lines = text.splitlines()
    out = []
    for d in diagnostics:
        if not d.guarded and d.rule not in ("internal-error", "read-error"):
            line = d.position.line
            column = (
                len(lines[line - 1][: d.position.column - 1].encode())
                if 0 < line <= len(lines)
                else 0
            )
            at = (line, column)
            hit = next((r for r in regions if r.contains(at)), None)
            if hit is not None:
                d = dataclasses.replace(d, guarded=hit.why)
        out.append(d)
    return out


def module_name(display: str, root: str = "") -> str:
    """`transformer_engine/pytorch/cpp_extensions/__init__.py` -> its dotted name."""
    parts = list(PurePosixPath(display.replace("\\", "/")).with_suffix("").parts)
    parts = [p for p in parts if p not in ("..", ".")]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)
