"""The extension builds a Python build file hands to torch's cpp_extension, call by call,
with what hipify needs to know of each: its sources and its header include dirs.

`CUDAExtension(..., include_dirs=...)` passes `include_dirs` to hipify as
`header_include_dirs`; `load(..., extra_include_paths=...)` and `load_inline(...)` pass
`extra_include_paths` (torch 2.13 torch/utils/cpp_extension.py). `CppExtension` hipifies
nothing, and `load()` hipifies only when it builds CUDA (`with_cuda`, by default: a `.cu` or
`.cuh` source). Values are read with build_context's setup.py reader (literals,
`os.path.join`, names bound from them, `+` of lists, globs), never run.

DeepSpeed-style op builders (a class with `sources()` and `include_paths()` methods) are read
too, but their hipify is the builder's own call, whose arguments differ from cpp_extension's:
they count only with `op_builders=True` (off by default; crediting them lowered recall).
"""

from __future__ import annotations

import ast
import glob
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cuda2rocm.build_context import (
    TOKEN,
    _builder_alias,
    _source_literals,
    _Sources,
)
from cuda2rocm.context.build import _path_literals
from cuda2rocm.context.hipify_reach import HipifyCall, load_call, setup_call

#: The builder calls, by the last part of their name.
HIPIFYING = {"CUDAExtension": "setup", "load": "load", "load_inline": "load"}
NOT_HIPIFYING = {"CppExtension", "SyclExtension"}
_CUDA_SUFFIXES = (".cu", ".cuh")
_WILDCARDS = ("*", "?", "[")


@dataclass(frozen=True)
class ExtensionCall:
    """One builder call (or op-builder class) of a build file, as written: `sources` and
    `include_dirs` are relative to the script's folder or absolute (globs expanded).
    `complete`: every source and include dir of the call was read, so its hipify reach is
    known exactly."""

    script: Path
    line: int
    builder: str
    kind: str  # "setup", "load", "op-builder" or "none" (a builder that never hipifies)
    sources: tuple[str, ...]
    include_dirs: tuple[str, ...]
    complete: bool

    def hipify_call(self) -> HipifyCall | None:
        """The hipify() call torch makes for it on ROCm (None: it hipifies nothing)."""
        base = str(self.script.parent)
        if self.kind == "setup":
            return setup_call(base, self.sources, self.include_dirs)
        if self.kind == "load":
            return load_call(base, self.sources, self.include_dirs)
        if self.kind == "op-builder":
            # the builder's hipify: project_directory = the working folder, which its
            # sources' paths are relative to (the project root, read as the script's root)
            return setup_call(base, self.sources, self.include_dirs)
        return None


def _name(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _values(reader: _Sources, node: ast.AST, scope: dict, depth: int = 0) -> tuple[list, bool]:
    """The paths `node` may hold, and whether every one was read: each list element, each
    `+` operand and each binding of a name yields a value. `+` of a string is string
    concatenation (`HERE + "/inc"`), which build_context's reader would read as two items."""
    if depth > 12:
        return [], False
    if isinstance(node, (ast.List, ast.Tuple)):
        out, known = [], True
        for element in node.elts:
            values, ok = _values(reader, element, scope, depth + 1)
            out, known = out + values, known and ok
        return out, known
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        if any(_stringy(side) for side in (node.left, node.right)):
            left = reader.one(node.left, scope, depth + 1)
            right = reader.one(node.right, scope, depth + 1)
            if left is None or right is None:
                return [], False
            return [left + right], True
        left, a = _values(reader, node.left, scope, depth + 1)
        right, b = _values(reader, node.right, scope, depth + 1)
        return left + right, a and b
    if isinstance(node, ast.Name):
        bound = scope.get(node.id) or reader.module.get(node.id) or []
        if node.id in reader.visiting:  # `dirs = dirs + [...]`: its other bindings
            return [], True
        reader.visiting.add(node.id)
        try:
            out, known = [], bool(bound)
            for value in bound:
                values, ok = _values(reader, value, scope, depth + 1)
                out, known = out + values, known and ok
            return out, known
        finally:
            reader.visiting.discard(node.id)
    found = reader.strings(node, scope)
    return found, bool(found)


def _stringy(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def _expand(base: Path, values: Iterable[str]) -> tuple[list[str], bool]:
    """Glob patterns replaced by the files they match now (relative to `base` when they
    were); whether every pattern matched something."""
    out: list[str] = []
    matched = True
    for value in values:
        if not any(w in value for w in _WILDCARDS):
            out.append(value)
            continue
        found = sorted(glob.glob(os.path.join(base, value), recursive=True))
        matched &= bool(found)
        out += [f if os.path.isabs(value) else os.path.relpath(f, base) for f in found]
    return out, matched


def _keyword(node: ast.Call, name: str) -> ast.AST | None:
    return next((kw.value for kw in node.keywords if kw.arg == name), None)


def extension_calls(path: Path, text: str, op_builders: bool = False) -> list[ExtensionCall]:
    """The builder calls of one Python file (and, with `op_builders`, its op-builder
    classes)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    reader = _Sources(tree)
    base = path.resolve().parent
    calls: list[ExtensionCall] = []
    literals: list[str] | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        scope = reader.scopes.get(id(node), {})
        if name not in HIPIFYING and name not in NOT_HIPIFYING:
            if not _builder_alias(node.func, scope, reader.module):
                continue
            name = "CUDAExtension?"  # chosen between builders: may be either
        kind = HIPIFYING.get(name, "none")
        if name == "CUDAExtension?":
            kind = "setup"  # as build_context reads it; which one is not known: incomplete
        values = [v for v in (_keyword(node, "sources"),) if v is not None]
        values += node.args[1:2]
        if name == "load_inline":
            values = []  # its sources are strings written to torch's build folder
        sources, complete = [], True
        for value in values:
            found, known = _values(reader, value, scope)
            sources, complete = sources + found, complete and known
        if values and not sources and kind == "setup":
            # sources built elsewhere: the module's spelled-out source paths
            # (build_context.extension_sources reads them the same way)
            if literals is None:
                literals = _source_literals(tree, reader)
            sources, complete = list(literals), False
        include = _keyword(node, "include_dirs" if kind == "setup" else "extra_include_paths")
        dirs, known = _values(reader, include, scope) if include is not None else ([], True)
        complete = complete and known
        # `**kwargs` may hold either; no sources read: nothing is known exactly
        complete = complete and bool(values) and all(kw.arg for kw in node.keywords)
        sources, matched = _expand(base, sources)
        complete = complete and matched and name != "CUDAExtension?"
        if kind == "load" and name == "load" and not _loads_cuda(node, sources, reader, scope):
            kind = "none"
        calls.append(
            ExtensionCall(
                path.resolve(), node.lineno, name, kind, tuple(sources), tuple(dirs), complete
            )
        )
    if op_builders:
        calls += _op_builders(path, tree)
    return calls


def _loads_cuda(node: ast.Call, sources: list[str], reader: _Sources, scope: dict) -> bool:
    """`load(with_cuda=...)`: a literal decides; None (the default) means a CUDA source."""
    value = _keyword(node, "with_cuda")
    if isinstance(value, ast.Constant) and isinstance(value.value, bool):
        return value.value
    if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
        return True  # computed: it may be
    return any(s.endswith(_CUDA_SUFFIXES) for s in sources) or not sources


def _op_builders(path: Path, tree: ast.Module) -> list[ExtensionCall]:
    """Classes with a `sources()` method and an `include_paths()` method (DeepSpeed's
    OpBuilder shape): the path strings each returns, relative to the project root (read as
    the script's folder)."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        methods = {
            m.name: m
            for m in node.body
            if isinstance(m, ast.FunctionDef) and m.name in ("sources", "include_paths")
        }
        if "sources" not in methods:
            continue
        sources = [lit for _, lit, _ in _path_literals(methods["sources"]) if "/" in lit]
        dirs = (
            [lit for _, lit, _ in _path_literals(methods["include_paths"]) if "/" in lit]
            if "include_paths" in methods
            else []
        )
        out.append(
            ExtensionCall(
                path.resolve(),
                node.lineno,
                node.name,
                "op-builder",
                tuple(sources),
                tuple(dirs),
                False,
            )
        )
    return out


def wrapped_call(call) -> ExtensionCall:
    """A call of a project's builder wrapper (context.builder_wrappers.WrappedCall) as the
    builder call it ends in. Never complete: the wrapper may add sources or include dirs of
    its own, so no file is said to be left alone on its account."""
    base = call.script.parent
    sources, _ = _expand(base, call.sources)
    kind = HIPIFYING.get(call.builder, "none")
    if call.builder == "load" and sources and not any(s.endswith(_CUDA_SUFFIXES) for s in sources):
        kind = "none"  # load() hipifies only when it builds CUDA (with_cuda: a .cu/.cuh source)
    return ExtensionCall(
        call.script, call.line, call.builder, kind, tuple(sources), call.include_dirs, False
    )


def project_reach(
    python_files: Iterable[tuple[Path, bytes]], op_builders: bool = False, wrapped: Iterable = ()
) -> tuple[frozenset[Path], frozenset[Path]]:
    """(files torch's hipify rewrites, files it provably leaves alone though a hipified file
    of a fully read call includes them), resolved, over the run's Python build files and the
    calls of the project's builder wrappers (`wrapped`). Not kept across runs: globs and the
    walk read the tree, not only the build files."""
    from cuda2rocm.context.hipify_reach import Reach, reach

    total, known = Reach(), Reach()
    calls = [wrapped_call(c) for c in wrapped]
    for path, data in python_files:
        if TOKEN not in data and not (op_builders and b"def include_paths" in data):
            continue
        calls += extension_calls(path, data.decode("utf-8", "replace"), op_builders)
    for call in calls:
        hipify = call.hipify_call()
        if hipify is None or (call.kind == "op-builder" and not op_builders):
            continue
        found = reach(hipify)
        total.update(found)
        if call.complete:
            known.update(found)
    hipified = frozenset(Path(p).resolve() for p in total.hipified)
    left = frozenset(Path(p).resolve() for p in known.ignored) - hipified
    return hipified, left
