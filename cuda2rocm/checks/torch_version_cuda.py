"""torch-version-cuda: `torch.version.cuda` used as "is this a GPU build?" or parsed as a number.

On ROCm it is None. Reading it is fine (logging); testing it for None or truthiness silently
picks the CPU path, and parsing it raises. The safe fix widens a GPU-build test to
`torch.version.hip` and keeps the CUDA behaviour exactly; version parsing needs a human.
A use inside a branch that already tests `torch.version.hip` is ROCm-aware and not reported.
A name bound once to `torch.version.cuda` (`cuda_ver = torch.version.cuda`) is followed.
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import ScopeProvider

from cuda2rocm.catalogue import find_rule
from cuda2rocm.frontends.python import NameAware, dotted, string_value
from cuda2rocm.frontends.python_guards import HIP, TESTS, NvidiaUse, VendorGuard, count_qualified
from cuda2rocm.model import Fix, Safety, Severity

CUDA = "torch.version.cuda"
_ROCM_WORD = re.compile(r"\b(rocm|hip|hipcc|amd)\b", re.I)
_ROCM_PATH = re.compile(
    r"(?<![A-Za-z0-9])(rocm|hip|hipblaslt|amd|gfx\d*|aiter|miopen|rccl|composable_kernel|ck)"
    r"(?![A-Za-z0-9])",
    re.I,
)
PARSERS = {
    "float",
    "int",
    "packaging.version.parse",
    "packaging.version.Version",
    "distutils.version.LooseVersion",
    "distutils.version.StrictVersion",
    "pkg_resources.parse_version",
    "looseversion.LooseVersion",
}


class Rule(NameAware):
    #: the fast pass keeps whole the bodies this rule reports in: it reads the rest of the
    #: block after a test (is CUDA's compiler run there?)
    WHOLE_BODIES = True
    #: a comparison of what a project wrapper of torch.version.cuda returns is reported at the
    #: caller (`if cuda_release() >= (12, 0)`)
    READS_CALLERS = True

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._nvidia_packages: frozenset[str] | None = None
        self._nvcc_flags: frozenset[str] | None = None
        self._guard = VendorGuard(self, (HIP,))
        #: project functions returning a value read from torch.version.cuda, and names bound
        #: to their results (found on the first comparison: most files have none)
        self._wrappers: dict | None = None
        self._results: set[str] = set()
        self._flag_guard = VendorGuard(self, (HIP,), follow_names=True)

    def visit_Comparison(self, comp: cst.Comparison) -> None:
        if self._wrappers is None:
            self._wrappers, self._results = self._find_wrappers(self.context.wrapper.module)
        if self._wrappers or self._results:
            self._wrapper_gate(comp, self._wrappers, self._results)

    def _find_wrappers(self, node: cst.Module) -> tuple[dict, set[str]]:
        # A project wrapper (`def cuda_release(): return torch.version.cuda.split(".")`) is
        # the same version: a comparison of what it returns is a CUDA-version gate too.
        wrappers = {
            f.name.value: f
            for f in _nodes(node, cst.FunctionDef)
            if self._reads_cuda_version(f) and self._returns_version(f)
        }
        results: set[str] = set()  # names bound to a wrapper's result: `rt = cuda_release()`
        assigns = [a for a in _nodes(node, cst.Assign) if len(a.targets) == 1]
        plain = {  # `ver = torch.version.cuda`: the string itself, what parses derive from
            a.targets[0].target.value
            for a in assigns
            if isinstance(a.targets[0].target, cst.Name)
            and isinstance(a.value, (cst.Attribute, cst.Name))
            and CUDA in self.qualified_names(a.value)
        }
        for _ in range(2):  # `major = int(ver[0])` after `ver = torch.version.cuda.split(".")`
            for assign in assigns:
                target = assign.targets[0].target
                if not isinstance(target, cst.Name) or target.value in results:
                    continue
                if _called(assign.value, wrappers) or self._parses_version(
                    assign.value, results | plain
                ):
                    results.add(target.value)
        return wrappers, results

    def _parses_version(self, value: cst.BaseExpression, results: set[str]) -> bool:
        """`int(torch.version.cuda.split(".")[0])`, `tuple(map(int, cuda.split(".")))`,
        `float(ver) if ver else 0`: a number or tuple computed from the CUDA version (or
        from a name bound to one), not a None test or the plain attribute."""
        if isinstance(value, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation)):
            return False
        if not _nodes(value, cst.Call) and not _nodes(value, cst.Subscript):
            return False
        for item in _nodes(value, cst.Attribute) + _nodes(value, cst.Name):
            if isinstance(item, cst.Name) and item.value in results:
                return True
            if CUDA in self.qualified_names(item):
                return True
        return False

    def _wrapper_gate(self, comp: cst.Comparison, wrappers: dict, results: set[str]) -> None:
        sides = [comp.left, *(c.comparator for c in comp.comparisons)]
        if not any(_is_literal(o) or isinstance(o, cst.Tuple) for o in sides):
            return
        name = next(
            (w for o in sides if (w := _called(_base(o), wrappers) or _bound(o, results))),
            None,
        )
        if name is None or self._rocm_aware(comp) or self._in_function(comp, name):
            return
        self.report(
            comp,
            f"`{name}` reads torch.version.cuda (None on ROCm), so this CUDA-version gate "
            "never holds a ROCm version; branch on torch.version.hip first and give ROCm "
            "its own test",
            severity=Severity.WARNING,
        )

    def _reads_cuda_version(self, function: cst.FunctionDef) -> bool:
        text = self.text(function)
        if "version" not in text:
            return False
        if re.search(r"\bversion\.hip\b|IS_HIP_EXTENSION|ROCM_HOME", text):
            return False  # the wrapper answers for ROCm itself
        return any(
            CUDA in self.qualified_names(a)
            for a in _nodes(function, cst.Attribute)
            if a.attr.value == "cuda"
        )

    def _returns_version(self, function: cst.FunctionDef) -> bool:
        """A `return` whose value reads torch.version.cuda, or a name bound from it in the
        function (`major, minor = torch.version.cuda.split(".")` ... `return int(major)`)."""
        bound = {"version.cuda"}
        for assign in _nodes(function, cst.Assign):
            if any(b in self.text(assign.value) for b in bound):
                for target in assign.targets:
                    bound |= {n.value for n in _nodes(target.target, cst.Name)}
        words = {b for b in bound if b != "version.cuda"}
        for ret in _nodes(function, cst.Return):
            if ret.value is None or _is_none(ret.value):
                continue
            text = self.text(ret.value)
            if "version.cuda" in text or words & set(re.findall(r"\w+", text)):
                return True
        return False

    def _in_function(self, node: cst.CSTNode, name: str) -> bool:
        """Inside the wrapper `name` itself (its own uses are reported where they are)."""
        parent = self.parent(node)
        while parent is not None:
            if isinstance(parent, cst.FunctionDef) and parent.name.value == name.rstrip("()"):
                return True
            parent = self.parent(parent)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "cuda" and CUDA in self.qualified_names(node):
            self._check(node, node)

    def visit_Name(self, node: cst.Name) -> None:
        # `from torch.version import cuda as torch_cuda` ... `float(torch_cuda)`: the same value
        parent = self.parent(node)
        binding = isinstance(parent, (cst.ImportAlias, cst.AsName, cst.AssignTarget))
        if binding or (isinstance(parent, cst.Attribute) and parent.value is not node):
            return
        if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef)):
            return
        if CUDA not in self.qualified_names(node) or self._rebound(node):
            return
        self._check(node, node)

    def _rebound(self, node: cst.Name) -> bool:
        """The name is also assigned in its scope (not only imported): not the import's value."""
        scope = self.get_metadata(ScopeProvider, node, None)
        if scope is None:
            return True
        return any(
            not isinstance(a.node, (cst.Import, cst.ImportFrom))
            for a in scope.assignments[node.value]
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        # Follow `ver = torch.version.cuda` to the uses of `ver`.
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        value = node.value
        if not (isinstance(value, cst.Attribute) and CUDA in self.qualified_names(value)):
            return
        target = node.targets[0].target
        scope = self.get_metadata(ScopeProvider, target, None)
        if scope is None:
            return
        assignments = list(scope.assignments[target.value])
        if len(assignments) != 1:
            return
        for ref in assignments[0].references:
            if isinstance(ref.node, cst.Name):
                self._check(ref.node, value)

    # -- classification ------------------------------------------------------------------------
    def _check(self, use: cst.CSTNode, origin: cst.BaseExpression) -> None:
        if self._rocm_aware(use):
            return
        parent = self.parent(use)
        if isinstance(parent, cst.Arg):
            call = self.parent(parent)
            if isinstance(call, cst.Call) and call.args and call.args[0] is parent:
                names = self.qualified_names(call.func) | {dotted(call.func) or ""}
                parser = next((n for n in sorted(names) if n in PARSERS), None)
                if parser:
                    short = parser.rsplit(".", 1)[-1]
                    self.report(
                        call,
                        f"{short}(torch.version.cuda) raises on ROCm, where torch.version.cuda "
                        "is None; branch on torch.version.hip first and compare ROCm versions "
                        "separately",
                    )
            return
        if isinstance(parent, cst.Attribute) and parent.value is use:
            self.report(
                parent,
                f"{self.text(use)}.{parent.attr.value} fails on ROCm (torch.version.cuda is "
                "None there); branch on torch.version.hip first",
            )
            return
        if isinstance(parent, cst.Comparison):
            self._comparison(use, parent, origin)
            return
        if self._is_test(use, parent):
            self._truthiness(use, origin)

    def _comparison(self, use: cst.CSTNode, comp: cst.Comparison, origin: cst.Attribute) -> None:
        if len(comp.comparisons) != 1 or comp.left is not use:
            others = [comp.left, *(c.comparator for c in comp.comparisons)]
            if any(_is_none(o) for o in others):
                self.report(comp, "torch.version.cuda is None on ROCm builds; " + _GPU_ADVICE)
            elif any(_is_literal(o) for o in others):
                self.report(comp, _VERSION_COMPARE)
            return
        target = comp.comparisons[0]
        if isinstance(target.operator, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)) and _is_none(
            target.comparator
        ):
            positive = isinstance(target.operator, (cst.IsNot, cst.NotEqual))
            if positive and (self._version_branch(comp) or self._keeps_nvcc_from_hip(comp)):
                return
            if self._flag_used_with_hip_test(comp):
                return
            fix = None
            if isinstance(use, cst.Attribute):
                hip = f"{self.text(use.value)}.hip"
                op = _OPERATORS[type(target.operator)]
                joined = " or " if positive else " and "
                fix = self._widen(comp, f"({self.text(comp)}{joined}{hip} {op} None)")
            kind = "misses ROCm GPU builds" if positive else "treats ROCm builds as CPU-only"
            self.report(
                comp,
                f"torch.version.cuda is None on ROCm, so this test {kind}; " + _GPU_ADVICE,
                fix,
            )
        elif _is_literal(target.comparator):
            self.report(comp, _VERSION_COMPARE)

    def _version_branch(self, comp: cst.Comparison) -> bool:
        """`if torch.version.cuda is not None: ... torch.version.cuda.split(".") ...`: the test
        guards code that reads the CUDA version, so it means "CUDA build", and ROCm skipping
        the branch is what keeps that code from raising on None. Reported as a note spanning
        the branch (a ROCm port may want its own version check there), never widened."""
        root = self._condition_root(comp)
        owner = self.parent(root)
        if not isinstance(owner, cst.If) or owner.test is not root:
            return False
        reads = _ValueReads(self)
        owner.body.visit(reads)
        if not reads.count:
            return False
        self.report(
            comp,
            "this branch reads the CUDA version (torch.version.cuda is None on ROCm, so ROCm "
            "skips it, which keeps it from raising); do not widen the test to ROCm builds; "
            "if the ROCm build needs the same check, add a torch.version.hip branch",
            severity=Severity.INFO,
            through=owner.body,
        )
        return True

    def _truthiness(self, use: cst.CSTNode, origin: cst.Attribute) -> None:
        fix = None
        if isinstance(use, cst.Attribute):
            fix = self._widen(use, f"({self.text(use)} or {self.text(use.value)}.hip)")
        self.report(
            use,
            "torch.version.cuda is None on ROCm, so this test takes the non-GPU path there; "
            + _GPU_ADVICE,
            fix,
        )

    def _widen(self, node: cst.CSTNode, replacement: str) -> Fix | None:
        """Accept ROCm builds too (`cuda is not None` -> `(cuda is not None or hip is not
        None)`, `cuda is None` -> `(cuda is None and hip is None)`, `cuda` -> `(cuda or hip)`).

        Why this is safe: torch.version.hip is None on every non-ROCm build, so on CUDA (and
        CPU) builds the added operand is False (resp. True for `and`) and the test has exactly
        its old value. On ROCm it now takes the GPU path, which is right only if that path
        never needs torch.version.cuda and no ROCm branch was written for it. So no fix when
        the enclosing function (or module) reads torch.version.cuda anywhere besides this
        test (`torch.version.cuda.split(".")`, `parse(torch.version.cuda)`, after an early
        return: ROCm would now reach them and crash on None), or mentions torch.version.hip
        (an `elif torch.version.hip:` would become dead code). Unsafe when a branch runs
        NVIDIA-only code, where `torch.version.cuda` meant "NVIDIA". No fix either when the
        path the test guards runs CUDA's compiler (an `nvcc` executable, an nvcc-only flag,
        `CUDA_HOME`): there the test means "the nvcc toolchain", and ROCm's is hipcc (torch's
        own ninja writer keeps `--generate-dependencies-with-compile` from hipcc this way)."""
        scope = self._scope(node)
        reads = _ValueReads(self)
        scope.visit(reads)
        if reads.count or count_qualified(self, scope, (HIP,)):
            return None
        if self._runs_nvcc(node):
            return None
        nvidia = self._nvidia_branch(node)
        if nvidia is None:
            return self.fix(self.replace(node, replacement), description="also accept a ROCm build")
        return self.fix(
            self.replace(node, replacement),
            description=f"also accept a ROCm build — review: the branch uses {nvidia}, "
            "which is NVIDIA-only, so the test may mean 'NVIDIA' rather than 'GPU build'",
            safety=Safety.UNSAFE,
        )

    def _runs_nvcc(self, node: cst.CSTNode) -> bool:
        """Whether the path the test guards (its branches, and the rest of the block after an
        early exit) names CUDA's compiler."""
        owner = self.parent(self._condition_root(node))
        if not isinstance(owner, (cst.If, cst.IfExp, cst.While)):
            return False
        region: list[cst.CSTNode] = [owner.body]
        if owner.orelse is not None:
            region.append(owner.orelse)
        block = self.parent(owner)
        body = getattr(block, "body", None)
        if isinstance(owner, cst.If) and isinstance(body, (list, tuple)) and owner in body:
            region += body[body.index(owner) + 1 :]
        if self._nvcc_flags is None:
            self._nvcc_flags = frozenset(find_rule("nvcc-flags").tables.get("flags", {}))
        finder = _NvccUse(self._nvcc_flags)
        for part in region:
            part.visit(finder)
        return finder.found

    def _flag_used_with_hip_test(self, comp: cst.Comparison) -> bool:
        """`is_cuda = torch.version.cuda is not None` ... `if is_not_hip and is_cuda:`: a flag
        bound once whose every use sits in a condition that also tests torch.version.hip (or a
        name bound to it) tells the platforms apart where it is used."""
        assign = self.parent(comp)
        if not isinstance(assign, cst.Assign) or assign.value is not comp:
            return False
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return False
        found = self.single_assignment(assign.targets[0].target)
        if found is None:
            return False
        refs = [r.node for r in found[0].references if isinstance(r.node, cst.Name)]
        return bool(refs) and all(self._flag_guard.rocm_aware(r) for r in refs)

    def _keeps_nvcc_from_hip(self, node: cst.CSTNode) -> bool:
        """`# --generate-dependencies-with-compile is not supported by ROCm` /
        `if torch.version.cuda is not None: ... '--generate-dependencies-with-compile' ...`
        (torch's own ninja writer, copied by projects): a test whose branch holds CUDA's
        compiler or an nvcc-only flag, and whose comment says it leaves ROCm out on purpose,
        is right on ROCm: hipcc must not get that flag."""
        owner = self.parent(self._condition_root(node))
        if not isinstance(owner, cst.If):
            return False
        comments = [line.comment.value for line in owner.leading_lines if line.comment]
        if not any(_ROCM_WORD.search(c) for c in comments):
            return False
        if self._nvcc_flags is None:
            self._nvcc_flags = frozenset(find_rule("nvcc-flags").tables.get("flags", {}))
        finder = _NvccUse(self._nvcc_flags)
        owner.body.visit(finder)
        return finder.found

    def _nvidia_branch(self, node: cst.CSTNode) -> str | None:
        owner = self.parent(self._condition_root(node))
        if not isinstance(owner, (cst.If, cst.IfExp, cst.While)):
            return None
        if self._nvidia_packages is None:
            self._nvidia_packages = frozenset(
                find_rule("cuda-means-nvidia").tables.get("nvidia_only", [])
            )
        for block in (owner.body, owner.orelse):
            if block is not None:
                use = NvidiaUse(self, self._nvidia_packages)
                block.visit(use)
                if use.found:
                    return use.found
        return None

    # -- context -------------------------------------------------------------------------------
    def _is_test(self, use: cst.CSTNode, parent: cst.CSTNode | None) -> bool:
        """Is `use` (possibly under `not` / `and` / `or`) the condition of a branch?"""
        node = use
        while isinstance(parent, (cst.UnaryOperation, cst.BooleanOperation)):
            node, parent = parent, self.parent(parent)
        return isinstance(parent, TESTS) and getattr(parent, "test", None) is node

    def _condition_root(self, node: cst.CSTNode) -> cst.CSTNode:
        parent = self.parent(node)
        while isinstance(
            parent, (cst.UnaryOperation, cst.BooleanOperation, cst.Comparison, cst.ComparisonTarget)
        ):
            node, parent = parent, self.parent(parent)
        return node

    def _scope(self, node: cst.CSTNode) -> cst.CSTNode:
        """The function (or lambda, class body or module) whose code runs after the test."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.Module)):
                return ancestor
        return node

    def _rocm_aware(self, use: cst.CSTNode) -> bool:
        return (
            self._guard.rocm_aware(use)
            or self._later_branch_tests_hip(use)
            or self._else_is_rocm(use)
        )

    def _else_is_rocm(self, use: cst.CSTNode) -> bool:
        """`if torch.version.cuda: return "cutlass_gemm" else: return "ck_gemm"`: the branch
        ROCm takes names ROCm's own stack (composable_kernel, hip, rocm, aiter, gfx...), so the
        test deliberately means "NVIDIA" and the ROCm path exists."""
        root = self._condition_root(use)
        owner = self.parent(root)
        if not isinstance(owner, (cst.If, cst.IfExp)) or owner.test is not root:
            return False
        if self.text(root).strip() != self.text(use).strip():
            return False  # `a and torch.version.cuda`: the else is not only ROCm's
        other = owner.orelse
        if other is None:
            return False
        return bool(_ROCM_PATH.search(self.text(other)))

    def _later_branch_tests_hip(self, use: cst.CSTNode) -> bool:
        """`if torch.version.cuda ...: ... elif torch.version.hip ...:` handles ROCm itself."""
        owner = self.parent(self._condition_root(use))
        if not isinstance(owner, cst.If) or owner.test is not self._condition_root(use):
            return False
        branch = owner.orelse
        while isinstance(branch, cst.If):
            if self._guard.mentions(branch.test):
                return True
            branch = branch.orelse
        return False


class _NvccUse(cst.CSTVisitor):
    """Finds CUDA's compiler in code: a string naming the `nvcc` executable or holding an
    nvcc-only flag (not the `"nvcc"` key of extra_compile_args, which torch hands to hipcc
    on ROCm), or `CUDA_HOME`."""

    EXTRA = frozenset({"--generate-dependencies-with-compile", "--dependency-output"})

    def __init__(self, flags: frozenset[str]) -> None:
        super().__init__()
        self.flags = flags | self.EXTRA
        self.found = False

    def visit_DictElement(self, node: cst.DictElement) -> bool:
        node.value.visit(self)  # the key is a compiler's name for its flag list
        return False

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        text = string_value(node) or ""
        for token in text.split():
            name = token.replace("\\", "/").rsplit("/", 1)[-1]
            if name in ("nvcc", "nvcc.exe") or token.split("=", 1)[0] in self.flags:
                self.found = True

    def visit_Name(self, node: cst.Name) -> None:
        self.found |= node.value == "CUDA_HOME"

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.found |= node.attr.value == "CUDA_HOME"


class _ValueReads(cst.CSTVisitor):
    """Counts the uses of torch.version.cuda in a subtree other than tests for None or
    truthiness (what a widened test would let ROCm reach)."""

    def __init__(self, rule: Rule) -> None:
        super().__init__()
        self.rule = rule
        self.stack: list[cst.CSTNode] = []
        self.count = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if (
            isinstance(node, cst.Attribute)
            and node.attr.value == "cuda"
            and CUDA in self.rule.qualified_names(node)
            and not self._tested(node)
        ):
            self.count += 1
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def _tested(self, node: cst.CSTNode) -> bool:
        child, parents = node, list(reversed(self.stack))
        if parents and isinstance(parents[0], cst.Comparison):
            comp = parents[0]  # a None test reads nothing, wherever its result goes
            return (
                comp.left is node
                and len(comp.comparisons) == 1
                and isinstance(comp.comparisons[0].operator, tuple(_OPERATORS))
                and _is_none(comp.comparisons[0].comparator)
            )
        for parent in parents:
            if isinstance(parent, (cst.UnaryOperation, cst.BooleanOperation)):
                child = parent
                continue
            return isinstance(parent, TESTS) and getattr(parent, "test", None) is child
        return False


_OPERATORS = {cst.Is: "is", cst.IsNot: "is not", cst.Equal: "==", cst.NotEqual: "!="}


def _is_none(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _is_literal(node: cst.CSTNode) -> bool:
    return isinstance(node, (cst.SimpleString, cst.Float, cst.Integer, cst.Tuple))


_GPU_ADVICE = (
    "test `torch.version.cuda or torch.version.hip` for a GPU build, "
    "or torch.cuda.is_available() for a usable GPU"
)


def _nodes(root: cst.CSTNode, kind: type) -> list:
    """Every node of `kind` under `root` (preorder)."""
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        if isinstance(node, kind):
            found.append(node)
        stack.extend(reversed(node.children))
    return found


def _base(node: cst.CSTNode) -> cst.CSTNode:
    """`f()[0]` / `f().major` -> `f()`: the value a subscript or attribute reads from."""
    while isinstance(node, (cst.Subscript, cst.Attribute)):
        node = node.value
    return node


def _called(node: cst.CSTNode, wrappers: dict) -> str | None:
    func = node.func if isinstance(node, cst.Call) else None
    if isinstance(func, cst.Name) and func.value in wrappers:
        return func.value + "()"
    return None


def _bound(node: cst.CSTNode, results: set[str]) -> str | None:
    node = _base(node)
    return node.value if isinstance(node, cst.Name) and node.value in results else None


_VERSION_COMPARE = (
    "comparing torch.version.cuda as a version is wrong on ROCm (it is None there); "
    "branch on torch.version.hip and use a ROCm-specific threshold"
)
