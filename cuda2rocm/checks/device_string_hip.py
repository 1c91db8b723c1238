"""device-string-hip: "hip"/"rocm" used as a torch device string.

ROCm tensors live on the "cuda" device type, so the fix is to "cuda" (keeping any index). Only
literals in device positions are reported; the same word in a log message is not. A comparison
such as `x.device.type == "hip"` is reported without a fix: it is always False on ROCm, and the
intent (detect AMD) is `torch.version.hip`.
"""

from __future__ import annotations

import re

import libcst as cst

from cuda2rocm.frontends.python import NameAware, requote, string_value

DEVICE = re.compile(r"^(hip|rocm)(:\d+)?$")
#: Callables whose first positional argument is a device (type).
DEVICE_FIRST = {
    "torch.device",
    "torch.autocast",
    "torch.amp.autocast",
    "torch.amp.GradScaler",
    "torch.get_autocast_dtype",
    "torch.is_autocast_available",
}
DEVICE_KEYWORDS = {"device", "device_type", "map_location"}


class Rule(NameAware):
    #: findings and their reasons hold a token themselves: no name is followed to one
    FOLLOWS = False

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = string_value(node)
        if value is None or not DEVICE.match(value):
            return
        parent = self.parent(node)
        if isinstance(parent, cst.Arg):
            if self._device_argument(parent):
                new = "cuda" + value[len(value.split(":")[0]) :]
                self.report(
                    node,
                    f'"{value}" is not a usable device on ROCm; ROCm GPUs are the "cuda" '
                    f'device type, use "{new}"',
                    self.fix(self.replace(node, requote(node, new)), description=f'use "{new}"'),
                )
        elif isinstance(parent, cst.ComparisonTarget) and isinstance(
            parent.operator, (cst.Equal, cst.NotEqual)
        ):
            comparison = self.parent(parent)
            if isinstance(comparison, cst.Comparison) and _is_device_type(comparison.left):
                self.report(
                    comparison,
                    f'a device type is never "{value}" on ROCm (it is "cuda"); to detect an '
                    "AMD GPU test torch.version.hip",
                )

    def _device_argument(self, arg: cst.Arg) -> bool:
        call = self.parent(arg)
        if not isinstance(call, cst.Call):
            return False
        if arg.keyword is not None:
            return arg.keyword.value in DEVICE_KEYWORDS
        if arg.star or call.args[0] is not arg:
            return False
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "to":
            return True
        return bool(self.qualified_names(call.func) & DEVICE_FIRST)


def _is_device_type(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "type"
