"""Where nvcc flag lists are assembled: the sites rule `nvcc-flags` reports beyond the builder call.

Build scripts rarely write the whole `"nvcc"` list in the `CUDAExtension(...)` call; they grow
it: `nvcc_flags += ["--expt-relaxed-constexpr"]`, `flags.append("-gencode")`,
`extra_compile_args["nvcc"] = [...]`, `args.extend(["-Xptxas", "-v"])`. Each such statement is a
line to change for ROCm. A list counts as bound for nvcc when

- it is `X["nvcc"]`, or the first element of a command list is nvcc;
- its name reaches an `extra_cuda_cflags=` argument or an `"nvcc"` value in this file (also
  through `A = B + C` assignments);
- its name says so (`nvcc_flags`, `NVCC_ARGS`, `extra_cuda_cflags`, `cuda_flags`; the rule's
  `bound_names` pattern).

In a bound list every flag of the rule's table counts; elsewhere only the table's flags that no
other tool spells (`context = true` marks those that need a bound list, such as `-arch`), and
`arch=compute_80,code=sm_80` strings. Sites inside a branch that tests IS_HIP_EXTENSION or
torch.version.hip are CUDA-only already. A statement the builder call itself resolves (a name
bound once to a literal and never changed) is left to that check, so nothing is reported twice.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import libcst as cst

from cuda2rocm.frontends.python import NameAware, dotted, string_value
from cuda2rocm.frontends.python_build import import_edit, names_vendor, under_vendor_branch
from cuda2rocm.frontends.python_fast import parse_ast
from cuda2rocm.model import Edit, Severity

#: The note for flags hipcc ignores: the ROCm build compiles, the flags only do nothing there.
IGNORED = (
    "nvcc-only flags ({shown}) reach hipcc on ROCm, which ignores them (clang warns "
    '"argument unused" and compiles on): harmless, but they do nothing there; add them only '
    "when not IS_HIP_EXTENSION to keep the ROCm build log clean"
)

#: `arch=compute_80,code=sm_80`, `code=[sm_80,compute_80]`: -gencode values, nvcc-only.
ARCH_VALUE = re.compile(r"^(arch=compute_|code=\[?(sm|compute|lto)_)")
NVCC_KEY = "<nvcc>"
_MUTATORS = {"append": 0, "extend": 0, "insert": 1}


@dataclass
class Site:
    target: str
    value: cst.BaseExpression
    #: `+=`, `=`, or the list method; a single string for append/insert.
    kind: str
    node: cst.CSTNode


def _target_key(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and string_value(index.value) == "nvcc":
            return NVCC_KEY
        return None
    return dotted(node)


def _ast_key(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _ast_key(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _flow(node: ast.AST, plain: bool = False) -> list[str]:
    """Names whose list value becomes (part of) `node`'s value; `plain`: only through what
    the builder check follows itself (names, `+`, `*unpacking`), not conditionals."""
    if isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and not plain):
        key = _ast_key(node)
        return [key] if key else []
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _flow(node.left, plain) + _flow(node.right, plain)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [k for e in node.elts if isinstance(e, ast.Starred) for k in _flow(e.value, plain)]
    if isinstance(node, ast.IfExp) and _vendor_test(node.test):
        return []  # `[hip] if IS_HIP_EXTENSION else NVCC`: NVCC reaches only nvcc (_cuda_side)
    if isinstance(node, ast.IfExp) and not plain:
        return _flow(node.body) + _flow(node.orelse)
    if isinstance(node, ast.Call) and not plain:
        # `append_threads(flags)`, `self.nvcc_args()`: what the function returns, and the
        # lists handed to it (a helper that extends its argument returns it)
        name = _call_key(node)
        passed = [k for a in node.args for k in _flow(a.value if isinstance(a, ast.Starred) else a)]
        return ([name] if name else []) + passed
    return []


def _call_key(node: ast.Call) -> str | None:
    """`f()` for calls of `f(...)` and `obj.f(...)`: the key of what function `f` returns."""
    func = node.func
    if isinstance(func, ast.Name):
        return f"{func.id}()"
    if isinstance(func, ast.Attribute):
        return f"{func.attr}()"
    return None


def _vendor_test(test: ast.AST) -> bool:
    return names_vendor(ast.unparse(test))


def _cuda_side(node: ast.AST) -> list[str]:
    """Names that reach a builder value only as the CUDA side of a vendor conditional."""
    if isinstance(node, ast.IfExp) and _vendor_test(node.test):
        return _flow(node.orelse)
    if isinstance(node, ast.BinOp):
        return _cuda_side(node.left) + _cuda_side(node.right)
    return []


class BuildFlow:
    """Which flag-list names reach nvcc in one file, and which the builder check resolves."""

    def __init__(self, text: str) -> None:
        self.bound: set[str] = set()
        #: Names the builder check follows itself (one plain assignment, never changed).
        self.resolved: set[str] = set()
        #: Names whose only way to nvcc is the CUDA side of a vendor conditional.
        self.cuda_side: set[str] = set()
        tree = parse_ast(text)
        if tree is None:
            return
        direct: list[str] = []
        assigns: dict[str, int] = {}
        changed: set[str] = set()
        flows: list[tuple[str, list[str]]] = []
        plain: dict[str, list[str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "extra_cuda_cflags":
                self.cuda_side.update(_cuda_side(node.value))
                self.bound.update(_flow(node.value))
                direct += _flow(node.value, plain=True)
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "nvcc":
                        self.cuda_side.update(_cuda_side(value))
                        self.bound.update(_flow(value))
                        direct += _flow(value, plain=True)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    key = _ast_key(target)
                    if key is not None:
                        assigns[key] = assigns.get(key, 0) + 1
                        flows.append((key, _flow(node.value)))
                        plain[key] = _flow(node.value, plain=True)
                    elif _is_nvcc_subscript(target):
                        self.bound.update(_flow(node.value))
                    if isinstance(target, ast.Subscript):
                        changed.update(filter(None, [_ast_key(target.value)]))
            elif isinstance(node, ast.AugAssign):
                key = _ast_key(node.target)
                if key is not None:
                    changed.add(key)
                elif _is_nvcc_subscript(node.target):
                    self.bound.update(_flow(node.value))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                key = _ast_key(node.func.value)
                if key is not None:
                    changed.add(key)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for ret in _returns(node):
                    flows.append((f"{node.name}()", _flow(ret)))
        for _ in range(4):  # A = B + C: B and C reach nvcc when A does
            grown = {s for key, srcs in flows if key in self.bound for s in srcs} - self.bound
            if not grown:
                break
            self.bound |= grown
        for _ in range(4):
            grown = {s for k, srcs in flows if k in self.cuda_side for s in srcs}
            grown -= self.cuda_side | self.bound
            if not grown:
                break
            self.cuda_side |= grown
        self.cuda_side -= self.bound
        todo = list(direct)
        while todo:  # the builder check follows NVCC = COMMON + ARCH into COMMON and ARCH
            name = todo.pop()
            if name in self.resolved or assigns.get(name) != 1 or name in changed:
                continue
            self.resolved.add(name)
            todo += plain.get(name, [])


def _returns(function: ast.AST) -> list[ast.AST]:
    """The values `function` returns (not those of functions nested in it)."""
    found: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            found.append(node.value)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _is_nvcc_subscript(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == "nvcc"
    )


class FlagSites(NameAware):
    """Mixin of rule `nvcc-flags`: collects assignment and mutation sites, reports at the end.

    Expects the rule to provide `flags` (the table), `_match`, `_resolve`, `_hip_list` and
    `_module`, as `nvcc_flags.Rule` does.
    """

    #: the fast pass keeps every call of a function holding a finding: this rule asks
    #: where such a function is called from
    READS_CALLERS = True
    #: and the file whole: a helper's `return opts + ["--threads", "4"]` is a site when the
    #: helper's call reaches an nvcc list elsewhere, whatever tokens its body holds
    WHOLE_FILE = True

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._sites: list[Site] = []
        #: Calls of plain names (`add_gencodes(flags)`): where each helper function runs.
        self._calls: dict[str, list[cst.Call]] = {}
        self._bound_names = re.compile(self.spec.tables["sites"]["bound_names"], re.IGNORECASE)

    # -- collecting --------------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            key = _target_key(node.targets[0].target)
            if key is not None:
                self._sites.append(Site(key, node.value, "=", node))
                return
        self._literal_site(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign):
            key = _target_key(node.target)
            if key is not None:
                self._sites.append(Site(key, node.value, "+=", node))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name):
            self._calls.setdefault(func.value, []).append(node)
        if not isinstance(func, cst.Attribute) or func.attr.value not in _MUTATORS:
            return
        key = _target_key(func.value)
        index = _MUTATORS[func.attr.value]
        if key is None or len(node.args) <= index:
            return
        self._sites.append(Site(key, node.args[index].value, func.attr.value, node))

    def visit_Expr(self, node: cst.Expr) -> None:
        self._literal_site(node.value)

    def visit_Return(self, node: cst.Return) -> None:
        """`return flags + ["--threads", "4"]`: a helper's result, bound when its call is."""
        function = next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)
        if function is not None and node.value is not None:
            self._sites.append(Site(f"{function.name.value}()", node.value, "return", node))

    def _literal_site(self, value: cst.BaseExpression) -> None:
        """A command list `["nvcc", ...]` that is not assigned to a name."""
        if isinstance(value, cst.Call):
            for arg in value.args:
                if _is_nvcc_command(arg.value):
                    self._sites.append(Site(NVCC_KEY, arg.value, "=", arg.value))

    # -- deciding ----------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        flow = BuildFlow(self.source.text)
        for site in self._sites:
            bound = (
                site.target == NVCC_KEY
                or site.target in flow.bound
                or self._bound_names.search(site.target.rsplit(".", 1)[-1].removesuffix("()"))
                is not None
                or _is_nvcc_command(site.value)
            )
            if site.target in flow.cuda_side or (site.kind == "=" and site.target in flow.resolved):
                continue
            if not bound and site.kind in ("=", "return") and not _list_like(site.value):
                continue  # a tuple or set of flag names is data (prefixes to strip, ...)
            if self._cuda_only(site.node):
                continue
            self._check_site(site, bound)

    def _cuda_only(self, node: cst.CSTNode, depth: int = 0) -> bool:
        """In a CUDA-only branch, or in a helper function this file calls only from such."""
        if under_vendor_branch(self, node):
            return True
        function = next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)
        if function is None or depth > 3:
            return False
        calls = self._calls.get(function.name.value, [])
        return bool(calls) and all(self._cuda_only(c, depth + 1) for c in calls)

    def _nvcc_only(self, value: str, bound: bool, following: str | None) -> bool:
        if ARCH_VALUE.match(value):
            return True
        hit = self._match(value)
        if hit is None:
            return False
        _, entry, joined = hit
        if entry.get("context") and not bound:
            return False
        if joined and not value.partition("=")[2]:
            return False  # "-gencode=" alone: a prefix being tested, not a flag
        pattern = entry.get("pattern")
        if pattern:
            arg = value.partition("=")[2] if joined else following
            return arg is not None and re.match(pattern, arg) is not None
        return True

    def _elements(self, value: cst.BaseExpression) -> list[tuple[list, bool]]:
        """(elements, fixable) groups of the value: a conditional gives two, without a fix."""
        if isinstance(value, cst.IfExp) and names_vendor(self.text(value.test)):
            return []  # `[hipcc flags] if IS_HIP_EXTENSION else [nvcc flags]`: selected already
        if isinstance(value, cst.IfExp):
            both = self._elements(value.body) + self._elements(value.orelse)
            return [(e, False) for e, _ in both]
        if isinstance(value, cst.FormattedString):
            head = ""  # the literal text up to the first field, which stands as "{}"
            for part in value.parts:
                if not isinstance(part, cst.FormattedStringText):
                    head += "{}"
                    break
                head += part.value
            return [([(value, head or None)], False)]
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "format"
        ):  # "-ccbin={}".format(cc): the literal part decides
            head = string_value(value.func.value)
            if not head:
                return []
            literal, brace, _ = head.partition("{")
            return [([(value, (literal + "{}" if brace else literal) or None)], False)]
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
            # [f"-gencode=arch=compute_{c},code=sm_{c}" for c in archs]: each element's form
            return [(e, False) for e, _ in self._elements(value.elt)]
        single = string_value(value)
        if single is not None:
            return [([(value, single)], False)]
        resolved = self._resolve(value)
        if resolved is None:
            if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
                # `flags + ["--threads", "4"]` with `flags` a parameter: the literal side
                sides = self._elements(value.left) + self._elements(value.right)
                return [([el for e, _ in sides for el in e], False)] if sides else []
            return []
        return [([(e.node, e.value) for e in resolved], True)]

    def _check_site(self, site: Site, bound: bool) -> None:
        for elements, fixable in self._elements(site.value):
            values = [v for _, v in elements]
            found = []
            for i, value in enumerate(values):
                if value is None:
                    continue
                following = values[i + 1] if i + 1 < len(values) else None
                if self._nvcc_only(value, bound, following):
                    found.append(value)
            if not found:
                continue
            harmless = self.hipcc_ignores(found, values)
            self._report_site(site, found, fixable and isinstance(site.value, cst.List), harmless)
            return

    def hipcc_ignores(self, found: list[str], values: list[str | None]) -> bool:
        """Whether hipcc compiles on with every flag of `found` ignored (the table's `hipcc =
        "ignored"`: clang warns "argument unused" and goes on; `"ignored-joined"`: only the
        `-flag=value` spelling, a separate value reaches clang as a flag of its own). Not
        when a `-Werror` in the list makes that warning an error, nor when a part of the list
        is not a literal."""
        if any(v is None or v.startswith("-Werror") for v in values):
            return False
        for flag in found:
            hit = self._match(flag.split(" ")[0])
            if hit is None:
                return False
            _, entry, joined = hit
            how = entry.get("hipcc", "")
            if not (how == "ignored" or (how == "ignored-joined" and joined)):
                return False
        return bool(found)

    def _report_site(self, site: Site, found: list[str], fixable: bool, harmless: bool) -> None:
        shown = ", ".join(dict.fromkeys(found))
        if _is_nvcc_command(site.value):
            message = (
                f"this runs nvcc with nvcc-only flags ({shown}); ROCm hosts have no nvcc and "
                "hipcc (clang) rejects or ignores these flags: build a hipcc command under "
                "IS_HIP_EXTENSION"
            )
        else:
            where = "returned for" if site.kind == "return" else "added to"
            message = (
                f"nvcc-only flags ({shown}) {where} this flag list; on ROCm torch's build "
                "passes the nvcc list to hipcc (clang), which rejects or silently ignores them; "
                "add them only when not IS_HIP_EXTENSION"
            )
        fix = None
        result = self._hip_list(self._resolve(site.value) or []) if fixable else None
        if (
            result is not None
            and self._module is not None
            and site.kind in ("+=", "extend", "=", "return")
            and not _is_nvcc_command(site.value)
        ):
            hip, _ = result
            spelled, edit = import_edit(self, self._module, "IS_HIP_EXTENSION")
            if spelled is not None:  # None: not a torch build script, so no fix
                original = self.text(site.value)
                start, end = self.span(site.value)
                replacement = f"[{', '.join(hip)}] if {spelled} else {original}"
                edits = [Edit(start, end, replacement, original)]
                if edit is not None:
                    edits.append(edit)
                fix = self.fix(*edits, description="add only hipcc flags when IS_HIP_EXTENSION")
        if harmless:
            self.report(site.value, IGNORED.format(shown=shown), fix, severity=Severity.INFO)
            return
        self.report(site.value, message, fix)


def _list_like(value: cst.BaseExpression) -> bool:
    """A list display, list comprehension or `+` concatenation holding one."""
    if isinstance(value, (cst.List, cst.ListComp)):
        return True
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        return _list_like(value.left) or _list_like(value.right)
    return False


def _is_nvcc_command(value: cst.BaseExpression) -> bool:
    if not isinstance(value, (cst.List, cst.Tuple)) or not value.elements:
        return False
    first = value.elements[0].value
    head = string_value(first)
    return head is not None and (head == "nvcc" or head.endswith("/nvcc"))
