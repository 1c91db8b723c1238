"""Project functions and classes that hand their arguments to torch's extension builders.

A *builder wrapper* is a function whose parameter, or a class whose `__init__` parameter (kept
as `self.x`, or a dataclass field), flows unchanged into `sources=` / `extra_include_paths=` /
`include_dirs=` of a torch builder (`load`, `load_inline`, `CUDAExtension`, `CppExtension`):
torch's hipify then runs on what its callers pass (torch 2.13 torch/utils/cpp_extension.py:
`load()` hipifies `sources` and the headers under `extra_include_paths`). "Unchanged" is the
value itself, `str()`/`Path()`/`list()` of it, calling it (`sources=lambda: [...]`), a
comprehension over it, `+` of lists, a dict passed as `**kwargs`, a helper that returns its
argument so; a value derived otherwise (`join(root, "x.cu")`) is not the caller's path. A
wrapper's parameter passed on to another wrapper makes that one a wrapper too (a bounded
fixpoint over the run's files, callees resolved through imports). Every call of a wrapper is
then a builder call whose arguments at those parameters name torch-built files; they are read
with build_context's static reader, and what cannot be read credits nothing.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cuda2rocm.build_context import TOKEN, _Sources

#: The builders and, per keyword (or positional index), the role its value has for hipify.
_ROLES: dict[str, dict[str | int, str]] = {
    "load": {"sources": "sources", 1: "sources", "extra_include_paths": "include"},
    "load_inline": {"extra_include_paths": "include"},
    "CUDAExtension": {"sources": "sources", 1: "sources", "include_dirs": "include"},
    "CppExtension": {"sources": "sources", 1: "sources", "include_dirs": "include"},
    "SyclExtension": {"sources": "sources", 1: "sources", "include_dirs": "include"},
}
#: Calls whose result carries their first argument's paths (one path or a list of them).
_KEEPS = {
    "str", "list", "tuple", "sorted", "set", "iter", "Path", "pathlib.Path", "PurePath",
    "os.fspath", "fspath", "os.path.abspath", "os.path.realpath", "os.path.normpath",
    "os.path.expanduser", "abspath", "realpath", "normpath", "expanduser",
}  # fmt: skip
_KEEPS_METHOD = {"resolve", "absolute", "expanduser", "as_posix", "copy"}
_ROUNDS = 6
_DEPTH = 10


@dataclass(frozen=True)
class Wrapper:
    """One wrapper's signature: its parameters in order (a class: `__init__`'s without `self`,
    or its dataclass fields), and by keyword name the (builder, role) each one feeds."""

    params: tuple[str, ...]
    feeds: tuple[tuple[str, str, str], ...]  # (keyword, builder, role)

    def roles(self, slot: int | str) -> set[tuple[str, str]]:
        name = self.params[slot] if isinstance(slot, int) and slot < len(self.params) else slot
        return {(b, r) for k, b, r in self.feeds if k == name}


# -- one file: the definitions and where their parameters go ----------------------------------


@dataclass(frozen=True)
class Summary:
    """What one file says, as plain data (kept per file by content): `defs` maps a top-level
    function or class to (params, sinks), a sink being (param, callee, slot): `callee` is a
    builder's name or the dotted name of a call the file makes; `imports` maps a local name to
    (module, level, attribute or "")."""

    defs: tuple[tuple[str, tuple[str, ...], tuple[tuple[str, str, str | int], ...]], ...]
    imports: tuple[tuple[str, str, int, str], ...]
    builders: tuple[tuple[str, str], ...]  # callee as written -> torch builder it is


def summarize(text: str) -> Summary | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    imports = tuple(_imports(tree))
    helpers = _Helpers(tree, _builder_names(imports))
    defs = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params, star = _params(node.args)
            flow = _Flow(helpers, {p: {p} for p in params} | ({star: {"**"}} if star else {}))
            sinks = flow.function(node, star)
            if sinks:
                defs.append((node.name, tuple(params), tuple(sorted(sinks, key=repr))))
        elif isinstance(node, ast.ClassDef):
            params, sinks = _class(node, helpers)
            if sinks:
                defs.append((node.name, tuple(params), tuple(sorted(sinks, key=repr))))
    return Summary(tuple(defs), imports, tuple(sorted(helpers.builders.items())))


def _builder_names(imports: Iterable[tuple[str, str, int, str]]) -> dict[str, str]:
    """Local names of torch's builders: `from torch.utils.cpp_extension import load as jit`,
    `from torch.utils import cpp_extension` (then `cpp_extension.load`); any dotted
    `...cpp_extension.<builder>` is one too (see `_Helpers.builder`)."""
    found = {}
    for local, module, level, attr in imports:
        if level == 0 and module.endswith("cpp_extension") and attr in _ROLES:
            found[local] = attr
    return found


def _params(args: ast.arguments, skip_self: bool = False) -> tuple[list[str], str | None]:
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if skip_self and names:
        names = names[1:]
    names += [a.arg for a in args.kwonlyargs]
    return names, args.kwarg.arg if args.kwarg else None


def _class(node: ast.ClassDef, helpers: _Helpers) -> tuple[list[str], set]:
    """A class's constructor parameters, and where the attributes set from them go in any of
    its methods."""
    methods = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    init = next((m for m in methods if m.name == "__init__"), None)
    attrs: dict[str, set[str]] = {}
    sinks: set = set()
    if init is not None:
        params, star = _params(init.args, skip_self=True)
        flow = _Flow(helpers, {p: {p} for p in params} | ({star: {"**"}} if star else {}))
        sinks |= flow.function(init, star, attrs)
    elif any(ast.unparse(d).split("(")[0].endswith("dataclass") for d in node.decorator_list):
        params = [
            s.target.id
            for s in node.body
            if isinstance(s, ast.AnnAssign)
            and isinstance(s.target, ast.Name)
            and "ClassVar" not in ast.unparse(s.annotation)
        ]
        attrs = {p: {p} for p in params}
    else:
        return [], set()
    helpers.attrs, helpers.kept = attrs, {}  # methods returning attributes keep them now
    for method in methods:
        if method is init or not method.args.args:
            continue
        flow = _Flow(helpers, {}, attrs, self_name=method.args.args[0].arg)
        sinks |= flow.function(method, None)
    return params, sinks


def _imports(tree: ast.Module) -> Iterable[tuple[str, str, int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    yield (alias.asname or alias.name, node.module or "", node.level, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    yield (alias.asname, alias.name, 0, "")
                else:
                    yield (alias.name.split(".")[0], alias.name.split(".")[0], 0, "")


class _Helpers:
    """The module's functions and methods that return (part of) an argument unchanged
    (`_resolve(value)` returning `[str(v) for v in value]`), by name, with the argument
    positions they keep."""

    def __init__(self, tree: ast.Module, builders: dict[str, str]) -> None:
        self.functions: dict[str, ast.AST] = {}
        self.imported = builders
        self.builders: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                for m in node.body:
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.functions.setdefault("self." + m.name, m)
        self.kept: dict[str, set[str]] = {}
        self.visiting: set[str] = set()
        #: the attributes of the class being read, by the constructor parameters they keep
        self.attrs: dict[str, set[str]] = {}

    def builder(self, callee: str) -> str | None:
        """The torch builder `callee` is: imported from cpp_extension under that name, or
        spelled through the module (`torch.utils.cpp_extension.load`, `cpp_extension.load`).
        A bare `load` of anything else is not one (`torch.load`, `json.load`, the project's)."""
        head, _, last = callee.rpartition(".")
        if not head:
            found = self.imported.get(callee)
        elif head.split(".")[-1] == "cpp_extension" and last in _ROLES:
            found = last
        else:
            found = None
        if found is None and last in ("CUDAExtension", "CppExtension") and not head:
            found = last  # the setup-time builders' names are torch's own
        if found is not None:
            self.builders[callee] = found
        return found

    def keeps(self, name: str) -> set[str]:
        """What a call of it returns unchanged: argument positions (of the call, `self`
        excluded for a method), as digits, and for a method the constructor parameters its
        class keeps in the attributes it returns (`return self._paths(self.files)`)."""
        if name in self.kept:
            return self.kept[name]
        node = self.functions.get(name)
        if node is None or name in self.visiting:
            return set()
        self.visiting.add(name)
        try:
            method = name.startswith("self.")
            params, _ = _params(node.args, skip_self=method)  # type: ignore[arg-type]
            env = {p: {str(i)} for i, p in enumerate(params)}
            flow = _Flow(self, env, dict(self.attrs) if method else None)
            if method and node.args.args:  # type: ignore[attr-defined]
                flow.self_name = node.args.args[0].arg  # type: ignore[attr-defined]
            flow.bind(node.body)  # type: ignore[attr-defined]
            found: set[str] = set()
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and ret.value is not None:
                    found |= flow.origins(ret.value)
            self.kept[name] = found
        finally:
            self.visiting.discard(name)
        return self.kept[name]


class _Flow:
    """Which parameters an expression of one function body carries unchanged (`origins`),
    and the sinks: builder keywords and call arguments those reach."""

    def __init__(
        self,
        helpers: _Helpers,
        env: dict[str, set[str]],
        attrs: dict[str, set[str]] | None = None,
        self_name: str = "self",
    ) -> None:
        self.helpers = helpers
        self.env = {k: set(v) for k, v in env.items()}
        self.attrs = attrs if attrs is not None else {}
        self.self_name = self_name
        self.dicts: dict[str, dict[str, set[str]]] = {}

    def origins(self, node: ast.AST | None, depth: int = 0) -> set[str]:
        if node is None or depth > _DEPTH:
            return set()
        if isinstance(node, ast.Name):
            return set(self.env.get(node.id, ()))
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == self.self_name:
                return set(self.attrs.get(node.attr, ()))
            return set()
        if isinstance(node, ast.Starred):
            return self.origins(node.value, depth + 1)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return {o for e in node.elts for o in self.origins(e, depth + 1)}
        if isinstance(node, ast.IfExp):
            return self.origins(node.body, depth + 1) | self.origins(node.orelse, depth + 1)
        if isinstance(node, ast.BoolOp):  # `paths or []`
            return {o for v in node.values for o in self.origins(v, depth + 1)}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            if any(_stringy(side) for side in (node.left, node.right)):
                return set()  # string concatenation: a new path
            return self.origins(node.left, depth + 1) | self.origins(node.right, depth + 1)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            if len(node.generators) != 1 or not isinstance(node.generators[0].target, ast.Name):
                return set()
            gen = node.generators[0]
            saved = self.env.get(gen.target.id)  # type: ignore[attr-defined]
            self.env[gen.target.id] = self.origins(gen.iter, depth + 1)  # type: ignore[attr-defined]
            try:
                return self.origins(node.elt, depth + 1)
            finally:
                if saved is None:
                    self.env.pop(gen.target.id, None)  # type: ignore[attr-defined]
                else:
                    self.env[gen.target.id] = saved  # type: ignore[attr-defined]
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        return set()

    def _call(self, node: ast.Call, depth: int) -> set[str]:
        func = node.func
        name = ast.unparse(func)
        if name in _KEEPS and node.args:
            return self.origins(node.args[0], depth + 1)
        if isinstance(func, ast.Attribute) and func.attr in _KEEPS_METHOD and not node.args:
            return self.origins(func.value, depth + 1)
        if not node.args and not node.keywords:
            called = self.origins(func, depth + 1)  # `sources()` of a callable parameter
            if called:
                return called
        if name.startswith(self.self_name + "."):
            name = "self." + name[len(self.self_name) + 1 :]
        out: set[str] = set()
        for kept in self.helpers.keeps(name):
            if not kept.isdigit():
                out.add(kept)  # a constructor parameter, through an attribute
            elif int(kept) < len(node.args):
                out |= self.origins(node.args[int(kept)], depth + 1)
        return out

    def bind(self, body: list[ast.stmt], attrs: dict[str, set[str]] | None = None) -> None:
        """Locals (and, in `__init__`, `self.x` attributes) bound from the parameters:
        twice over, so a binding used before a later one in a loop is seen."""
        for _ in range(2):
            for node in _walk_body(body):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    if node.value is None:
                        continue
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    found = self.origins(node.value)
                    for target in targets:
                        self._assign(target, node.value, found, attrs)
                elif isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(
                    node.target, ast.Name
                ):
                    self.env.setdefault(node.target.id, set()).update(self.origins(node.iter))
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                ):
                    holder, method = node.func.value.id, node.func.attr
                    if method in ("extend", "append") and node.args:
                        self.env.setdefault(holder, set()).update(self.origins(node.args[0]))
                    elif method == "update":
                        for kw in node.keywords:
                            if kw.arg:
                                self._key(holder, kw.arg, self.origins(kw.value))

    def _assign(self, target: ast.AST, value: ast.AST, found: set[str], attrs) -> None:
        if isinstance(target, ast.Name):
            self.env.setdefault(target.id, set()).update(found)
            for key, origin in _dict_items(value, self):
                self._key(target.id, key, origin)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            key = target.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                self._key(target.value.id, key.value, found)
        elif (
            attrs is not None
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == self.self_name
        ):
            attrs.setdefault(target.attr, set()).update(found)

    def _key(self, holder: str, key: str, found: set[str]) -> None:
        if found:
            self.dicts.setdefault(holder, {}).setdefault(key, set()).update(found)

    def function(self, node, star: str | None, attrs: dict[str, set[str]] | None = None) -> set:
        """The sinks of one function body: (origin, callee, slot)."""
        self.bind(node.body, attrs)
        sinks: set = set()
        for call in _walk_body(node.body):
            if not isinstance(call, ast.Call):
                continue
            callee = _callee(call.func)
            if callee is None:
                continue
            self.helpers.builder(callee)
            for i, arg in enumerate(call.args):
                for origin in self.origins(arg):
                    sinks.add((origin, callee, i))
            for kw in call.keywords:
                if kw.arg is not None:
                    for origin in self.origins(kw.value):
                        sinks.add((origin, callee, kw.arg))
                elif isinstance(kw.value, ast.Name) and kw.value.id == star:
                    sinks.add(("**", callee, "**"))  # the wrapper's own **kwargs, forwarded
                else:
                    for key, origins in self._dict_of(kw.value).items():
                        for origin in origins:
                            sinks.add((origin, callee, key))
        return sinks

    def _dict_of(self, node: ast.AST) -> dict[str, set[str]]:
        if isinstance(node, ast.Name):
            return self.dicts.get(node.id, {})
        return {k: o for k, o in _dict_items(node, self)}


def _dict_items(node: ast.AST, flow: _Flow) -> list[tuple[str, set[str]]]:
    """`{"sources": x}` / `dict(sources=x)`: the keys and what each value carries."""
    out = []
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=False):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                out.append((key.value, flow.origins(value)))
    elif isinstance(node, ast.Call) and ast.unparse(node.func) == "dict":
        out = [(kw.arg, flow.origins(kw.value)) for kw in node.keywords if kw.arg]
    return [(k, o) for k, o in out if o]


def _walk_body(body: list[ast.stmt]) -> Iterable[ast.AST]:
    """The nodes of a body in source order, not entering nested functions or classes."""
    for stmt in body:
        stack = [stmt]
        while stack:
            node = stack.pop(0)
            yield node
            stack[:0] = [
                c
                for c in ast.iter_child_nodes(node)
                if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            ]


def _callee(func: ast.AST) -> str | None:
    """A dotted callee name rooted at a module-level name (`load`, `cpp.JitOp`)."""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id == "self":
        return None
    return ".".join([func.id, *reversed(parts)])


def _stringy(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


# -- the run: modules, imports, the fixpoint --------------------------------------------------


class _Modules:
    """The run's Python files by module name (every dotted suffix of their path, so
    `pkg.utils.cpp` is found wherever the package root lies)."""

    def __init__(self, paths: Iterable[Path]) -> None:
        self.by_suffix: dict[str, list[Path]] = {}
        for path in paths:
            parts = list(path.resolve().with_suffix("").parts[1:])
            if parts and parts[-1] == "__init__":
                parts = parts[:-1]
            for i in range(max(0, len(parts) - 8), len(parts)):
                self.by_suffix.setdefault(".".join(parts[i:]), []).append(path)

    def find(self, here: Path, module: str, level: int) -> list[Path]:
        if level:
            folder = here.resolve().parent
            for _ in range(level - 1):
                folder = folder.parent
            target = folder.joinpath(*module.split(".")) if module else folder
            found = [p for p in (target.with_suffix(".py"), target / "__init__.py") if p.is_file()]
            return [Path(os.path.normpath(p)) for p in found]
        return self.by_suffix.get(module, [])


class Run:
    """The wrappers of a run's Python files, and their resolution from any call site."""

    def __init__(self, summaries: dict[Path, Summary]) -> None:
        self.summaries = summaries
        self.resolved = {p.resolve(): p for p in summaries}
        self.modules = _Modules(summaries)
        self.wrappers: dict[tuple[Path, str], Wrapper] = {}
        self._fixpoint()

    def resolve(self, here: Path, dotted: str, depth: int = 0) -> tuple[Path, str] | None:
        """The (file, top-level name) `dotted`, called in `here`, names; None: not the run's.
        Imports are followed (a package's `__init__` re-exporting a name too)."""
        summary = self.summaries.get(here)
        if summary is None or depth > 4:
            return None
        head, *rest = dotted.split(".")
        if not rest and any(name == head for name, _, _ in summary.defs):
            return here, head
        for local, module, level, attr in summary.imports:
            if local != head:
                continue
            if attr:  # from module import attr [as local]
                sub = self._file(here, f"{module}.{attr}" if module else attr, level)
                if sub is not None:  # a module: `local.Name(...)`
                    return self.resolve(sub, rest[0], depth + 1) if len(rest) == 1 else None
                target = self._file(here, module, level)
                if target is not None and not rest:
                    return self.resolve(target, attr, depth + 1)
            elif rest:  # import pkg.mod [as local]: `local.rest...Name(...)`
                target = self._file(here, ".".join([module, *rest[:-1]]), 0)
                if target is not None:
                    return self.resolve(target, rest[-1], depth + 1)
        return None

    def _file(self, here: Path, module: str, level: int) -> Path | None:
        found = {
            self.resolved[f.resolve()]
            for f in self.modules.find(here, module, level)
            if f.resolve() in self.resolved
        }
        return found.pop() if len(found) == 1 else None  # two files of that name: not known

    def _fixpoint(self) -> None:
        for _ in range(_ROUNDS):
            changed = False
            for path, summary in self.summaries.items():
                builders = dict(summary.builders)
                for name, params, sinks in summary.defs:
                    feeds = set()
                    for origin, callee, slot in sinks:
                        for keyword, builder, role in self._roles(path, builders, callee, slot):
                            feeds.add((keyword or origin, builder, role))
                    if not feeds:
                        continue
                    new = Wrapper(params, tuple(sorted(feeds)))
                    if self.wrappers.get((path, name)) != new:
                        self.wrappers[(path, name)] = new
                        changed = True
            if not changed:
                break

    def _roles(self, path: Path, builders: dict, callee: str, slot) -> set[tuple]:
        """(keyword, builder, role) a value passed at `slot` of `callee` feeds; `keyword` is
        set for forwarded `**kwargs` (the wrapper takes that keyword), else None."""
        builder = builders.get(callee)
        if builder is not None:
            roles = _ROLES.get(builder, {})
            if slot == "**":  # forwarded **kwargs: the builder's keywords, by name
                return {(k, builder, r) for k, r in roles.items() if isinstance(k, str)}
            return {(None, builder, roles[slot])} if slot in roles else set()
        wrapper = self.wrapper(path, callee)
        if wrapper is None:
            return set()
        if slot == "**":
            return {(k, b, r) for k, b, r in wrapper.feeds}
        return {(None, b, r) for b, r in wrapper.roles(slot)}

    def wrapper(self, path: Path, callee: str) -> Wrapper | None:
        target = self.resolve(path, callee)
        return self.wrappers.get(target) if target else None

    def digest(self) -> str:
        """What the wrappers are, for the per-file cache of call sites."""
        from cuda2rocm.cache import content_hash

        return content_hash(
            repr(sorted((str(p), n, w) for (p, n), w in self.wrappers.items())).encode()
        )


# -- call sites -------------------------------------------------------------------------------


@dataclass(frozen=True)
class WrappedCall:
    """One call of a wrapper: the builder it ends in, and the paths read at its call site
    (relative to the calling file's folder, or absolute)."""

    script: Path
    line: int
    builder: str
    sources: tuple[str, ...]
    include_dirs: tuple[str, ...]


class _CallSite(_Sources):
    """build_context's reader, with what call sites of wrappers pass besides: a callable
    (`lambda: [...]`, a module function, whose returns are read), a call of a module function
    with literal arguments, `Path.parents[n]`, f-strings of known parts, and comprehensions
    over literal lists."""

    file_name = "__file__"

    def strings(self, node: ast.AST, scope: dict, depth: int = 0) -> list[str]:
        if depth > 12:
            return []
        if isinstance(node, ast.Name) and node.id == "__file__":
            return [self.file_name]  # its folder is where the reader's paths start
        if isinstance(node, ast.Lambda) and not node.args.args:
            return self.strings(node.body, scope, depth + 1)
        bound = isinstance(node, ast.Name) and (scope.get(node.id) or self.module.get(node.id))
        if isinstance(node, ast.Name) and not bound and node.id in self.functions:
            return self._returns(self.functions[node.id], [], depth)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            function = self.functions.get(node.func.id)
            if function is not None and all(isinstance(a, ast.Constant) for a in node.args):
                return self._returns(function, node.args, depth)
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "parents"
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, int)
        ):
            above = self.one(node.value.value, scope, depth + 1)
            if above is None:
                return []
            ups = "/".join([".."] * (node.slice.value + 1))
            return [ups if above == "." else f"{above}/{ups}"]
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.Constant):
                    parts.append(str(value.value))
                elif isinstance(value, ast.FormattedValue) and value.format_spec is None:
                    part = self.one(value.value, scope, depth + 1)
                    if part is None:
                        return []
                    parts.append(part)
                else:
                    return []
            return ["".join(parts)]
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 1:
            gen = node.generators[0]
            if isinstance(gen.target, ast.Name) and isinstance(gen.iter, (ast.List, ast.Tuple)):
                out = []
                for element in gen.iter.elts:
                    inner = {**scope, gen.target.id: [element]}
                    out += self.strings(node.elt, inner, depth + 1)
                return out
            return []
        return super().strings(node, scope, depth)

    def _returns(self, function, args: list[ast.AST], depth: int) -> list[str]:
        if function.name in self.visiting:
            return []
        params, _ = _params(function.args)
        scope = dict(self.scopes.get(id(function.body[0]), {})) if function.body else {}
        scope.update({p: [a] for p, a in zip(params, args, strict=False)})
        self.visiting.add(function.name)
        try:
            return [
                x
                for ret in ast.walk(function)
                if isinstance(ret, ast.Return) and ret.value is not None
                for x in self.strings(ret.value, scope, depth + 1)
            ]
        finally:
            self.visiting.discard(function.name)


def wrapped_calls(path: Path, text: str, run: Run) -> list[WrappedCall]:
    """The calls of `run`'s wrappers in one file, with what their arguments name."""
    from cuda2rocm.context.extension_calls import _values

    summary = run.summaries.get(path)
    if summary is None:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    reader = _CallSite(tree)
    reader.file_name = path.name
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = _callee(node.func)
        if callee is None or callee in dict(summary.builders):
            continue
        wrapper = run.wrapper(path, callee)
        if wrapper is None:
            continue
        scope = reader.scopes.get(id(node), {})
        found: dict[tuple[str, str], list[str]] = {}
        slots = [(i, a) for i, a in enumerate(node.args)]
        slots += [(kw.arg, kw.value) for kw in node.keywords if kw.arg]
        for slot, value in slots:
            roles = wrapper.roles(slot)
            if not roles:
                continue
            values, _ = _values(reader, value, scope)
            if not values:  # a callable the wrapper calls: `sources=module_function`
                values = reader.strings(value, scope)
            for role in roles:
                found.setdefault(role, []).extend(values)
        for builder in sorted({b for b, _ in found}):
            sources = tuple(found.get((builder, "sources"), ()))
            dirs = tuple(found.get((builder, "include"), ()))
            if sources or dirs:
                out.append(WrappedCall(path.resolve(), node.lineno, builder, sources, dirs))
    return out


def project_wrapped_calls(python_files: Iterable[tuple[Path, bytes]], memo=None) -> list:
    """Every wrapper call of the run's Python files. The files that mention cpp_extension are
    read first, then, round by round, those that name a wrapper found so far (a wrapper of a
    wrapper lives in a file that need not mention cpp_extension). `memo` (warm.FactsMemo)
    keeps each file's summary by content, and its calls by content and the wrappers."""
    from cuda2rocm.cache import content_hash

    files = list(python_files)

    def summary_of(data: bytes) -> Summary | None:
        compute = lambda: summarize(data.decode("utf-8", "replace"))  # noqa: E731
        if memo is None:
            return compute()
        return memo.per_file("builder-wrappers", (content_hash(data),), compute)

    summaries: dict[Path, Summary] = {}
    names: set[bytes] = set()
    run = Run({})
    for _ in range(_ROUNDS):
        grew = False
        for path, data in files:
            if path in summaries or not (TOKEN in data or any(n in data for n in names)):
                continue
            summary = summary_of(data)
            if summary is not None:
                summaries[path] = summary
                grew = True
        if not grew:
            break
        run = Run(summaries)
        names = {name.encode() for _, name in run.wrappers}
        if not names:
            return []
    digest = run.digest()
    calls: list[WrappedCall] = []
    for path, data in files:
        if path not in summaries or not any(n in data for n in names):
            continue
        text = data.decode("utf-8", "replace")
        if memo is None:
            calls += wrapped_calls(path, text, run)
        else:
            calls += memo.per_file(
                "builder-wrapper-calls",
                (content_hash(data), str(path), digest),
                lambda path=path, text=text: wrapped_calls(path, text, run),
            )
    return calls


def wrapped_dirs(calls: Iterable[WrappedCall]) -> frozenset[Path]:
    """What `build_context.torch_built_dirs` credits for these calls, read the same way: a
    `load()`'s sources are the files themselves (existing ones), its include paths their
    folders; a setup-time builder's sources stand for their folders."""
    out: set[Path] = set()
    for call in calls:
        base = call.script.parent
        if call.builder in ("load", "load_inline"):
            out.update(f for f in ((base / s).resolve() for s in call.sources) if f.is_file())
            out.update((base / d).resolve() for d in call.include_dirs if not _wild(d))
        else:  # its include dirs count through what hipify reaches (extension_calls)
            out.update((base / s).resolve().parent for s in call.sources if not _wild(s))
    return frozenset(out)


def _wild(path: str) -> bool:
    return any(w in path for w in "*?[")
