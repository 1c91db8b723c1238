"""cuda-means-nvidia: "is there a CUDA GPU?" tests guarding NVIDIA-only code.

`torch.cuda.is_available()`, `tensor.is_cuda` and `device.type == "cuda"` are True on ROCm,
which reuses the CUDA interfaces, so NVIDIA-only code behind them runs on AMD GPUs and fails.
Most such tests are correct, so only a test whose branch imports or calls a package from the
rule's table of NVIDIA-only packages is reported (opt-in, info, no fix).
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware, string_value
from cuda2rocm.frontends.python_guards import HIP, NvidiaUse, VendorGuard

IS_AVAILABLE = {"torch.cuda.is_available"}


class Rule(NameAware):
    #: findings and their reasons hold a token themselves: no name is followed to one
    FOLLOWS = False

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.packages = frozenset(self.spec.tables.get("nvidia_only", []))
        self._guard = VendorGuard(
            self, (HIP,), attributes=("gcnArchName",), follow_names=True, early_exit=True
        )

    def visit_If(self, node: cst.If) -> None:
        self._branch(node, node.test, node.body)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._branch(node, node.test, node.body)

    def _branch(self, node: cst.CSTNode, test: cst.CSTNode, body: cst.CSTNode) -> None:
        check = _CudaCheck(self)
        test.visit(check)
        if check.found is None or self._guard.mentions(test) or self._guard.rocm_aware(node):
            return
        used = NvidiaUse(self, self.packages)
        body.visit(used)
        if used.found is None:
            return
        what = self.text(check.found)
        self.report(
            check.found,
            f"{what} is also True on ROCm (ROCm reuses torch.cuda), but this branch uses "
            f"{used.found}, which is NVIDIA-only; add `and not torch.version.hip` or a ROCm "
            "branch if the code is vendor-specific",
        )


class _CudaCheck(cst.CSTVisitor):
    """The first CUDA-availability test in an expression."""

    def __init__(self, rule: Rule) -> None:
        super().__init__()
        self.rule = rule
        self.found: cst.CSTNode | None = None

    def visit_Call(self, node: cst.Call) -> bool:
        if self.found is None and self.rule.qualified_names(node.func) & IS_AVAILABLE:
            self.found = node
        return self.found is None

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if self.found is None and node.attr.value == "is_cuda":
            self.found = node
        return self.found is None

    def visit_Comparison(self, node: cst.Comparison) -> bool:
        if self.found is None and len(node.comparisons) == 1:
            other = node.comparisons[0].comparator
            left = node.left
            if (
                isinstance(node.comparisons[0].operator, cst.Equal)
                and isinstance(left, cst.Attribute)
                and left.attr.value == "type"
                and string_value(other) == "cuda"
            ):
                self.found = node
        return self.found is None
