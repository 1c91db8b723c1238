"""device-capability-gate: CUDA compute-capability numbers compared to gate features.

On ROCm `torch.cuda.get_device_capability()` (and `get_device_properties().major/.minor`)
return the GFX IP version (MI210/MI250 -> (9, 0), MI300 -> (9, 4)), so a comparison with a
CUDA compute capability means something else there. Values are followed through names bound
once (`cap = ...`, `major, minor = ...`, `props = get_device_properties(0)`), subscripts
(`cap[0]`) and arithmetic (`major * 10 + minor`). A comparison inside a branch that already
tells ROCm from CUDA is not reported. No automatic fix: the right ROCm threshold or feature
query is a human decision.
"""

from __future__ import annotations

import ast
import re

import libcst as cst
from libcst.metadata import ScopeProvider

from cuda2rocm.frontends.python import NameAware, string_value
from cuda2rocm.frontends.python_fast import parse_ast, statements
from cuda2rocm.frontends.python_guards import HIP, VendorGuard
from cuda2rocm.model import Severity

CAPABILITY = {"torch.cuda.get_device_capability"}
PROPERTIES = {"torch.cuda.get_device_properties"}
ARCH_LIST = {"torch.cuda.get_arch_list"}
VENDOR_TESTS = (HIP, "torch.version.cuda", "torch.utils.cpp_extension.IS_HIP_EXTENSION")
ORDER = (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)
BF16 = re.compile(r"bf16|bfloat16", re.IGNORECASE)

CAP, PROPS, PART = "capability", "properties", "number"
#: Words whose presence in an assigned value can make the target a capability value.
QUERY_WORDS = {"get_device_capability", "get_device_properties", "major", "minor"}


class Rule(NameAware):
    #: the fast pass follows names as `kind` does: into a name's one assignment's value, and
    #: there only through callees, attributes, subscripts, arithmetic and tuples
    FOLLOWS = "values"

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._guard = VendorGuard(
            self, VENDOR_TESTS, attributes=("gcnArchName",), follow_names=True, early_exit=True
        )
        self._kinds: dict[int, str | None] = {}
        self._candidates: frozenset[str] | None = None

    # -- what is a capability value --------------------------------------------------------
    def kind(self, node: cst.CSTNode) -> str | None:
        key = id(node)
        if key not in self._kinds:
            self._kinds[key] = None  # cycles (x = x + 1) end here
            self._kinds[key] = self._kind(node)
        return self._kinds[key]

    def _kind(self, node: cst.CSTNode) -> str | None:
        if isinstance(node, cst.Call):
            names = self.qualified_names(node.func)
            if names & CAPABILITY:
                return CAP
            if names & PROPERTIES:
                return PROPS
            return None
        if isinstance(node, cst.Attribute):
            if node.attr.value in ("major", "minor") and self.kind(node.value) == PROPS:
                return PART
            return None
        if isinstance(node, cst.Subscript):
            return PART if self.kind(node.value) == CAP else None
        if isinstance(node, cst.BinaryOperation):
            sides = (self.kind(node.left), self.kind(node.right))
            return PART if PART in sides or CAP in sides else None
        if isinstance(node, cst.Tuple):
            kinds = [self.kind(e.value) for e in node.elements]
            return CAP if kinds and all(k == PART for k in kinds) else None
        if isinstance(node, cst.Name):
            return self._name_kind(node)
        return None

    def _name_kind(self, name: cst.Name) -> str | None:
        """The kind of the value a name was bound to, when it was bound exactly once."""
        if name.value not in self._bound_to_device_queries():
            return None  # cheap: most names compared with numbers are loop counters
        scope = self.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return None
        accesses = [a for a in scope.accesses[name.value] if a.node is name]
        if len(accesses) != 1:
            return None
        referents = list(accesses[0].referents)
        if len(referents) != 1:
            return None
        target = getattr(referents[0], "node", None)
        if not isinstance(target, cst.Name):
            return None
        # `x = value` or `a, b = value` (one level of unpacking).
        parent = self.parent(target)
        index = None
        if isinstance(parent, cst.Element):
            sequence = self.parent(parent)
            if not isinstance(sequence, (cst.Tuple, cst.List)):
                return None
            index = [e for e in sequence.elements].index(parent)
            parent = self.parent(sequence)
        if not isinstance(parent, cst.AssignTarget):
            return None
        assign = self.parent(parent)
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        value_kind = self.kind(assign.value)
        if index is None:
            return value_kind
        return PART if value_kind == CAP and index < 2 else None

    def _bound_to_device_queries(self) -> frozenset[str]:
        """Names assigned anywhere from an expression that mentions a device query (read with
        the standard library's parser; scope analysis then runs only for these)."""
        if self._candidates is None:
            tree = parse_ast(self.source.text)
            flows = []  # (words in the value, names assigned)
            # Assignments are statements: only statements are walked, not every expression.
            for node in statements(tree.body) if tree is not None else ():
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    words = {getattr(n, "attr", getattr(n, "id", "")) for n in ast.walk(node.value)}
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
                    flows.append((words, bound))
            names: set[str] = set()
            changed = True
            while changed:  # follow `cap = query(); major = cap[0]` to a fixed point
                changed = False
                for words, bound in flows:
                    if words & (QUERY_WORDS | names) and not bound <= names:
                        names |= bound
                        changed = True
            self._candidates = frozenset(names)
        return self._candidates

    # -- gates -----------------------------------------------------------------------------
    def visit_Comparison(self, node: cst.Comparison) -> None:
        left = node.left
        for target in node.comparisons:
            right = target.comparator
            if isinstance(target.operator, (cst.In, cst.NotIn)):
                if self._arch_list_test(left, right):
                    if not self._guard.rocm_aware(node):
                        self.report(node, _ARCH_LIST)
                    return
                # `cap in ((8, 0), (9, 0))`
                if _collection_of_numbers(right) and self.kind(left) in (CAP, PART):
                    if not self._guard.rocm_aware(node):
                        self._gate(node, target, True, right)
                    return
            if isinstance(target.operator, (*ORDER, cst.Equal, cst.NotEqual)):
                for value, literal in ((left, right), (right, left)):
                    if _number_or_tuple(literal) and self.kind(value) in (CAP, PART):
                        if not self._guard.rocm_aware(node):
                            self._gate(node, target, value is left, literal)
                        return
            left = right

    def _arch_list_test(self, needle: cst.CSTNode, haystack: cst.CSTNode) -> bool:
        value = string_value(needle)
        return (
            value is not None
            and value.startswith(("sm_", "compute_"))
            and isinstance(haystack, cst.Call)
            and bool(self.qualified_names(haystack.func) & ARCH_LIST)
        )

    def _gate(
        self, node: cst.Comparison, target: cst.ComparisonTarget, left: bool, literal
    ) -> None:
        if len(node.comparisons) == 1 and _same_side_as_ampere(
            target.operator, left, literal, self.text(node)
        ):
            self.report(
                node,
                "on ROCm this compute-capability test takes the same side as on an A100 "
                "(sm_80): get_device_capability() returns the GFX IP version there (9.x and "
                "later on every GPU current ROCm supports), so ROCm gets the Ampere-level path, "
                "which works there; a feature query (torch.cuda.is_bf16_supported()) states "
                "the intent on both platforms",
                severity=Severity.INFO,
            )
            return
        if self._generic_bf16_gate(node, target, left, literal):
            self.report(
                node,
                "this compute-capability gate is also True on every GPU current ROCm supports "
                "(get_device_capability() returns the GFX IP version there, 9.x and later), "
                "where bfloat16 is supported too, so it works; torch.cuda.is_bf16_supported() "
                "states the intent on both platforms",
                severity=Severity.INFO,
            )
            return
        message = (
            "compute-capability gate: on ROCm get_device_capability() and "
            "get_device_properties().major/.minor return the GFX IP version (MI210/MI250 "
            "-> (9, 0), MI300 -> (9, 4)), not a CUDA compute capability, so this test picks "
            "the wrong path on AMD GPUs; use a feature query (torch.cuda.is_bf16_supported(), "
            "torch.cuda.is_tf32_supported()) or branch on torch.version.hip and "
            "get_device_properties().gcnArchName"
        )
        if is_test_or_benchmark(self.source.path):
            # In a test or a benchmark the gate selects which cases run (coverage), it does not
            # choose the kernel or format a user's program gets: worth a look, not an action.
            self.report(
                node,
                message + "; here, in a test or benchmark, it only selects which cases run",
                severity=Severity.INFO,
            )
            return
        self.report(node, message)

    def _generic_bf16_gate(self, node, target, left: bool, literal) -> bool:
        """`>= (8, 0)` / `>= 8` / `> 7` (Ampere or newer) deciding something about bfloat16."""
        first = _first_number(literal)
        op = target.operator
        if not left:  # `(8, 0) <= cap` reads as `cap >= (8, 0)`
            op = {
                cst.LessThanEqual: cst.GreaterThanEqual(),
                cst.LessThan: cst.GreaterThan(),
            }.get(type(op), op)
        ampere = (isinstance(op, cst.GreaterThanEqual) and first == 8 and _rest_zero(literal)) or (
            isinstance(op, cst.GreaterThan) and first == 7 and not isinstance(literal, cst.Tuple)
        )
        return ampere and bool(BF16.search(self._context_text(node)))

    def _context_text(self, node: cst.CSTNode) -> str:
        """The code the gate decides: the branch it opens, the value it picks, the name it sets,
        and the name of the function it sits in."""
        parts = []
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.If):
                parts.append(self.text(ancestor.body))
                break
            if isinstance(ancestor, cst.IfExp):
                parts.append(self.text(ancestor.body))
                break
            if isinstance(ancestor, cst.SimpleStatementLine):
                parts.append(self.text(ancestor))
                break
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                parts.append(ancestor.name.value)
                break
        return "\n".join(parts)


_TEST_DIRS = frozenset({"test", "tests", "testing", "benchmark", "benchmarks", "bench", "benchs"})
_TEST_NAME = re.compile(r"^(test_.*|.*_test|conftest|bench(mark)?_.*)\.py$")


def is_test_or_benchmark(path: str) -> bool:
    """A test module or a benchmark script, by the layout pytest and most projects use: a
    `tests/` or `benchmarks/` folder, or a `test_*.py` / `*_test.py` / `bench_*.py` name."""
    parts = re.split(r"[\\/]", path)
    # The two folders above the file: where the project keeps it (a checkout that itself sits
    # under someone's `tests/` folder is not a test module for that).
    return bool(_TEST_DIRS.intersection(parts[-3:-1])) or bool(_TEST_NAME.match(parts[-1]))


#: Capabilities ROCm reports (GFX IP major, minor) for the GPUs current ROCm supports:
#: MI100/MI200 (gfx908/gfx90a) 9.0, MI300 (gfx942) 9.4, MI355X (gfx950) 9.5, RDNA2 (gfx1030)
#: 10.3, RDNA3 (gfx1100) 11.0, RDNA4 (gfx1200) 12.0 (ROCm GPU specifications; HIP's
#: hipDeviceProp_t major/minor).
_ROCM_CAPS = ((9, 0), (9, 4), (9, 5), (10, 3), (11, 0), (12, 0))
_AMPERE = (8, 0)
_COMPARE = {
    cst.GreaterThan: lambda a, b: a > b,
    cst.GreaterThanEqual: lambda a, b: a >= b,
    cst.LessThan: lambda a, b: a < b,
    cst.LessThanEqual: lambda a, b: a <= b,
}


def _same_side_as_ampere(op: cst.BaseCompOp, left: bool, literal, text: str) -> bool:
    """An ordering test whose result is the same on every GPU ROCm supports as on an A100
    (`major >= 8`, `cap >= (8, 0)`, `cap < (7, 5)`, `major * 10 + minor >= 80`): ROCm then
    behaves like an Ampere-or-newer NVIDIA GPU, which is what such a gate admits. A test that
    tells ROCm apart from an A100 (`>= (9, 0)`, `== 8`, `(8, 6) <= cap`) stays a warning. Only
    major-scale values: a `.minor`-only operand is not judged."""
    compare = _COMPARE.get(type(op))
    if compare is None or ("minor" in text and "major" not in text and "*" not in text):
        return False

    def point(cap: tuple[int, int]):
        if isinstance(literal, cst.Tuple):
            return cap[: len(literal.elements)]
        value = _first_number(literal)
        if value is None:
            return None
        if value >= 20:  # major * 10 + minor
            return cap[0] * 10 + cap[1]
        if isinstance(literal, cst.Float):  # float(f"{major}.{minor}")
            return cap[0] + cap[1] / 10
        return cap[0]

    if isinstance(literal, cst.Tuple):
        try:
            bound = tuple(e.value.evaluated_value for e in literal.elements)
        except AttributeError:
            return False
    else:
        bound = _first_number(literal)
    if bound is None:
        return False

    def result(cap: tuple[int, int]) -> bool:
        value = point(cap)
        return compare(value, bound) if left else compare(bound, value)

    ampere = result(_AMPERE)
    return all(result(cap) == ampere for cap in _ROCM_CAPS)


def _number_or_tuple(node: cst.CSTNode) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.Tuple):
        return bool(node.elements) and all(
            isinstance(e.value, (cst.Integer, cst.Float)) for e in node.elements
        )
    return False


def _collection_of_numbers(node: cst.CSTNode) -> bool:
    if not isinstance(node, (cst.List, cst.Tuple, cst.Set)) or not node.elements:
        return False
    return all(_number_or_tuple(e.value) for e in node.elements)


def _first_number(node: cst.CSTNode) -> float | None:
    if isinstance(node, cst.Tuple):
        node = node.elements[0].value
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.evaluated_value)
    return None


def _rest_zero(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Tuple):
        return True
    return all(float(e.value.evaluated_value) == 0 for e in node.elements[1:])


_ARCH_LIST = (
    "torch.cuda.get_arch_list() lists gfx targets (e.g. 'gfx90a', 'gfx942') on ROCm, never "
    "sm_XX, so this test is always False on AMD GPUs; branch on torch.version.hip"
)
