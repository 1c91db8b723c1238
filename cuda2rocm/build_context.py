"""Which C++/CUDA sources torch's `cpp_extension` builds (and so hipifies on ROCm).

A source includes `torch/extension.h`, `ATen/...` or `c10/...` (decided per file by the C++
front-end), or it sits in a folder whose sources a scanned Python file hands to `CUDAExtension`,
`CppExtension` or `load(sources=...)` — headers beside them included, since hipify rewrites the
whole extension tree. The Python files are parsed with the standard library, never run.
"""

from __future__ import annotations

import ast
import re
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


def is_torch_built(path: str, dirs: frozenset[Path]) -> bool:
    if not dirs:
        return False
    resolved = Path(path).resolve()
    return any(resolved.is_relative_to(d) for d in dirs)


# -- the project's own hipify step ---------------------------------------------------------------
# Some ported projects hipify their CUDA tree themselves at build time instead of going through
# torch's cpp_extension: TransformerEngine's ROCm fork calls hipify_torch's CMake function
# `hipify(CUDA_SOURCE_DIR <dir> ...)`, faiss runs faiss/gpu/hipify.sh (hipify-perl) from CMake.
# Both rename runtime/BLAS names and add `#include "hip/hip_runtime.h"` to files with device code
# (torch/utils/hipify/hipify_python.py add_hip_runtime_include; HIPIFY's hipify-perl, the
# `$hasDeviceCode` branch), so name-mapping findings there ask for work the build already does.
# Macro semantics differ from torch's build (no -DUSE_ROCM is implied), so these folders are kept
# apart from torch_built_dirs and only the name-mapping checks consult them.

_CMAKE_HIPIFY = re.compile(rb"(?im)^[ \t]*hipify[ \t]*\(([^)]*)\)")
_SOURCE_DIR = re.compile(rb'CUDA_SOURCE_DIR\s+"?([^\s")]+)')
_CMAKE_HERE = (b"${CMAKE_CURRENT_SOURCE_DIR}", b"${CMAKE_CURRENT_LIST_DIR}")
_HIPIFY_TOOL = re.compile(rb"(?m)^[^#\n]*\bhipify-(?:perl|clang)\b")
_SCRIPT_CALL = re.compile(rb"(?i)\b(?:execute_process|add_custom_command|add_custom_target)\b")


def _cmake_hipify_dirs(path: Path, data: bytes) -> Iterator[Path]:
    here = path.resolve().parent
    for call in _CMAKE_HIPIFY.finditer(data):
        match = _SOURCE_DIR.search(call.group(1))
        if match is None:
            continue
        value = match.group(1)
        for token in _CMAKE_HERE:
            value = value.replace(token, b".")
        if b"${" in value:
            continue  # a variable we cannot resolve: claim nothing
        yield (here / value.decode("utf-8", "replace")).resolve()


def hipified_dirs(files: Iterable[tuple[Path, str, bytes]]) -> frozenset[Path]:
    """Folders (resolved) that the project's own build hipifies, from (path, language, bytes) of
    the run's CMake and shell files: a CMake `hipify(CUDA_SOURCE_DIR <dir>)` call, or a shell
    script that runs hipify-perl/hipify-clang and that a CMake file runs (its own folder)."""
    dirs: set[Path] = set()
    scripts: dict[bytes, Path] = {}
    cmake: list[bytes] = []
    for path, language, data in files:
        if language == "cmake" and b"hipify" in data.lower():
            dirs.update(_cmake_hipify_dirs(path, data))
            cmake.append(data)
        elif language == "shell" and _HIPIFY_TOOL.search(data):
            scripts[path.name.encode()] = path.resolve().parent
    for name, folder in scripts.items():
        if any(name in data and _SCRIPT_CALL.search(data) for data in cmake):
            dirs.add(folder)
    return frozenset(dirs)
