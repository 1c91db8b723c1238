"""Folders a project's Python build hands to torch's hipify (`hipify_python.hipify`).

Some ported projects hipify a tree themselves from setup code instead of through
`CUDAExtension`: TransformerEngine's ROCm fork wraps `hipify_torch.hipify_python.hipify(
project_directory=src_dir, includes=["*"], ...)` in a helper `hipify(base_dir, src_dir, ...)`
(build_tools/utils.py), which build_tools/jax.py calls with its own parameter, which setup.py
calls with `"transformer_engine/jax/csrc"`. hipify renames every file under `project_directory`
that `includes` matches (torch/utils/hipify/hipify_python.py `hipify`: `includes=("*",)` by
default, walked by `matched_files_iter`), so name-mapping findings there ask for work the build
already does. Read statically, never run: a call site whose folder argument cannot be evaluated
(a path literal, `Path(__file__).parent / "x"`, a module constant of those) claims nothing.
"""

from __future__ import annotations

import ast
import fnmatch
import os
from collections.abc import Iterable
from pathlib import Path

from cuda2rocm.build_context import _Sources

#: Wrappers that keep the folder an argument names.
_KEEP = {"Path", "pathlib.Path", "str", "os.path.abspath", "os.path.realpath", "os.fspath"}
_MAX_DEPTH = 4


def _parse(data: bytes) -> ast.Module | None:
    try:
        return ast.parse(data.decode("utf-8", "replace"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


#: `hipify()`'s default `extensions` (torch/utils/hipify/hipify_python.py, torch 2.13).
DEFAULT_EXTENSIONS = (".cu", ".cuh", ".c", ".cc", ".cpp", ".h", ".in", ".hpp")
#: What `matched_files_iter` leaves out at the top of the walked folder.
_SKIPPED_TOP = frozenset({".git", "build", "third_party"})
_MAX_FILES = 20000
_ALL = ("*", "**", "./*")

#: (includes, ignores, extensions) of one hipify call; None fields are the defaults.
Selection = tuple[tuple[str, ...] | None, tuple[str, ...], tuple[str, ...] | None]


def _selection(node: ast.Call, sources: _Sources, local: dict) -> Selection | None:
    """What a hipify call selects, read as torch's `hipify()` reads it: `includes` (default
    `("*",)`), `ignores` (default none) and `extensions` (default `DEFAULT_EXTENSIONS`), each an
    evaluable list of strings; None when one cannot be read (the call then claims nothing)."""
    values: dict[str, tuple[str, ...]] = {}
    for kw in node.keywords:
        if kw.arg not in ("includes", "ignores", "extensions"):
            continue
        if not isinstance(kw.value, (ast.List, ast.Tuple, ast.Name)):
            return None
        elements = kw.value.elts if isinstance(kw.value, (ast.List, ast.Tuple)) else [kw.value]
        found: list[str] = []
        for element in elements:
            strings = sources.strings(element, local, 0)
            if not strings:
                return None
            found += strings
        values[kw.arg] = tuple(found)
    includes = values.get("includes")
    if includes is not None and any(i in _ALL for i in includes):
        includes = None  # every file
    return includes, values.get("ignores", ()), values.get("extensions")


def selected_files(folder: Path, spelled: str, selection: Selection) -> list[Path] | None:
    """The files of `folder` a hipify call with `selection` renames, following torch's
    `matched_files_iter`: walk the folder (not its top-level `.git`, `build`, `third_party`),
    keep a file whose path matches an include pattern (fnmatch, `*` crossing `/`), no ignore
    pattern, and ends in one of the extensions (or is an include verbatim). A pattern is
    matched against the path as the call spells its folder and as an absolute path. None when
    the folder holds too many files to walk."""
    includes, ignores, extensions = selection
    patterns = [os.path.normpath(p) for p in includes or ("*",)]
    ignored = [os.path.normpath(p) for p in ignores]
    suffixes = extensions if extensions is not None else DEFAULT_EXTENSIONS
    out: list[Path] = []
    count = 0
    for dirpath, dirs, names in os.walk(folder):
        if Path(dirpath) == folder:
            dirs[:] = [d for d in dirs if d not in _SKIPPED_TOP]
        for name in names:
            count += 1
            if count > _MAX_FILES:
                return None
            full = Path(dirpath, name)
            rel = full.relative_to(folder).as_posix()
            forms = {os.path.normpath(os.path.join(spelled, rel)), str(full)}
            if not any(fnmatch.fnmatch(f, p) for f in forms for p in patterns):
                continue
            if any(fnmatch.fnmatch(f, p) for f in forms for p in ignored):
                continue
            if name.endswith(tuple(suffixes)) or forms & set(patterns):
                out.append(full.resolve())
    return out


def _folder_arg(node: ast.Call, index: int, keyword: str) -> ast.AST | None:
    for kw in node.keywords:
        if kw.arg == keyword:
            return kw.value
    if 0 <= index < len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args):
        return node.args[index]
    return None


def _parameter(expr: ast.AST, function: ast.FunctionDef, local: dict, depth: int = 0) -> str | None:
    """The parameter of `function` that `expr` passes on (through `Path(p)`, `str(p)` and a
    local rebinding `p = Path(p)`), or None."""
    if depth > 6:
        return None
    while isinstance(expr, ast.Call) and ast.unparse(expr.func) in _KEEP and len(expr.args) == 1:
        expr = expr.args[0]
    if not isinstance(expr, ast.Name):
        return None
    params = [
        a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    ]
    rebound = [v for v in local.get(expr.id, []) if not _is_self(v, expr.id)]
    if expr.id in params and not rebound:
        return expr.id
    found = {_parameter(v, function, {}, depth + 1) for v in rebound}
    if expr.id in params:
        found |= {expr.id} if all(_is_self(v, expr.id) for v in local.get(expr.id, [])) else set()
    return found.pop() if len(found) == 1 and None not in found else None


def _is_self(value: ast.AST, name: str) -> bool:
    """`p = Path(p)`: a rebinding that keeps the parameter's folder."""
    while isinstance(value, ast.Call) and ast.unparse(value.func) in _KEEP and len(value.args) == 1:
        value = value.args[0]
    return isinstance(value, ast.Name) and value.id == name


def python_hipified_dirs(python_files: Iterable[tuple[Path, bytes]]) -> frozenset[Path]:
    """Folders (resolved) that a hipify call in the run's Python files covers, at each call site
    whose folder argument evaluates, directly or through helpers whose parameter reaches it."""
    files = [(path, data) for path, data in python_files]
    trees: dict[Path, tuple[ast.Module, _Sources] | None] = {}

    def parsed(path: Path, data: bytes) -> tuple[ast.Module, _Sources] | None:
        if path not in trees:
            tree = _parse(data)
            trees[path] = (tree, _Sources(tree)) if tree is not None else None
        return trees[path]

    # callee name -> (positional index, keyword) of its folder argument, and what the hipify
    # call it reaches selects
    targets: dict[str, set[tuple[int, str, Selection]]] = {}
    dirs: set[Path] = set()
    seen: set[str] = set()
    for step in range(_MAX_DEPTH):
        new: dict[str, set[tuple[int, str, Selection]]] = {}
        for path, data in files:
            first = step == 0
            if first and b"project_directory" not in data:
                continue
            if not first and not any(name.encode() in data for name in targets):
                continue
            found = parsed(path, data)
            if found is None:
                continue
            tree, sources = found
            for function in [None, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]:
                body = tree if function is None else function
                local = sources.scopes.get(id(function), {}) if function is not None else {}
                for node in _calls(body, function is None):
                    name = _call_name(node)
                    if first:
                        if not (
                            b"hipify" in data
                            and "hipify" in name.lower()
                            and any(kw.arg == "project_directory" for kw in node.keywords)
                        ):
                            continue
                        selection = _selection(node, sources, local)
                        if selection is None:
                            continue
                        arguments = {(0, "project_directory", selection)}
                    else:
                        if name not in targets:
                            continue
                        arguments = targets[name]
                    for index, keyword, selection in arguments:
                        expr = _folder_arg(node, index, keyword)
                        if expr is None:
                            continue
                        param = function and _parameter(expr, function, local)
                        if param:
                            names = [a.arg for a in function.args.posonlyargs + function.args.args]
                            at = names.index(param) if param in names else -1
                            new.setdefault(function.name, set()).add((at, param, selection))
                            continue
                        folder = sources.one(expr, local, 0)
                        if folder is not None and "*" not in folder:
                            dirs.update(_covered(path.resolve().parent, folder, selection))
        seen |= set(targets)
        targets = {k: v for k, v in new.items() if k not in seen}
        if not targets:
            break
    return frozenset(dirs)


def _covered(base: Path, folder: str, selection: Selection) -> Iterable[Path]:
    """The folder when the call renames all of it (`includes` every file, no `ignores`, the
    default extensions: the tree this module always credited), else the files it selects."""
    resolved = (base / folder).resolve()
    if selection == (None, (), None):
        return [resolved]
    return selected_files(resolved, folder, selection) or [] if resolved.is_dir() else []


def _calls(body: ast.AST, module_level: bool) -> Iterable[ast.Call]:
    """Calls in `body`, not entering nested functions (module level: outside every function)."""
    stack = list(ast.iter_child_nodes(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))
