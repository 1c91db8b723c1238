"""Which C++/CUDA sources torch's `cpp_extension` builds (and so hipifies on ROCm).

A source includes `torch/extension.h`, `ATen/...` or `c10/...` (decided per file by the C++
front-end), or it sits in a folder whose sources a scanned Python file hands to `CUDAExtension`,
`CppExtension` or `load(sources=...)` — headers beside them included, since hipify rewrites the
whole extension tree. The Python files are parsed with the standard library, never run.
"""

from __future__ import annotations

import ast
import functools
import os
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


_JOIN = {"os.path.join", "path.join", "join"}
_GLOB = {"glob.glob", "glob", "glob.iglob", "iglob"}
_HERE = {"os.path.dirname", "path.dirname", "dirname"}
_WILDCARD = re.compile(r"[*?\[]")


class _Sources:
    """Source path strings an expression may hold, read statically: string constants, lists,
    `+`, `os.path.join` of evaluable parts, `glob.glob(pattern)` (the pattern itself, resolved
    by `torch_built_dirs`), `os.path.dirname(os.path.abspath(__file__))` and `Path(__file__)
    .parent` (the script's folder, "."), and names bound in the module or the enclosing
    function (every binding and `+=`: sources are assembled step by step). Anything else is
    unknown and yields nothing."""

    def __init__(self, tree: ast.Module) -> None:
        self.module = _bindings(tree.body)
        #: module-level functions by name: `params = get_build_parameters()` then
        #: `load(sources=params.sources)` reads the record the function returns.
        self.functions = {
            n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.visiting: set[str] = set()
        self.scopes: dict[int, dict[str, list[ast.AST]]] = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local = _bindings(node.body)
                for child in ast.walk(node):
                    self.scopes.setdefault(id(child), local)

    def strings(self, node: ast.AST, scope: dict, depth: int = 0) -> list[str]:
        if depth > 12:
            return []
        if isinstance(node, ast.Name):
            if node.id in self.visiting:  # `sources = [main] + sources`: its other bindings
                return []
            values = scope.get(node.id) or self.module.get(node.id) or []
            out = []
            self.visiting.add(node.id)
            try:
                for value in values:
                    out += self.strings(value, scope, depth + 1)
            finally:
                self.visiting.discard(node.id)
            return out
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return self._record_field(node, scope, depth)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [x for e in node.elts for x in self.strings(e, scope, depth + 1)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.strings(node.left, scope, depth + 1) + self.strings(
                node.right, scope, depth + 1
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path / "part"
            parts = [self.one(node.left, scope, depth + 1), self.one(node.right, scope, depth + 1)]
            if all(p is not None for p in parts):
                return ["/".join(p for p in parts if p != ".") or "."]
            return []
        if self.here(node):
            return ["."]
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            above = self.one(node.value, scope, depth + 1)
            return [] if above is None else [f"{above}/.." if above != "." else ".."]
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("resolve", "absolute")
            and not node.args
        ):
            return self.strings(node.func.value, scope, depth + 1)
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in _GLOB and node.args:
                return self.strings(node.args[0], scope, depth + 1)
            if name in _JOIN or name not in _HERE:
                # os.path.join("csrc", "x.cu") and the like: every part must be known
                parts = [self.one(a, scope, depth + 1) for a in node.args]
                if parts and all(p is not None for p in parts):
                    return ["/".join(p for p in parts if p != ".") or "."]
                return []
        if self.here(node):
            return ["."]
        return []

    def _record_field(self, node: ast.Attribute, scope: dict, depth: int) -> list[str]:
        """`params.sources` where `params = make()` and the module's `make` returns
        `SimpleNamespace(sources=..., ...)` (or `dict(...)`): that keyword's value, read in the
        function's own scope. Any other shape is unknown."""
        name = node.value.id  # type: ignore[attr-defined]
        out: list[str] = []
        for value in scope.get(name) or self.module.get(name) or []:
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
                continue
            function = self.functions.get(value.func.id)
            if function is None or function.name in self.visiting:
                continue
            self.visiting.add(function.name)
            try:
                for ret in ast.walk(function):
                    record = ret.value if isinstance(ret, ast.Return) else None
                    if not (
                        isinstance(record, ast.Call)
                        and ast.unparse(record.func).split(".")[-1] in ("SimpleNamespace", "dict")
                    ):
                        continue
                    for kw in record.keywords:
                        if kw.arg == node.attr:
                            inner = self.scopes.get(id(kw.value), {})
                            out += self.strings(kw.value, inner, depth + 1)
            finally:
                self.visiting.discard(function.name)
        return out

    def one(self, node: ast.AST, scope: dict, depth: int) -> str | None:
        found = self.strings(node, scope, depth)
        return found[0] if len(found) == 1 else None

    @staticmethod
    def here(node: ast.AST) -> bool:
        """The script's own folder: `os.path.dirname(os.path.abspath(__file__))`,
        `os.path.dirname(__file__)`, `Path(__file__).parent` (`.resolve()` / `.absolute()`)."""
        text = ast.unparse(node).replace("os.path.", "").replace("path.", "")
        text = text.replace("pathlib.", "")
        for form in (
            "dirname(abspath(__file__))",
            "dirname(realpath(__file__))",
            "dirname(__file__)",
        ):
            if text == form:
                return True
        text = text.replace(".resolve()", "").replace(".absolute()", "")
        return text == "Path(__file__).parent"


def _bindings(body: list[ast.stmt]) -> dict[str, list[ast.AST]]:
    """name -> every value assigned (`=`, `+=`, `.extend(...)`/`.append(...)` arguments) in
    `body`, not entering nested functions."""
    found: dict[str, list[ast.AST]] = {}
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                found.setdefault(target.id, []).append(node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            if node.value is not None:  # `x: T` alone binds nothing
                found.setdefault(node.target.id, []).append(node.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("extend", "append")
            and isinstance(node.func.value, ast.Name)
            and node.args
        ):
            found.setdefault(node.func.value.id, []).append(node.args[0])
        stack.extend(ast.iter_child_nodes(node))
    return found


def extension_sources(text: str, files: list[str] | None = None) -> list[str]:
    """Source paths named in extension builders of one Python file (as written; a glob
    pattern stays a pattern). `files` receives the sources of a `load()` that cannot be
    followed (the module's spelled-out source paths): torch hipifies those files, not what
    lies beside them."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    sources = _Sources(tree)
    found: list[str] = []
    unresolved = load_unresolved = False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        scope = sources.scopes.get(id(node), {})
        if name not in BUILDERS and not _builder_alias(func, scope, sources.module):
            continue
        values = [kw.value for kw in node.keywords if kw.arg == "sources"]
        values += node.args[1:2]  # CUDAExtension(name, sources) / load(name, sources)
        named = [x for value in values for x in sources.strings(value, scope)]
        if values and not named and name != "load":
            # setup-time builders only: their hipify covers every header under the setup.py
            # folder that a source quote-includes (cpp_extension.CUDAExtension passes includes=
            # [build_dir/*]; hipify_python's mk_repl hipifies those headers recursively), so the
            # sources' folders stand for their headers. load() hipifies only its sources and
            # the headers of extra_include_paths (all_files): a folder claim would hide headers
            # it leaves alone.
            unresolved = True
        load_unresolved |= bool(values) and not named and name == "load"
        if name == "load" and files is not None:
            # load() hipifies exactly these files (hipify_extra_files_only=True); a header beside
            # them is hipified only if it lies under extra_include_paths (mk_repl follows a
            # quoted include only to a file in all_files), so the files, not their folders.
            files += named
        else:
            found += named
        if name == "load":
            # load() hipifies every header under extra_include_paths (hipify_python.hipify adds
            # them to all_files and preprocesses all_files; torch/utils/cpp_extension.py
            # _jit_compile passes header_include_dirs=extra_include_paths)
            for kw in node.keywords:
                if kw.arg == "extra_include_paths":
                    found += [x.rstrip("/") + "/*" for x in sources.strings(kw.value, scope)]
    if unresolved:
        found += _source_literals(tree, sources)
    elif load_unresolved and files is not None:
        files += _source_literals(tree, sources)
    return found


_SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")


def _source_literals(tree: ast.Module, sources: _Sources) -> list[str]:
    """A setup-time builder's `sources` that cannot be followed (`CUDAExtension(sources=
    params.sources)` with the list built in another function and returned in a namespace): the
    C++/CUDA source paths the module spells out anywhere (literals, `os.path.join` of evaluable
    parts; no glob pattern, whose folder is not known here), since a module that builds an
    extension names its sources for that build."""
    found = []
    parts = {id(a) for n in ast.walk(tree) if isinstance(n, ast.Call) for a in n.args}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in parts:
                continue  # a part of a call (`join(unknown, "x.cu")`): only the whole counts
            candidates = [node.value]
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in _JOIN:
            candidates = sources.strings(node, sources.scopes.get(id(node), {}))
        else:
            continue
        found += [
            c
            for c in candidates
            if c.endswith(_SOURCE_SUFFIXES) and "\n" not in c and not _WILDCARD.search(c)
        ]
    return found


def _builder_alias(func: ast.AST, scope: dict, module: dict, depth: int = 0) -> bool:
    """A callee that is an extension builder whichever value it holds: a name every binding of
    which is one (`extension = CppExtension` ... `extension = CUDAExtension`), a conditional
    expression both of whose sides are (`(CUDAExtension if cuda else CppExtension)(...)`, or
    bound to a name), or such a name again (`Ext = extension`)."""
    if depth > 8:
        return False
    if isinstance(func, ast.IfExp):
        return all(_is_builder(side, scope, module, depth + 1) for side in (func.body, func.orelse))
    if not isinstance(func, ast.Name):
        return False
    values = scope.get(func.id) or module.get(func.id) or []
    return bool(values) and all(_is_builder(v, scope, module, depth + 1) for v in values)


def _is_builder(value: ast.AST, scope: dict, module: dict, depth: int) -> bool:
    """`value` is a builder: its dotted name ends in one, or it is an alias of one."""
    if (
        isinstance(value, (ast.Name, ast.Attribute))
        and ast.unparse(value).split(".")[-1] in BUILDERS
    ):
        return True
    return _builder_alias(value, scope, module, depth)


def _sources_and_files(data: bytes) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`extension_sources` of one file's bytes, and the files it names."""
    files: list[str] = []
    sources = extension_sources(data.decode("utf-8", "replace"), files)
    return tuple(sources), tuple(files)


def torch_built_dirs(python_files: Iterable[tuple[Path, bytes]], memo=None) -> frozenset[Path]:
    """Folders (resolved) holding sources of torch-built extensions; for a glob pattern
    (`csrc/**/*.cu`), the folder above its first wildcard. `memo` (warm.FactsMemo): what
    each file names is kept per file, by content."""
    from cuda2rocm.cache import content_hash

    dirs: set[Path] = set()
    for path, data in python_files:
        if TOKEN not in data:
            continue
        if memo is not None:
            named, files = memo.per_file(
                "extension-sources",
                (content_hash(data),),
                lambda data=data: _sources_and_files(data),
            )
        else:
            named, files = _sources_and_files(data)
        base = path.resolve().parent
        for source in named:
            parts = Path(source).parts
            cut = next((i for i, part in enumerate(parts) if _WILDCARD.search(part)), None)
            if cut is None:
                dirs.add((base / source).resolve().parent)
            elif cut > 0 or Path(source).is_absolute():
                dirs.add((base / Path(*parts[:cut])).resolve())
        # a file: is_torch_built matches itself; only one that exists (a bare literal may be
        # joined onto another folder in code not followed here)
        dirs.update(f for f in ((base / f).resolve() for f in files) if f.is_file())
    return frozenset(dirs)


def is_torch_built(path: str, dirs: frozenset[Path]) -> bool:
    if not dirs:
        return False
    resolved = resolved_path(path)
    # Folders and single files: the path or one of its folders is listed.
    return resolved in dirs or any(folder in dirs for folder in resolved.parents)


@functools.lru_cache(maxsize=1 << 16)
def resolved_path(path: str) -> Path:
    """`Path(path).resolve()`, once per path and run (a file's cache key, its macros and its
    lint each ask; `runner.prepare` clears it, so a symlink changed between runs is seen).
    A file that is not a symlink resolves to its folder's resolved path and its own name:
    each folder is resolved once."""
    name = os.path.basename(path)
    if name not in ("", ".", "..") and not os.path.islink(path):
        return Path(_resolved_folder(os.path.dirname(path) or "."), name)
    return Path(path).resolve()


def resolved_parent(path: str) -> str:
    """`str(Path(path).resolve().parent)`, through the folder cache of `resolved_path`."""
    name = os.path.basename(path)
    if name not in ("", ".", "..") and not os.path.islink(path):
        return _resolved_folder(os.path.dirname(path) or ".")
    return str(Path(path).resolve().parent)


@functools.lru_cache(maxsize=1 << 14)
def _resolved_folder(folder: str) -> str:
    return str(Path(folder).resolve())


def clear_resolved() -> None:
    """Forget the paths resolved so far (a new run)."""
    resolved_path.cache_clear()
    _resolved_folder.cache_clear()


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
_HIPIFY_TOOL = re.compile(rb"(?m)^[^#\n]*\bhipify-(?:perl|clang)\b")
_SCRIPT_CALL = re.compile(rb"(?i)\b(?:execute_process|add_custom_command|add_custom_target)\b")


_CMAKE_SET = re.compile(rb"(?im)^[ \t]*set[ \t]*\([ \t]*(\w+)[ \t]+([^)]*)\)")
_CMAKE_VAR = re.compile(rb"\$\{(\w+)\}")
_CMAKE_PROJECT = re.compile(rb"(?im)^[ \t]*project[ \t]*\(")


def _project_dir(here: Path) -> Path | None:
    """`PROJECT_SOURCE_DIR` of a CMake file in `here`: the nearest folder at or above it whose
    CMakeLists.txt calls `project()` (a subdirectory without one inherits its parent's)."""
    for folder in (here, *here.parents):
        try:
            if _CMAKE_PROJECT.search((folder / "CMakeLists.txt").read_bytes()):
                return folder
        except OSError:
            continue
    return None


def _cmake_variables(path: Path, data: bytes) -> dict[bytes, bytes | None]:
    """The folder variables a CMake file can name, as paths: the standard current-folder ones,
    `PROJECT_SOURCE_DIR`, and the file's own single-valued `set(var value)`; a variable set to
    two different values (or to a list) is None: unknown."""
    here = path.resolve().parent
    known: dict[bytes, bytes | None] = {
        b"CMAKE_CURRENT_SOURCE_DIR": str(here).encode(),
        b"CMAKE_CURRENT_LIST_DIR": str(here).encode(),
    }
    project = _project_dir(here)
    if project is not None:
        known[b"PROJECT_SOURCE_DIR"] = str(project).encode()
    for match in _CMAKE_SET.finditer(data):
        name, values = match.group(1), match.group(2).split()
        value = values[0].strip(b'"') if len(values) == 1 else None
        if name in known and known[name] != value:
            value = None  # set twice to different values, or a list: unknown
        known[name] = value
    return known


def _cmake_expand(value: bytes, known: dict[bytes, bytes | None], depth: int = 0) -> bytes | None:
    """`value` with its `${var}` references replaced; None when one is unknown."""
    unknown = False

    def substitute(match: re.Match[bytes]) -> bytes:
        nonlocal unknown
        found = known.get(match.group(1))
        if found is None or depth > 8:
            unknown = True
            return b""
        expanded = _cmake_expand(found, known, depth + 1)
        if expanded is None:
            unknown = True
            return b""
        return expanded

    out = _CMAKE_VAR.sub(substitute, value)
    return None if unknown else out


def _cmake_hipify_dirs(path: Path, data: bytes) -> Iterator[Path]:
    here = path.resolve().parent
    known: dict[bytes, bytes | None] | None = None
    for call in _CMAKE_HIPIFY.finditer(data):
        match = _SOURCE_DIR.search(call.group(1))
        if match is None:
            continue
        value: bytes | None = match.group(1)
        if b"${" in value:
            known = known if known is not None else _cmake_variables(path, data)
            value = _cmake_expand(value, known)
            if value is None:
                continue  # a variable we cannot resolve: claim nothing
        yield (here / value.decode("utf-8", "replace")).resolve()


def hipified_dirs(files: Iterable[tuple[Path, str, bytes]]) -> frozenset[Path]:
    """Folders (resolved) that the project's own build hipifies, from (path, language, bytes) of
    the run's CMake and shell files: a CMake `hipify(CUDA_SOURCE_DIR <dir>)` call, or a shell
    script that runs hipify-perl/hipify-clang and that a CMake file runs (its own folder)."""
    dirs: set[Path] = set()
    scripts: dict[bytes, tuple[Path, bytes]] = {}
    cmake: list[bytes] = []
    for path, language, data in files:
        if language == "cmake" and b"hipify" in data.lower():
            dirs.update(_cmake_hipify_dirs(path, data))
            cmake.append(data)
        elif language == "shell" and _HIPIFY_TOOL.search(data):
            scripts[path.name.encode()] = (path, data)
    for name, (script, data) in scripts.items():
        if any(name in text and _SCRIPT_CALL.search(text) for text in cmake):
            dirs.add(script.resolve().parent)
            dirs.update(_script_targets(script, data))
    return frozenset(dirs)


_SH_FUNCTION = re.compile(rb"(?m)^[ \t]*(?:function[ \t]+)?(\w+)[ \t]*\(\)[ \t]*\n?\s*\{")
_SH_ASSIGN = re.compile(rb"(?m)^[ \t]*(\w+)=([^\s\n][^\n]*?)[ \t]*$")
_SH_HERE = re.compile(rb'\$\(\s*dirname\s+"?\$(?:\{BASH_SOURCE\[0\]\}|0|\{0\})"?\s*\)')
_SH_FIND = re.compile(rb"\bfind[ \t]+\./([\w.-]+)")


def _function_body(data: bytes, start: int) -> bytes:
    """The braces-balanced body from the `{` before `start`."""
    depth, i = 0, data.rindex(b"{", 0, start)
    for j in range(i, len(data)):
        depth += {123: 1, 125: -1}.get(data[j], 0)
        if depth == 0:
            return data[i : j + 1]
    return data[i:]


def _script_targets(script: Path, data: bytes) -> Iterator[Path]:
    """Folders a hipify script hands to its own hipify function: faiss/gpu/hipify.sh defines
    `hipify_dir()` (which `cd`s into `$1` and runs hipify-perl over what `find ./gpu` lists)
    and calls it as `hipify_dir $dir_name` with `dir_name=$(dirname "${BASH_SOURCE[0]}")/..`.
    An argument is resolved from the script's folder and plain `name=value` lines (a name
    assigned twice takes the value last assigned before the call); anything else claims
    nothing. When the function runs `find ./<sub>` and `<sub>` is a folder of the target, the
    target's `<sub>` is what it hipifies, else the target itself."""
    here = str(script.resolve().parent).encode()
    for match in _SH_FUNCTION.finditer(data):
        body = _function_body(data, match.end())
        if not _HIPIFY_TOOL.search(body):
            continue
        subs = set(_SH_FIND.findall(body))
        after = match.start() + len(body)
        for call in re.finditer(rb"(?m)^[ \t]*" + match.group(1) + rb"[ \t]+(\S+)", data[after:]):
            where = after + call.start()
            value: bytes | None = call.group(1).strip(b'"')
            for name in re.findall(rb"\$\{?(\w+)\}?", value):
                values = [
                    m.group(2) for m in _SH_ASSIGN.finditer(data, 0, where) if m.group(1) == name
                ]
                if not values:
                    value = None
                    break
                value = re.sub(rb"\$\{?" + name + rb"\}?(?!\w)", values[-1].strip(b'"'), value)
            if value is None:
                continue
            value = _SH_HERE.sub(here, value)
            if b"$" in value or b"`" in value:
                continue  # something we cannot evaluate: claim nothing
            target = (script.resolve().parent / value.decode("utf-8", "replace")).resolve()
            inner = [target / sub.decode() for sub in subs if (target / sub.decode()).is_dir()]
            yield from (inner or [target])
