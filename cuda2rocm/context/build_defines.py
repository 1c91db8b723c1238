"""Macros a project's build defines only for ROCm, only for CUDA, or always; read, never run.

- setup.py and other build scripts (Python, parsed with `ast`): `define_macros` tuples and
  `-DNAME[=value]` strings (`extra_compile_args`, flag lists), each under the `if`s around it.
  An `if` is judged by what it tests on a ROCm build: names and attributes that speak of HIP or
  ROCm (`IS_HIP_EXTENSION`, `torch.version.hip`, `is_rocm_pytorch`, `ROCM_HOME`, and names
  assigned from them) are true, `torch.version.cuda` is None; `not`, `and`, `or`, `is (not)
  None` combine them; anything else is unknown. detectron2's
  `if not is_rocm_pytorch: define_macros += [("WITH_CUDA", None)] else: [("WITH_HIP", None)]`
  gives WITH_CUDA: CUDA only, WITH_HIP: ROCm.
- CMake (`CMakeLists.txt`, `*.cmake`, line-based): `add_definitions(-DX)`,
  `add_compile_definitions(X)`, `target_compile_definitions(t PUBLIC X)` and `-DX` in flag
  variables, under `if()/elseif()/else()` whose condition names HIP/ROCm (true on ROCm) or a
  `USE_CUDA`/`WITH_CUDA`-style build switch (false on ROCm, but only in a project whose CMake
  also tests a HIP/ROCm switch: where `WITH_CUDA` is the project's only GPU switch, as in a
  project not yet ported, a ROCm port turns that same switch on, so it stays unknown). Read
  in the project's context (`_cmake_project_defines`): a file added by `add_subdirectory` only
  on such paths defines only for CUDA, and a definition inside a function or macro takes the
  paths of its calls (ginkgo-like `X_BUILD_CUDA` / `X_BUILD_HIP` trees and test helpers).

A macro defined for ROCm anywhere is defined (with its value when it is a literal); one defined
only on CUDA paths is not defined by the build on ROCm; one under an unknown condition is unknown.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cuda2rocm.context.preprocessor import INF, UNKNOWN, Tri, Val

_HIPPY = re.compile(r"(?i)(?<![a-z])hip(?![a-z]{2})|rocm|(?<![a-z])amd(?![a-z])")
_FLAG = re.compile(r"^-D([A-Za-z_]\w*)(?:=(.*))?$")
_CMAKE_FLAG = re.compile(r"(?<![\w$])-D([A-Za-z_]\w*)(?:=([^\s\")]*))?")
#: `USE_CUDA`, `WITH_CUDA`, and a project's prefixed spelling (`GINKGO_BUILD_CUDA`).
_CUDA_SWITCH = re.compile(r"(?:\b|_)(?:USE|WITH|BUILD|ENABLE)_CUDA\b")
TOKENS = (b"define_macros", b"-D")


@dataclass
class BuildDefines:
    #: name -> defined for ROCm builds (value, citation).
    rocm: dict[str, Val] = field(default_factory=dict)
    #: name -> citation of a definition on a CUDA-only path (not defined for ROCm by the build).
    cuda_only: dict[str, str] = field(default_factory=dict)
    #: Names defined under conditions of unknown value on ROCm.
    unknown: set[str] = field(default_factory=set)
    #: Every macro the ROCm build defines is known (its compilation database): nothing the
    #: sources suggest is defined on top.
    complete: bool = False

    def add(self, name: str, value: str | None, rocm: Tri, where: str) -> None:
        if rocm is False:
            self.cuda_only.setdefault(name, f"`-D{name}` is passed only to CUDA builds ({where})")
            return
        if rocm is None:
            self.unknown.add(name)
            return
        number = _literal(value)
        val = Val(True, number, number) if number is not None else Val(True)
        why = f"`-D{name}` is passed to ROCm builds ({where})"
        old = self.rocm.get(name)
        if old is not None and (old.lo, old.hi) != (val.lo, val.hi):
            val = Val(True)  # two values: defined, value unknown
        self.rocm[name] = Val(True, val.lo, val.hi, why)

    def settle(self) -> BuildDefines:
        """A name both unknown and ROCm-defined stays ROCm-defined; unknown beats CUDA-only."""
        for name in list(self.cuda_only):
            if name in self.rocm or name in self.unknown:
                del self.cuda_only[name]
        self.unknown -= set(self.rocm)
        return self

    def with_cuda_only(
        self,
        inferred: Mapping[str, str],
        rocm: Mapping[str, str] | None = None,
        valued: Iterable[str] = (),
    ) -> BuildDefines:
        """A copy where `inferred` names (macro -> why, `vendor_switches`) are CUDA-only,
        unless the build defines them for ROCm, and `rocm` names (the project's ROCm switches)
        are defined, unless the build passes them only to CUDA builds: the branches a name
        guards say more than a build condition of unknown value, and less than a readable
        one. `valued`: those of `rocm` a HIP arm tests by value (`#if M`), so nonzero."""
        cuda_only = dict(self.cuda_only)
        for name, why in inferred.items():
            if name not in self.rocm:
                cuda_only.setdefault(name, why)
        defined = dict(self.rocm)
        valued = set(valued)
        for name, why in (rocm or {}).items():
            if name not in defined and name not in cuda_only and not self.complete:
                defined[name] = Val(True, 1, INF, why) if name in valued else Val(True, why=why)
        unknown = self.unknown - set(inferred) - set(defined)
        return BuildDefines(defined, cuda_only, unknown, self.complete)

    def facts(self) -> tuple:
        return (
            sorted((n, v.lo, v.hi) for n, v in self.rocm.items()),
            sorted(self.cuda_only),
            sorted(self.unknown),
        )


def _literal(value: str | None) -> int | None:
    if value is None or value == "":
        return 1  # `-DX` and ("X", None) define X as 1
    try:
        return int(value.strip().rstrip("uUlL"), 0)
    except ValueError:
        return None


# -- Python build scripts ----------------------------------------------------------------------
class _Judge:
    """Three-valued "is this test true on a ROCm build?" with names assigned from HIP tests."""

    def __init__(self) -> None:
        self.hip_names: set[str] = set()

    def dotted(self, node: ast.AST) -> str:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return f"{self.dotted(node.value)}.{node.attr}"
        if isinstance(node, ast.Call):
            return self.dotted(node.func)
        return ""

    def value(self, node: ast.AST) -> Tri:
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.value(node.operand)
            return None if inner is None else not inner
        if isinstance(node, ast.BoolOp):
            values = [self.value(v) for v in node.values]
            if isinstance(node.op, ast.And):
                return False if False in values else True if all(values) else None
            return True if True in values else False if all(v is False for v in values) else None
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right, op = node.left, node.comparators[0], node.ops[0]
            if isinstance(right, ast.Constant) and right.value is None:
                inner = self.value(left)
                if inner is None:
                    return None
                return inner if isinstance(op, ast.IsNot) else not inner
            if isinstance(right, ast.Constant) and isinstance(right.value, str):
                said = _HIPPY.search(right.value) is not None
                if isinstance(op, (ast.Eq, ast.NotEq)) and said:
                    return isinstance(op, ast.Eq)
            return None
        name = self.dotted(node)
        if not name:
            return None
        if name == "torch.version.cuda":
            return False  # None on ROCm
        if name in self.hip_names or _HIPPY.search(name.split(".")[-1]):
            return True
        return None

    def learn(self, stmt: ast.stmt) -> None:
        """`IS_ROCM = torch.version.hip is not None` makes IS_ROCM a HIP test."""
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name) and self.value(stmt.value) is True:
                self.hip_names.add(target.id)


def _and(path: list[Tri]) -> Tri:
    """Value on ROCm of a path of nested conditions (outermost first). Unknown conditions
    around a ROCm test are taken as "the GPU build happens" (detectron2's
    `if torch.cuda.is_available() ...:` around `if is_rocm_pytorch:`); unknown ones inside it
    (`if(USE_ROCBLAS)`, an option) keep the definition unknown."""
    if False in path:
        return False
    if not path:
        return True
    last = max((i for i, v in enumerate(path) if v is True), default=-1)
    return True if last >= 0 and all(v is True for v in path[last:]) else None


def python_defines(text: str, where: str, out: BuildDefines) -> None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    judge = _Judge()

    def visit(body: Iterable[ast.stmt], path: list[Tri]) -> None:
        for stmt in body:
            judge.learn(stmt)
            if isinstance(stmt, ast.If):
                test = judge.value(stmt.test)
                visit(stmt.body, [*path, test])
                visit(stmt.orelse, [*path, None if test is None else not test])
                continue
            nested = [
                getattr(stmt, a)
                for a in ("body", "orelse", "finalbody", "handlers")
                if isinstance(getattr(stmt, a, None), list)
            ]
            if nested:
                for block in nested:
                    items = block
                    if block and isinstance(block[0], ast.ExceptHandler):
                        items = [s for h in block for s in h.body]
                    visit(items, path)
                heads = [getattr(stmt, a) for a in ("test", "iter", "items") if hasattr(stmt, a)]
                _collect(heads, path, judge, where, out)
                continue
            _collect([stmt], path, judge, where, out)

    visit(tree.body, [])


def _collect(nodes, path: list[Tri], judge: _Judge, where: str, out: BuildDefines) -> None:
    for root in nodes:
        if root is None:
            continue
        macros_context = "macro" in ast.dump(root).lower() if isinstance(root, ast.AST) else False
        stack: list[tuple[ast.AST, list[Tri]]] = [(root, path)] if isinstance(root, ast.AST) else []
        while stack:
            node, here = stack.pop()
            if isinstance(node, ast.IfExp):
                test = judge.value(node.test)
                stack.append((node.body, [*here, test]))
                stack.append((node.orelse, [*here, None if test is None else not test]))
                stack.append((node.test, here))
                continue
            line = f"{where}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                m = _FLAG.match(node.value.strip())
                if m:
                    out.add(m.group(1), m.group(2), _and(here), line)
            elif (
                macros_context
                and isinstance(node, ast.Tuple)
                and len(node.elts) == 2
                and isinstance(node.elts[0], ast.Constant)
                and isinstance(node.elts[0].value, str)
                and re.fullmatch(r"[A-Za-z_]\w*", node.elts[0].value)
                and isinstance(node.elts[1], ast.Constant)
                and (node.elts[1].value is None or isinstance(node.elts[1].value, str))
            ):
                out.add(node.elts[0].value, node.elts[1].value, _and(here), line)
                continue
            stack.extend((c, here) for c in ast.iter_child_nodes(node))


# -- CMake -------------------------------------------------------------------------------------
_CMAKE_COMMAND = re.compile(r"^\s*(\w+)\s*\((.*)$")
_CMAKE_IF = re.compile(rb"(?im)^\s*(?:else)?if\s*\(([^)]*)\)")
_DEFINITIONS = {"add_compile_definitions", "target_compile_definitions"}


def _cmake_value(
    condition: str, cuda_switch_known: bool = True, off: Mapping[str, str] | None = None
) -> Tri:
    negated = bool(re.match(r"\s*NOT\b", condition))
    body = re.sub(r"^\s*NOT\b", "", condition)
    if re.search(r"\b(AND|OR)\b", body):
        return None
    if off and body.replace("${", "").replace("}", "").strip() in off:
        value: Tri = False  # an option a ROCm build cannot turn on (nvidia_options)
    elif _HIPPY.search(body):
        value = True
    elif _CUDA_SWITCH.search(body) and cuda_switch_known:
        value = False
    else:
        return None
    return (not value) if negated else value


@dataclass
class _CMakeScan:
    """What one CMake file says about definitions, read line by line: definitions, the
    sub-directories it adds and the commands it calls, each with the path of conditions
    around it and the function/macro body it sits in ("" at file level)."""

    definitions: list[tuple[str, str | None, list[Tri], str, str]] = field(default_factory=list)
    subdirectories: list[tuple[str, list[Tri], str]] = field(default_factory=list)
    calls: list[tuple[str, list[Tri], str]] = field(default_factory=list)
    functions: set[str] = field(default_factory=set)


_BODY_OPEN = {"function", "macro"}
_BODY_CLOSE = {"endfunction", "endmacro"}


def _scan_cmake(
    text: str, where: str, cuda_switch_known: bool = True, off: Mapping[str, str] | None = None
) -> _CMakeScan:
    off = off or {}
    scan = _CMakeScan()
    stack: list[tuple[Tri, Tri]] = []  # (value of the current branch, any earlier taken)
    because: list[str] = []  # per open if(): why its branch is off on ROCm ("" if not so)
    body = ""  # the function/macro whose body this is
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i].split("#", 1)[0]
        lineno = i + 1
        i += 1
        m = _CMAKE_COMMAND.match(raw)
        if m is None:
            continue
        command, args = m.group(1).lower(), m.group(2)
        while args.count("(") + 1 > args.count(")") and i < len(lines):  # multi-line call
            args += " " + lines[i].split("#", 1)[0]
            i += 1
        inner = args.rsplit(")", 1)[0]
        if command == "if":
            v = _cmake_value(inner, cuda_switch_known, off)
            stack.append((v, v))
            name = inner.replace("${", "").replace("}", "").strip()
            because.append(off[name] if v is False and name in off else "")
        elif command == "elseif" and stack:
            _, taken = stack[-1]
            v = _cmake_value(inner, cuda_switch_known, off)
            branch = False if taken is True else v
            stack[-1] = (branch, True if True in (taken, v) else None)
            because[-1] = ""
        elif command == "else" and stack:
            _, taken = stack[-1]
            stack[-1] = (None if taken is None else not taken, True)
            because[-1] = ""
        elif command == "endif" and stack:
            stack.pop()
            because.pop()
        elif command in _BODY_OPEN and not body:
            words = inner.split()
            body = words[0].lower() if words else ""
            scan.functions.add(body)
        elif command in _BODY_CLOSE:
            body = ""
        else:
            path = [s[0] for s in stack]
            if command == "add_subdirectory":
                words = inner.replace('"', " ").split()
                if words:
                    scan.subdirectories.append((words[0], path, body))
            elif command not in _DEFINITIONS and command not in ("add_definitions", "set"):
                scan.calls.append((command, path, body))
            names: list[tuple[str, str | None]] = [
                (f.group(1), f.group(2)) for f in _CMAKE_FLAG.finditer(inner)
            ]
            if command in _DEFINITIONS:
                words = inner.replace('"', " ").split()
                if command == "target_compile_definitions":
                    words = words[1:]
                for w in words:
                    if w in ("PUBLIC", "PRIVATE", "INTERFACE") or w.startswith("-D"):
                        continue
                    mm = re.fullmatch(r"([A-Za-z_]\w*)(?:=(.*))?", w)
                    if mm:
                        names.append((mm.group(1), mm.group(2)))
            why = next((b for b in because if b), "")
            place = f"{where}:{lineno}" + (f"; {why}" if why else "")
            for name, value in names:
                scan.definitions.append((name, value, path, place, body))
    return scan


def cmake_defines(
    text: str,
    where: str,
    out: BuildDefines,
    cuda_switch_known: bool = True,
    off: Mapping[str, str] | None = None,
) -> None:
    """One CMake file on its own: `cuda_switch_known`: whether a `WITH_CUDA`-style switch is
    known off on ROCm (the project has a separate HIP/ROCm switch). `off`: options a ROCm build
    cannot turn on -> why (`nvidia_options`); a definition in their branch is CUDA-only, and
    says why. A definition in a function or macro body runs where it is called, which one file
    does not say: unknown (`index` follows the calls)."""
    scan = _scan_cmake(text, where, cuda_switch_known, off)
    for name, value, path, place, body in scan.definitions:
        out.add(name, value, None if body else _and(path), place)


def _any(values: Iterable[Tri]) -> Tri:
    """Three-valued OR: some path true, or all false."""
    values = list(values)
    if True in values:
        return True
    return False if values and all(v is False for v in values) else None


def _context(*values: Tri) -> list[Tri]:
    """The enclosing contexts of a command (its file's, its function's) as path elements: a
    context known to run adds no condition."""
    return [v for v in values if v is not True]


def _cmake_project_defines(scans: dict[Path, _CMakeScan], out: BuildDefines) -> None:
    """Definitions of the run's CMake files in their project context: a file a parent adds
    with `add_subdirectory` only on paths false on ROCm (`if(X_BUILD_CUDA)` beside
    `if(X_BUILD_HIP)`) runs only on CUDA configures, and what it defines is CUDA-only; a
    definition inside a function or macro takes the value of the paths its calls sit on
    (every call on a CUDA-only path: CUDA-only; one on a ROCm path: ROCm). A file nobody adds
    runs as configured (a project's top-level file; a `.cmake` module, whose functions are
    what it adds). Unknown stays unknown."""
    folder_of = {path.resolve().parent: path for path in scans if path.name == "CMakeLists.txt"}
    inherited: dict[Path, Tri] = {}
    adds: dict[Path, list[tuple[Path, list[Tri], str]]] = {}
    for path, scan in scans.items():
        for word, path_values, body in scan.subdirectories:
            if "${" in word:
                continue
            target = (path.resolve().parent / word).resolve()
            if target in folder_of:
                adds.setdefault(folder_of[target], []).append((path, path_values, body))
    functions: dict[str, Tri] = {}
    callers: dict[str, list[tuple[Path, list[Tri], str]]] = {}
    for path, scan in scans.items():
        for name, path_values, body in scan.calls:
            callers.setdefault(name, []).append((path, path_values, body))
    defined = {f for scan in scans.values() for f in scan.functions}

    def file_value(path: Path, seen: frozenset = frozenset()) -> Tri:
        if path in inherited:
            return inherited[path]
        if path not in adds or path in seen:
            return True
        value = _any(
            _and([*_context(file_value(p, seen | {path}), body_value(b, seen | {path})), *pv])
            for p, pv, b in adds[path]
        )
        inherited[path] = value
        return value

    def body_value(name: str, seen: frozenset = frozenset()) -> Tri:
        if not name:
            return True
        if name in functions:
            return functions[name]
        if name in seen:
            return None
        sites = callers.get(name, [])
        value = (
            _any(
                _and([*_context(file_value(p, seen | {name}), body_value(b, seen | {name})), *pv])
                for p, pv, b in sites
            )
            if sites
            else False
        )
        functions[name] = value
        return value

    for path, scan in scans.items():
        for name, value, path_values, place, body in scan.definitions:
            if body and body in defined and not callers.get(body):
                continue  # a function nobody calls defines nothing
            # True here is "no constraint", not a ROCm test: only what is not known true
            # joins the path (an unknown context stays unknown).
            start = _context(file_value(path), body_value(body))
            out.add(name, value, _and([*start, *path_values]), place)


class _Adds:
    """What `python_defines` adds, in order (replayed into the run's `BuildDefines`)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def add(self, name: str, value: str | None, rocm: Tri, where: str) -> None:
        self.calls.append((name, value, rocm, where))


def _python_adds(text: str, where: str) -> tuple[tuple, ...]:
    adds = _Adds()
    python_defines(text, where, adds)  # type: ignore[arg-type]
    return tuple(adds.calls)


def index(
    files: Iterable[tuple[Path, str, bytes]],
    off: Mapping[str, str] | None = None,
    memo=None,
    cmake: Iterable[tuple[Path, str, bytes]] = (),
) -> BuildDefines:
    """Build flags from (path, display path, bytes) of the run's build scripts. `off`: options
    a ROCm build cannot turn on (`nvidia_options.options`; computed from `files` if None).
    `memo` (warm.FactsMemo): what each Python build file defines is kept per file. `cmake`:
    the run's other CMake files (those that define nothing still add sub-directories and call
    the functions that do)."""
    from cuda2rocm.cache import content_hash

    out = BuildDefines()
    files = list(files)
    cmake = [f for f in cmake if f[0].name == "CMakeLists.txt" or f[0].name.endswith(".cmake")]
    if off is None:
        from cuda2rocm.context import nvidia_options

        off = nvidia_options.options(files)
    rocm_switch = any(
        _HIPPY.search(m.group(1).decode("utf-8", "replace"))
        for path, _, data in [*files, *cmake]
        if path.name == "CMakeLists.txt" or path.name.endswith(".cmake")
        for m in _CMAKE_IF.finditer(data)
    )
    for path, display, data in files:
        if path.name.endswith(".py") and (
            b"define_macros" in data or b'"-D' in data or b"'-D" in data
        ):
            text = data.decode("utf-8", "replace")
            if memo is None:
                python_defines(text, display, out)
                continue
            key = (display, content_hash(data))
            adds = memo.per_file(
                "python-defines", key, lambda t=text, d=display: _python_adds(t, d)
            )
            for call in adds:
                out.add(*call)
    scans = {
        path: _scan_cmake(data.decode("utf-8", "replace"), display, rocm_switch, off)
        for path, display, data in [*files, *cmake]
        if path.name == "CMakeLists.txt" or path.name.endswith(".cmake")
    }
    if scans:
        _cmake_project_defines(scans, out)
    return out.settle()


__all__ = ["UNKNOWN", "BuildDefines", "cmake_defines", "index", "python_defines"]
