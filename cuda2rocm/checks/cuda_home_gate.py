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
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware
from cuda2rocm.frontends.python_build import import_edit, under_vendor_test

QUALIFIED = "torch.utils.cpp_extension.CUDA_HOME"
ROCM_AWARE = ("ROCM_HOME", "IS_HIP_EXTENSION", "torch.version.hip")


class Rule(NameAware):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._gates: list[tuple[cst.CSTNode, cst.BaseExpression, str]] = []
        self._paths: list[cst.BaseExpression] = []
        self._module: cst.Module | None = None

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
        if isinstance(parent, (cst.ImportAlias, cst.AssignTarget)):
            return
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

    def _in_test(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> bool:
        if isinstance(parent, (cst.If, cst.IfExp, cst.While)) and parent.test is node:
            return True
        if isinstance(parent, cst.BooleanOperation):
            return True
        return isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)

    def leave_Module(self, original_node: cst.Module) -> None:
        used = bool(self._paths)
        for where, use, kind in self._gates:
            self._gate(where, use, kind, used)
        for use in self._paths:
            self.report(
                use,
                "CUDA_HOME is None on ROCm builds of torch, so this path breaks there; build "
                "ROCm paths from ROCM_HOME (torch.utils.cpp_extension) under IS_HIP_EXTENSION",
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
