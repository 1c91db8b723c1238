"""Which C++/CUDA sources torch's `cpp_extension` builds (and so hipifies on ROCm).

A source includes `torch/extension.h`, `ATen/...` or `c10/...` (decided per file by the C++
front-end), or it sits in a folder whose sources a scanned Python file hands to `CUDAExtension`,
`CppExtension` or `load(sources=...)` — headers beside them included, since hipify rewrites the
whole extension tree. The Python files are parsed with the standard library, never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

BUILDERS = {"CUDAExtension", "CppExtension", "load", "SyclExtension"}
TOKEN = b"cpp_extension"


def module_constants(tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level `NAME = value` bindings (sources are often kept in constants)."""
    return {
        stmt.targets[0].id: stmt.value
        for stmt in tree.body
        if isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    }


def _source_strings(node: ast.AST, constants: dict[str, ast.AST]) -> list[str]:
    if isinstance(node, ast.Name) and node.id in constants:
        node = constants[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for e in node.elts for s in _source_strings(e, constants)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _source_strings(node.left, constants) + _source_strings(node.right, constants)
    if isinstance(node, ast.Call):  # os.path.join("csrc", "x.cu") and the like
        parts = [a.value for a in node.args if isinstance(a, ast.Constant)]
        if parts and all(isinstance(p, str) for p in parts):
            return ["/".join(parts)]
    return []


def extension_sources(text: str) -> list[str]:
    """Source paths named in extension builders of one Python file (as written)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    constants = module_constants(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in BUILDERS:
            continue
        values = [kw.value for kw in node.keywords if kw.arg == "sources"]
        values += node.args[1:2]  # CUDAExtension(name, sources) / load(name, sources)
        for value in values:
            found += _source_strings(value, constants)
    return found


def torch_built_dirs(python_files: Iterable[tuple[Path, bytes]]) -> frozenset[Path]:
    """Folders (resolved) holding sources of torch-built extensions."""
    dirs: set[Path] = set()
    for path, data in python_files:
        if TOKEN not in data:
            continue
        text = data.decode("utf-8", "replace")
        base = path.resolve().parent
        for source in extension_sources(text):
            dirs.add((base / source).resolve().parent)
    return frozenset(dirs)


def python_sources(items, read) -> Iterator[tuple[Path, bytes]]:
    """(path, bytes) of every Python file of a run: `read` holds (index, item, bytes) of the
    files already read; the others (no selected rule reads them) are read here."""
    have = {index: data for index, _, data in read}
    for index, item in enumerate(items):
        if item.language != "python":
            continue
        if index in have:
            yield item.path, have[index]
        else:
            try:
                yield item.path, item.path.read_bytes()
            except OSError:
                continue


def is_torch_built(path: str, dirs: frozenset[Path]) -> bool:
    if not dirs:
        return False
    resolved = Path(path).resolve()
    return any(resolved.is_relative_to(d) for d in dirs)
