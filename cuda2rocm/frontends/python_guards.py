"""Where a Python node stands with respect to vendor branching, shared by the Python rules.

A use is *ROCm-aware* when a condition around it already tells ROCm from CUDA: it sits in an
`if`/`elif`/`else`, a conditional expression, a `while`, an `assert` or a boolean expression whose
test reads one of the given names (by default `torch.version.hip`), or in a later branch of an
`if`/`elif` chain where an earlier test reads one. `if torch.version.hip: ... elif ...: ...`
is the spelling PyTorch's HIP notes recommend. With `early_exit`, a statement that follows, in
the same block, an `if <vendor test>:` whose body always leaves the block (`return`, `raise`,
`continue`, `break`) counts too, when that test is true exactly on ROCm:

    if torch.version.hip:
        return rocm_path()
    cuda_only_code()   # ROCm never gets here
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst
from libcst.metadata import ScopeProvider

from cuda2rocm.context.python_paths import ROCM_FLAGS as _FLAGS
from cuda2rocm.frontends.python import ParentAware, dotted

HIP = "torch.version.hip"
#: Tests that are true exactly on ROCm builds: one table of vendor facts, shared with the
#: context model (`cuda2rocm.context.python_paths.FACTS`, which cites the torch source).
ROCM_FLAGS = _FLAGS
#: Containers whose test decides a branch.
TESTS = (cst.If, cst.IfExp, cst.While, cst.Assert)


class QualifiedFinder(cst.CSTVisitor):
    """Counts the attributes in a subtree that resolve to one of `qualified`, or whose attribute
    name is one of `attributes` (e.g. `props.gcnArchName`)."""

    def __init__(
        self, rule: ParentAware, qualified: Iterable[str], attributes: Iterable[str] = ()
    ) -> None:
        super().__init__()
        self.rule = rule
        self.qualified = frozenset(qualified)
        self.tails = {q.rsplit(".", 1)[-1] for q in self.qualified}
        self.attributes = frozenset(attributes)
        self.count = 0

    def visit_Attribute(self, node: cst.Attribute) -> None:
        name = node.attr.value
        if name in self.attributes or (
            name in self.tails and self.qualified & self.rule.qualified_names(node)
        ):
            self.count += 1


def count_qualified(rule: ParentAware, node: cst.CSTNode, qualified: Iterable[str]) -> int:
    finder = QualifiedFinder(rule, qualified)
    node.visit(finder)
    return finder.count


class VendorGuard:
    """Answers "is this use inside a branch that already tells ROCm from CUDA?" for one rule.

    `qualified`: the names whose presence in a test makes it a vendor test;
    `attributes`: attribute names that do the same (`gcnArchName` exists only on ROCm);
    `follow_names`: also accept a name bound once, in the same scope, to an expression that
    reads one of them (`IS_ROCM = torch.version.hip is not None` ... `if IS_ROCM:`);
    `early_exit`: also accept statements after an `if <vendor test>: return ...` in their block.
    """

    def __init__(
        self,
        rule: ParentAware,
        qualified: Iterable[str] = (HIP,),
        attributes: Iterable[str] = (),
        follow_names: bool = False,
        early_exit: bool = False,
    ) -> None:
        self.rule = rule
        self.early_exit = early_exit
        self.qualified = tuple(qualified)
        self.attributes = tuple(attributes)
        self.follow_names = follow_names
        self._cache: dict[int, bool] = {}
        self._seen: set[tuple[str, int]] = set()
        self._exits: dict[int, tuple[int | None, dict[int, int]]] = {}

    def rocm_aware(self, use: cst.CSTNode) -> bool:
        for ancestor in self.rule.ancestors(use):
            if isinstance(ancestor, (*TESTS, cst.BooleanOperation)):
                subject = getattr(ancestor, "test", ancestor)
                if self.mentions(subject):
                    return True
            if isinstance(ancestor, cst.If) and self._earlier_branch_tests(ancestor):
                return True
            if self.early_exit and self._after_vendor_exit(ancestor):
                return True
        return False

    def _after_vendor_exit(self, statement: cst.CSTNode) -> bool:
        """`statement` follows, in its block, an `if <ROCm>:` that always leaves it (an early
        exit on a CUDA test leaves the ROCm path below, which still needs checking)."""
        block = self.rule.parent(statement)
        if not isinstance(block, (cst.Module, cst.IndentedBlock)):
            return False
        key = id(block)
        if key not in self._exits:
            # Computed once per block: the index of the first ROCm early exit, and each
            # statement's index (so that a rule with many findings stays linear).
            first = None
            for index, earlier in enumerate(block.body):
                if (
                    isinstance(earlier, cst.If)
                    and earlier.orelse is None
                    and _leaves(earlier.body)
                    and self.positive_hip(earlier.test)
                ):
                    first = index
                    break
            positions = {id(s): i for i, s in enumerate(block.body)} if first is not None else {}
            self._exits[key] = (first, positions)
        first, positions = self._exits[key]
        return first is not None and positions.get(id(statement), -1) > first

    def _earlier_branch_tests(self, node: cst.If) -> bool:
        parent = self.rule.parent(node)
        while isinstance(parent, cst.If) and parent.orelse is node:
            if self.mentions(parent.test):
                return True
            node, parent = parent, self.rule.parent(parent)
        return False

    def mentions(self, node: cst.CSTNode) -> bool:
        key = id(node)
        if key not in self._cache:
            self._cache[key] = False  # a name bound to itself must not recurse forever
            finder = QualifiedFinder(self.rule, self.qualified, self.attributes)
            node.visit(finder)
            found = finder.count > 0
            if not found and self.follow_names:
                found = any(self._flag(name) for name in _names(node))
            self._cache[key] = found
        return self._cache[key]

    def _flag(self, name: cst.Name) -> bool:
        """`name` is bound exactly once, by an assignment whose value is a vendor test."""
        value = self._bound_value(name)
        return value is not None and self.mentions(value)

    def _bound_value(self, name: cst.Name) -> cst.BaseExpression | None:
        """The value of the single `name = value` that binds `name` where it is read."""
        if not _has_scope(self.rule):
            return None
        # Scope analysis walks the whole file: first rule out, at C speed, names that no
        # assignment binds to anything these tests read.
        candidates = self.rule.context.bound_to((*self.qualified, *ROCM_FLAGS), self.attributes)
        if candidates is not None and name.value not in candidates:
            return None
        scope = self.rule.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return None
        accesses = [a for a in scope.accesses[name.value] if a.node is name]
        if len(accesses) != 1 or len(accesses[0].referents) != 1:
            return None
        binding = getattr(next(iter(accesses[0].referents)), "node", None)
        target = self.rule.parent(binding) if isinstance(binding, cst.Name) else None
        assign = self.rule.parent(target) if isinstance(target, cst.AssignTarget) else None
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
            return assign.value
        if isinstance(target, cst.AnnAssign) and target.target is binding:
            return target.value
        return None

    def positive_hip(self, test: cst.CSTNode) -> bool:
        """`test` is true exactly on ROCm: `torch.version.hip`, `IS_HIP_EXTENSION`,
        `torch.version.hip is not None`, or a flag bound once to one of these."""
        if isinstance(test, (cst.Attribute, cst.Name)) and (
            self.rule.qualified_names(test) & ROCM_FLAGS
        ):
            return True
        if isinstance(test, cst.Name) and self.follow_names:
            key = ("positive", id(test))
            if key in self._seen:
                return False
            self._seen.add(key)
            value = self._bound_value(test)
            return value is not None and self.positive_hip(value)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            return (
                isinstance(target.operator, (cst.IsNot, cst.NotEqual))
                and isinstance(target.comparator, cst.Name)
                and target.comparator.value == "None"
                and self.positive_hip(test.left)
            )
        return False


def _leaves(block: cst.BaseSuite) -> bool:
    """The block's last statement is `return`, `raise`, `continue` or `break`."""
    if isinstance(block, cst.IndentedBlock):
        if not block.body:
            return False
        last = block.body[-1]
        if not isinstance(last, cst.SimpleStatementLine):
            return False
        small = last.body[-1]
    else:
        small = block.body[-1] if block.body else None
    return isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break))


def _has_scope(rule: ParentAware) -> bool:
    """Every rule can resolve scopes (on demand, see `PythonRule.get_metadata`)."""
    return getattr(rule, "context", None) is not None


class _NameCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[cst.Name] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        # `a.b`: only the root `a` can be a flag bound in this file.
        node.value.visit(self)
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        return False


def _names(node: cst.CSTNode) -> list[cst.Name]:
    collector = _NameCollector()
    node.visit(collector)
    return collector.names


def torch_name(module: cst.Module) -> str | None:
    """The name a module-level `import torch` / `import torch as T` binds, else None."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.Import):
                continue
            for alias in small.names:
                if isinstance(alias.name, cst.Name) and alias.name.value == "torch":
                    if alias.asname is None:
                        return "torch"
                    if isinstance(alias.asname.name, cst.Name):
                        return alias.asname.name.value
    return None


class NvidiaUse(cst.CSTVisitor):
    """The first import or use of an NVIDIA-only package in a block."""

    def __init__(self, rule: ParentAware, packages: frozenset[str]) -> None:
        super().__init__()
        self.rule, self.packages = rule, packages
        self.found: str | None = None

    def _hit(self, module: str | None) -> bool:
        if module and self.found is None and module.split(".")[0] in self.packages:
            self.found = module
        return self.found is None

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            self._hit(dotted(alias.name))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if not node.relative and node.module is not None:
            self._hit(dotted(node.module))
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        for name in sorted(self.rule.qualified_names(node)):
            if not self._hit(name):
                return False
        return self.found is None

    def visit_Name(self, node: cst.Name) -> None:
        for name in sorted(self.rule.qualified_names(node)):
            self._hit(name)
