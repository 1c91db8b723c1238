"""cudnn-version-gate: `torch.backends.cudnn.version()` compared with a cuDNN version number.

On ROCm the number is MIOpen's version (major*1000000 + minor*1000 + patch), so a cuDNN
threshold means nothing there. The safe fix puts `not torch.version.hip and` in front of the
comparison: exactly the old value on CUDA (torch.version.hip is None), False on ROCm.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ScopeProvider

from cuda2rocm.frontends.python import NameAware, root_name
from cuda2rocm.frontends.python_guards import HIP, VendorGuard, torch_name

VERSION = {"torch.backends.cudnn.version"}
VENDOR_TESTS = (HIP, "torch.version.cuda")


class Rule(NameAware):
    #: the fast pass follows names as this rule does: into a name's one assignment's value
    #: (a call or a name)
    FOLLOWS = "values"

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._guard = VendorGuard(self, VENDOR_TESTS, follow_names=True, early_exit=True)
        self._torch: str | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self._torch = torch_name(node)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(t.comparator for t in node.comparisons)]
        if not any(isinstance(o, (cst.Integer, cst.Float)) for o in operands):
            return
        call = next((c for o in operands if (c := self._version_call(o)) is not None), None)
        if call is None or self._guard.rocm_aware(node):
            return
        fix = None
        name = self._torch_for(call)
        if name is not None:
            fix = self.fix(
                self.replace(node, f"(not {name}.version.hip and {self.text(node)})"),
                description="skip the cuDNN version test on ROCm",
            )
        self.report(
            node,
            "torch.backends.cudnn.version() is MIOpen's version on ROCm (major*1000000 + "
            "minor*1000 + patch, e.g. 3.1.0 -> 3001000), so a cuDNN version threshold is "
            "meaningless there; test it only when torch.version.hip is not set",
            fix,
        )

    def _version_call(self, node: cst.CSTNode) -> cst.Call | None:
        if isinstance(node, cst.Call) and self.qualified_names(node.func) & VERSION:
            return node
        if isinstance(node, cst.Name):
            value = self._bound_once(node)
            if value is not None:
                return self._version_call(value)
        return None

    def _bound_once(self, name: cst.Name) -> cst.BaseExpression | None:
        candidates = self.context.bound_to(VERSION)
        if candidates is not None and name.value not in candidates:
            return None  # bound to nothing that reads the version: no scope analysis
        scope = self.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return None
        accesses = [a for a in scope.accesses[name.value] if a.node is name]
        if len(accesses) != 1 or len(accesses[0].referents) != 1:
            return None
        target = getattr(next(iter(accesses[0].referents)), "node", None)
        assign_target = self.parent(target) if target is not None else None
        assign = self.parent(assign_target) if assign_target is not None else None
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
            return assign.value
        return None

    def _torch_for(self, call: cst.Call) -> str | None:
        """A name for the torch module at this call: the root of `torch.backends.cudnn.version`
        when it is spelled through torch, else a module-level `import torch`."""
        root = root_name(call.func)
        if root is not None and "torch" in self.qualified_names(root):
            return root.value
        return self._torch
