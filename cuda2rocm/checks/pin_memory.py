"""pin-memory: pinned host memory in data loading, an opt-in note that is never rewritten.

Claims that pinned memory is slower on ROCm could not be verified; HIP documents pinned memory as
the faster path. The rule exists so that a team that measured a difference can find every place.
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware

LOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}


class Rule(NameAware):
    #: findings and their reasons hold a token themselves: no name is followed to one
    FOLLOWS = False

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "pin_memory":
            if not node.args:
                self.report(node.func.attr, _MESSAGE.format(what="Tensor.pin_memory()"))
            return
        if not self.qualified_names(node.func) & LOADERS:
            return
        for arg in node.args:
            off = isinstance(arg.value, cst.Name) and arg.value.value == "False"
            if arg.keyword is not None and arg.keyword.value == "pin_memory" and not off:
                self.report(arg, _MESSAGE.format(what="DataLoader(pin_memory=...)"))


_MESSAGE = (
    "{what} uses pinned host memory; it is supported on ROCm and usually faster, but measure "
    "data loading on the target GPU before tuning it (reports of a ROCm slowdown are unverified)"
)
