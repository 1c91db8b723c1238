"""tf32-flags: TF32 switches, which act only on MI300-class GPUs under ROCm.

Informational, never rewritten: the flags are harmless no-ops elsewhere, but results of
tolerance-sensitive code may differ on MI300.
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware, string_value
from cuda2rocm.frontends.python_guards import HIP, VendorGuard

ALLOW = {"torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32"}
PRECISION_ATTR = "fp32_precision"
SET_PRECISION = {"torch.set_float32_matmul_precision"}
TF32_PRECISIONS = {"high", "medium"}


class Rule(NameAware):
    #: findings and their reasons hold a token themselves: no name is followed to one
    FOLLOWS = False

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._guard = VendorGuard(
            self, (HIP, "torch.version.cuda"), follow_names=True, early_exit=True
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Name) and node.value.value in ("False", "None"):
            return
        for target in node.targets:
            attr = target.target
            if not isinstance(attr, cst.Attribute):
                continue
            names = self.qualified_names(attr)
            tf32 = bool(names & ALLOW) or (
                attr.attr.value == PRECISION_ATTR
                and any(n.startswith("torch.backends.") for n in names)
                and string_value(node.value) == "tf32"
            )
            if tf32 and not self._guard.rocm_aware(node):
                self.report(attr, _MESSAGE.format(what=self.text(attr)))

    def visit_Call(self, node: cst.Call) -> None:
        if not node.args or not self.qualified_names(node.func) & SET_PRECISION:
            return
        value = string_value(node.args[0].value)
        if value in TF32_PRECISIONS and not self._guard.rocm_aware(node):
            self.report(node, _MESSAGE.format(what=f'set_float32_matmul_precision("{value}")'))


_MESSAGE = (
    "{what} enables TF32: on ROCm TF32 exists only on MI300-class GPUs (gfx94x/gfx95x, through "
    "hipBLASLt) and is a no-op elsewhere, and MI300's TF32 differs numerically from NVIDIA's; "
    "check tolerance-sensitive results, torch.cuda.is_tf32_supported() tells where it applies"
)
