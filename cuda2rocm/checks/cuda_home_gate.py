"""cuda-home-gate: `CUDA_HOME` (torch.utils.cpp_extension) deciding whether the GPU extension is
built, or used as a path. It is None on ROCm builds of torch.

Gates (`CUDA_HOME is not None`, `CUDA_HOME is None`, `if CUDA_HOME:`, `not CUDA_HOME`) get a
fix that also accepts ROCm: `CUDA_HOME is not None or ROCM_HOME is not None`.

Why the fix is safe, and when it is offered at all:
- CUDA unchanged: torch sets ROCM_HOME only on ROCm builds (`ROCM_HOME = _find_rocm_home() if
  (torch.cuda._is_compiled() and torch.version.hip) else None`, torch 2.13), so on CUDA and CPU
  builds the added operand is False and the test evaluates exactly as before.
- Correct on ROCm only if nothing the gate protects needs CUDA_HOME itself. So no fix when the
  file uses CUDA_HOME as a value anywhere (`get_cuda_bare_metal_version(CUDA_HOME)`, a path):
  the widened gate would let ROCm through to a TypeError instead of the project's message.
- No fix for a gate inside a function (`raise_if_cuda_home_none(...)`): its callers, which this
  rule cannot see, go on as if a CUDA toolkit were present.

Not reported: a test in a decision that takes ROCm down another branch (`if CUDA_HOME is not
None: ... elif ROCM_HOME is not None: ...`, `if not CUDA_HOME: if IS_HIP_EXTENSION: ...`, a
conditional expression whose other side tests `torch.version.hip`, a flag bound to such a test
or named for ROCm): a CUDA_HOME test is a ROCm gate only when no branch of its decision accepts
ROCm (`_rocm_arm`). A separate `if` further on is another decision.

Also not reported: a None check that only protects uses of CUDA_HOME as a value
(`if CUDA_HOME and os.path.isdir(os.path.join(CUDA_HOME, "targets")): include_dirs.append(...)`,
collect_env's `if CUDA_HOME is not None: nvcc = os.path.join(CUDA_HOME, "bin", "nvcc")`): on
ROCm it is False, only CUDA paths are skipped, nothing breaks. Such a check is one whose body
uses CUDA_HOME as a value and neither builds an extension, raises, returns nor exits; the uses
it protects are not reported either. `str(CUDA_HOME)` is no path use; shown outside a None
check it gets an info note (an environment report that prints `None` on ROCm should print
ROCM_HOME there; porting engineers change these lines, e.g. detectron2's collect_env).
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware
from cuda2rocm.frontends.python_build import (
    import_edit,
    names_vendor,
    under_vendor_branch,
    under_vendor_test,
)
from cuda2rocm.model import Severity

QUALIFIED = "torch.utils.cpp_extension.CUDA_HOME"
ROCM, CUDA = "rocm", "cuda"
#: Set (truthy, not None) on one vendor's build of torch only.
_ROCM_SET = ("ROCM_HOME", "HIP_HOME", "IS_HIP_EXTENSION", "torch.version.hip")
_CUDA_SET = ("CUDA_HOME", "torch.version.cuda")
ROCM_AWARE = ("ROCM_HOME", "IS_HIP_EXTENSION", "torch.version.hip")
#: Names whose presence in a gated body means the gate decides what is built.
_DECIDES = frozenset(
    {
        "CUDAExtension",
        "CppExtension",
        "BuildExtension",
        "ext_modules",
        "setup",
        "load",
        "load_inline",
        "exit",
        "SystemExit",
    }
)


class Rule(NameAware):
    #: the fast pass keeps the file whole: this rule reads the bodies of the functions a gate calls
    WHOLE_FILE = True

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._gates: list[tuple[cst.CSTNode, cst.BaseExpression, str]] = []
        self._paths: list[cst.BaseExpression] = []
        self._protected: set[int] = set()
        self._shown: list[cst.BaseExpression] = []
        self._module: cst.Module | None = None
        self._bound: dict[str, list[str]] = {}
        self._calls: dict[str, list[cst.Call]] = {}
        self._values: dict[str, list[cst.BaseExpression]] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._bound.setdefault(target.target.value, []).append(self.text(node.value))
                self._values.setdefault(target.target.value, []).append(node.value)

    def _rocm_test(self, node: cst.CSTNode) -> bool:
        """`node` tests ROCm: it names ROCM_HOME/IS_HIP_EXTENSION/torch.version.hip, or is a
        name bound to such a test (`is_rocm = torch.version.hip is not None`)."""
        text = self.text(node)
        if any(name in text for name in ROCM_AWARE):
            return True
        return isinstance(node, cst.Name) and any(
            any(name in value for name in ROCM_AWARE) for value in self._bound.get(node.value, [])
        )

    def _or_rocm(self, where: cst.CSTNode) -> bool:
        """The gate is one side of an `or` whose other side tests ROCm: ROCm is accepted."""
        child = where
        for parent in self.ancestors(where):
            if not isinstance(parent, cst.BooleanOperation):
                return False
            if isinstance(parent.operator, cst.Or):
                other = parent.right if child is parent.left else parent.left
                if self._rocm_test(other):
                    return True
            child = parent
        return False

    # -- decisions that accept ROCm in another branch ----------------------------------------
    def _rocm_arm(self, where: cst.CSTNode) -> bool:
        """The decision the gate is part of accepts ROCm elsewhere, so the gate is no ROCm
        gate: on ROCm (CUDA_HOME None, torch/utils/cpp_extension.py) the test sends the build
        down another branch than on CUDA, and that branch holds a ROCm-specific arm (`elif
        ROCM_HOME is not None:`, `else: if IS_HIP_EXTENSION:`, `x if CUDA_HOME else (y if
        torch.version.hip else z)`), or both vendors take the same branch."""
        found = self._test_of(where)
        if found is None:
            return False
        statement, _ = found
        rocm, cuda = self._on(statement.test, ROCM), self._on(statement.test, CUDA)
        if rocm is None:
            return False
        if rocm == cuda:
            return True
        taken = statement.body if rocm else statement.orelse
        return taken is not None and self._accepts(taken)

    def _test_of(self, where: cst.CSTNode) -> tuple[cst.CSTNode, cst.CSTNode] | None:
        """The `if` / conditional expression whose test holds `where` (through `and`, `or`,
        `not`, parentheses), with that test."""
        node = where
        for parent in self.ancestors(where):
            if isinstance(parent, (cst.If, cst.IfExp)) and parent.test is node:
                return parent, node
            if not isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
                return None
            node = parent
        return None

    def _accepts(self, branch: cst.CSTNode) -> bool:
        """`branch` (an `elif`, an `else` block, an `if` body, the other side of a
        conditional expression) decides on ROCm: one of its arms is taken on ROCm and not
        on CUDA, at its top level or down an `elif` chain."""
        while isinstance(branch, (cst.If, cst.IfExp)):
            if self._on(branch.test, ROCM) is True and self._on(branch.test, CUDA) is False:
                return True
            branch = branch.orelse
        if isinstance(branch, cst.Else):
            branch = branch.body
        if isinstance(branch, cst.BaseSuite):
            body = branch.body if isinstance(branch, cst.IndentedBlock) else []
            return any(isinstance(s, cst.If) and self._accepts(s) for s in body)
        return False

    def _on(self, node: cst.CSTNode, vendor: str, seen: frozenset[str] = frozenset()):
        """The truth of a test on a `vendor` build of torch (True / False / None unknown):
        CUDA_HOME and torch.version.cuda are None on ROCm, ROCM_HOME, HIP_HOME,
        IS_HIP_EXTENSION and torch.version.hip on CUDA (torch/utils/cpp_extension.py lines
        352-359); names bound once to such a test; a flag or zero-argument helper named
        for ROCm (`use_rocm`, `is_hip()`), as the build files' context reads it."""
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            inner = self._on(node.expression, vendor, seen)
            return None if inner is None else not inner
        if isinstance(node, cst.BooleanOperation):
            left = self._on(node.left, vendor, seen)
            right = self._on(node.right, vendor, seen)
            if isinstance(node.operator, cst.And):
                return (
                    False if False in (left, right) else (True if left is right is True else None)
                )
            return True if True in (left, right) else (False if left is right is False else None)
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            target = node.comparisons[0]
            if not (isinstance(target.comparator, cst.Name) and target.comparator.value == "None"):
                return None
            present = self._on(node.left, vendor, seen)
            if present is None or isinstance(target.operator, (cst.IsNot, cst.NotEqual)):
                return present
            return not present if isinstance(target.operator, (cst.Is, cst.Equal)) else None
        if isinstance(node, cst.Call) and not node.args:
            return self._named(node.func, vendor)
        if isinstance(node, cst.Call) and self.text(node.func) == "bool" and len(node.args) == 1:
            return self._on(node.args[0].value, vendor, seen)
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        for name in self.qualified_names(node):
            if name.endswith(_ROCM_SET):
                return vendor == ROCM
            if name.endswith(_CUDA_SET):
                return vendor == CUDA
        if isinstance(node, cst.Name) and node.value not in seen:
            values = [
                self._on(v, vendor, seen | {node.value}) for v in self._values.get(node.value, [])
            ]
            if values and all(v is values[0] for v in values) and values[0] is not None:
                return values[0]
        return self._named(node, vendor)

    def _named(self, node: cst.CSTNode, vendor: str):
        """A name that says it is the ROCm build (`use_rocm`, `IS_HIP`, `build_for_rocm()`)."""
        if isinstance(node, (cst.Name, cst.Attribute)) and names_vendor(self.text(node)):
            return vendor == ROCM
        return None

    def visit_Module(self, node: cst.Module) -> None:
        self._module = node

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "CUDA_HOME" and not isinstance(self.parent(node), cst.Attribute):
            self._use(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "CUDA_HOME":
            self._use(node)

    def _use(self, node: cst.BaseExpression) -> None:
        if QUALIFIED not in self.qualified_names(node):
            return
        parent = self.parent(node)
        if isinstance(parent, (cst.ImportAlias, cst.AssignTarget, cst.Param)):
            return
        if isinstance(node, cst.Name) and self._shadowed(node):
            return  # `def f(CUDA_HOME): ...`: the function's own parameter
        if under_vendor_test(self, node, ROCM_AWARE):
            return
        if (
            isinstance(parent, cst.Comparison)
            and parent.left is node
            and len(parent.comparisons) == 1
        ):
            target = parent.comparisons[0]
            if isinstance(target.comparator, cst.Name) and target.comparator.value == "None":
                if isinstance(target.operator, (cst.IsNot, cst.NotEqual)):
                    self._gates.append((parent, node, "is-not-none"))
                    return
                if isinstance(target.operator, (cst.Is, cst.Equal)):
                    self._gates.append((parent, node, "is-none"))
                    return
        if self._in_test(node, parent):
            self._gates.append((node, node, "truthy"))
            return
        self._paths.append(node)
        shown = _harmless_value(self, node, parent)
        if shown and not self._checked_before(node):
            self._shown.append(node)
        if shown or self._checked_before(node) or self._to_catching_helper(parent):
            self._protected.add(id(node))

    def _in_test(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> bool:
        if isinstance(parent, (cst.If, cst.IfExp, cst.While)) and parent.test is node:
            return True
        if isinstance(parent, cst.BooleanOperation):
            return True
        return isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)

    # -- None checks that only protect values ----------------------------------------------------
    def _conjuncts_of(self, where: cst.CSTNode) -> tuple[cst.CSTNode, cst.CSTNode] | None:
        """The `if`/`x if c else y` whose test is `where`, or an `and` chain holding it, with
        the outermost test node; None for any other place (an `or`, an assignment...)."""
        node = where
        for parent in self.ancestors(where):
            if isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
                node = parent
                continue
            if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
                node = parent  # `x if not (CUDA_HOME and isdir(CUDA_HOME)) else y`
                continue
            if isinstance(parent, (cst.If, cst.IfExp)) and parent.test is node:
                return parent, node
            return None
        return None

    def _checked_before(self, use: cst.CSTNode) -> bool:
        """`use` runs only after a truthy/`is not None` test of CUDA_HOME: in the body of such
        an `if`, or on the right of `CUDA_HOME and ...`."""
        child = use
        for parent in self.ancestors(use):
            after_and = (
                isinstance(parent, cst.BooleanOperation)
                and isinstance(parent.operator, cst.And)
                and child is parent.right
                and self._tests_present(parent.left)
            )
            in_body = (
                isinstance(parent, (cst.If, cst.IfExp))
                and child is parent.body
                and self._tests_present(parent.test)
            )
            if after_and or in_body:
                return True
            child = parent
        return False

    def _shadowed(self, node: cst.Name) -> bool:
        """Inside a function with a parameter of the same name."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                params = ancestor.params
                every = [*params.posonly_params, *params.params, *params.kwonly_params]
                if any(p.name.value == node.value for p in every):
                    return True
        return False

    def _to_catching_helper(self, parent: cst.CSTNode | None) -> bool:
        """`helper(CUDA_HOME, ...)` where this module's `def helper` wraps its whole body in
        `try: ... except Exception:` (an environment report): a None there is caught."""
        if not isinstance(parent, cst.Arg):
            return False
        call = self.parent(parent)
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
            return False
        assert self._module is not None
        for statement in self._module.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == call.func.value:
                body = [
                    b
                    for b in statement.body.body
                    if not (
                        isinstance(b, cst.SimpleStatementLine)
                        and isinstance(b.body[0], cst.Expr)
                        and isinstance(b.body[0].value, cst.SimpleString)
                    )
                ]
                return (
                    len(body) == 1
                    and isinstance(body[0], cst.Try)
                    and any(
                        h.type is None or self.text(h.type) in ("Exception", "BaseException")
                        for h in body[0].handlers
                    )
                )
        return False

    def _tests_present(self, test: cst.CSTNode) -> bool:
        """`test` is true only when CUDA_HOME is set (`CUDA_HOME`, `CUDA_HOME is not None`,
        possibly one conjunct of an `and`)."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._tests_present(test.left) or self._tests_present(test.right)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            if not (isinstance(target.comparator, cst.Name) and target.comparator.value == "None"):
                return False
            if not isinstance(target.operator, (cst.IsNot, cst.NotEqual)):
                return False
            test = test.left
        if isinstance(test, (cst.Name, cst.Attribute)):
            return QUALIFIED in self.qualified_names(test)
        return False

    def _only_protects(self, where: cst.CSTNode) -> bool:
        """A gate whose `if` (or conditional expression) uses CUDA_HOME as a value under the
        test and does nothing a ROCm build would miss: no extension, raise, return or exit."""
        found = self._conjuncts_of(where)
        if found is None:
            return False
        statement, _ = found
        if isinstance(statement, cst.If) and statement.orelse is not None:
            return False
        protected = [u for u in self._paths if id(u) in self._protected]
        if not any(_inside(self, u, statement) for u in protected):
            return False
        decides = _Decides()
        (statement.body).visit(decides)
        return not decides.found

    def leave_Module(self, original_node: cst.Module) -> None:
        used = bool(self._paths)
        for where, use, kind in self._gates:
            if kind != "is-none" and self._only_protects(where):
                continue
            if kind != "is-none" and self._or_rocm(where):
                continue
            if self._rocm_arm(where):
                continue
            self._gate(where, use, kind, used)
        self._raising_helper_calls()
        for use in self._paths:
            if id(use) in self._protected:
                continue
            self.report(
                use,
                "CUDA_HOME is None on ROCm builds of torch, so this path breaks there; build "
                "ROCm paths from ROCM_HOME (torch.utils.cpp_extension) under IS_HIP_EXTENSION",
            )
        lines: set[int] = set()
        for use in self._shown:
            line = self.context.position(use).start.line
            if line in lines:
                continue  # one note per line
            lines.add(line)
            self.report(
                use,
                "shows CUDA_HOME, which is None on ROCm builds of torch: an environment report "
                "then says nothing about the toolkit that built the extension; show ROCM_HOME "
                "(torch.utils.cpp_extension) as well",
                severity=Severity.INFO,
            )

    # -- helpers that stop the build without a CUDA toolkit ------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self._calls.setdefault(node.func.value, []).append(node)

    def _raising_helper_calls(self) -> None:
        """`def require_toolkit(opt): if CUDA_HOME is None: raise ...` called as
        `require_toolkit("--fused")`: on ROCm CUDA_HOME is always None, so every call that no
        ROCm test keeps away stops the build; the call is the line a port changes."""
        assert self._module is not None
        for statement in self._module.body:
            if not isinstance(statement, cst.FunctionDef) or not self._raises_without(statement):
                continue
            name = statement.name.value
            for call in self._calls.get(name, []):
                if any(a is statement for a in self.ancestors(call)):
                    continue
                if under_vendor_test(self, call, ROCM_AWARE) or under_vendor_branch(self, call):
                    continue
                self.report(
                    call,
                    f"{name}() raises when CUDA_HOME is None, which it always is on ROCm "
                    "builds of torch, so this call stops the ROCm build; call it only when not "
                    "IS_HIP_EXTENSION (or test ROCM_HOME there)",
                )

    def _raises_without(self, function: cst.FunctionDef) -> bool:
        """The function raises or exits when CUDA_HOME is None: `if CUDA_HOME is None:
        raise`, or `if CUDA_HOME is not None: return` before a top-level `raise`; and it does
        not tell ROCm apart itself."""
        if self._rocm_test(function):
            return False
        body = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
        for i, statement in enumerate(body):
            if not isinstance(statement, cst.If) or statement.orelse is not None:
                continue
            kind = self._gate_kind(statement.test)
            if kind == "absent" and _stops(statement.body):
                return True
            if kind == "present" and _returns_only(statement.body):
                return any(_stops(s) for s in body[i + 1 :])
        return False

    def _gate_kind(self, test: cst.BaseExpression) -> str | None:
        """ "absent" for `CUDA_HOME is None` / `not CUDA_HOME`, "present" for `is not None` /
        truthiness; None for any other test."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return "absent" if self._is_cuda_home(test.expression) else None
        if self._is_cuda_home(test):
            return "present"
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            none = isinstance(target.comparator, cst.Name) and target.comparator.value == "None"
            if none and self._is_cuda_home(test.left):
                if isinstance(target.operator, (cst.Is, cst.Equal)):
                    return "absent"
                if isinstance(target.operator, (cst.IsNot, cst.NotEqual)):
                    return "present"
        return None

    def _is_cuda_home(self, node: cst.CSTNode) -> bool:
        return isinstance(node, (cst.Name, cst.Attribute)) and QUALIFIED in self.qualified_names(
            node
        )

    def _gate(self, where: cst.CSTNode, use: cst.BaseExpression, kind: str, used: bool) -> None:
        assert self._module is not None
        message = (
            "CUDA_HOME is None on ROCm builds of torch, so this test silently skips the GPU "
            "extension there; accept ROCM_HOME too"
        )
        if used:
            message += (
                " once the uses of CUDA_HOME it protects have ROCm paths (no fix: widened "
                "alone, ROCm would reach them and fail)"
            )
            self.report(where, message)
            return
        if any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in self.ancestors(where)):
            message += (
                " (no fix: this test is in a function, whose callers may go on as if a CUDA "
                "toolkit were present)"
            )
            self.report(where, message)
            return
        if isinstance(use, cst.Attribute):
            rocm, edit = f"{self.text(use.value)}.ROCM_HOME", None
        else:
            rocm, edit = import_edit(self, self._module, "ROCM_HOME")
            if rocm is None:  # not a torch build script (no torch import): no fix
                self.report(where, message)
                return
        # text() and replace() cover the node without its own parentheses, which stay.
        text = self.text(where)
        if kind == "is-not-none":
            new = f"{text} or {rocm} is not None"
        elif kind == "is-none":
            new = f"{text} and {rocm} is None"
        else:
            new = f"{text} or {rocm}"
        parent = self.parent(where)
        direct = isinstance(parent, (cst.If, cst.IfExp, cst.While)) and parent.test is where
        if not direct and not getattr(where, "lpar", None):
            new = f"({new})"
        edits = [self.replace(where, new)]
        if edit is not None:
            edits.append(edit)
        self.report(where, message, self.fix(*edits, description="also accept ROCM_HOME"))


def _stops(node: cst.CSTNode) -> bool:
    """`node` raises or exits (`raise`, `sys.exit(...)`, `exit(...)`) somewhere in it."""
    if isinstance(node, cst.Raise):
        return True
    if isinstance(node, cst.Call):
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        if name in ("exit", "_exit"):
            return True
    return any(_stops(c) for c in node.children)


def _returns_only(block: cst.BaseSuite) -> bool:
    """The block is a bare `return` (the early way out when CUDA_HOME is set)."""
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    small = [s for line in body for s in getattr(line, "body", [])]
    return len(small) == 1 and isinstance(small[0], cst.Return) and small[0].value is None


def _inside(rule: NameAware, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return any(a is container for a in rule.ancestors(node))


def _harmless_value(rule: NameAware, node: cst.CSTNode, parent: cst.CSTNode | None) -> bool:
    """`str(CUDA_HOME)` / `f"{CUDA_HOME}"` / `print(CUDA_HOME)`: shown, not used as a path."""
    if isinstance(parent, cst.FormattedStringExpression):
        return True
    if isinstance(parent, cst.Arg):
        call = rule.parent(parent)
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name):
            return call.func.value in ("str", "repr", "print", "format")
    return False


class _Decides(cst.CSTVisitor):
    """Finds what makes a gated body a build decision."""

    def __init__(self) -> None:
        self.found = False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in _DECIDES:
            self.found = True

    def visit_Raise(self, node: cst.Raise) -> None:
        self.found = True

    def visit_Return(self, node: cst.Return) -> None:
        self.found = True
