"""nccl-literal: invalid distributed backend names, and NCCL/RCCL variables that do nothing on ROCm.

`backend="nccl"` is right on ROCm (it is RCCL there) and is never reported. The environment
variable names come from the rule's table, so the list is data, dated and cited in the TOML.
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware, requote, string_value
from cuda2rocm.model import Severity

#: Callables whose `backend` argument (keyword, or first positional) names a backend.
BACKEND_FIRST = {
    "torch.distributed.init_process_group",
    "torch.distributed.distributed_c10d.init_process_group",
}
BACKEND_KEYWORD = BACKEND_FIRST | {
    "torch.distributed.new_group",
    "torch.distributed.distributed_c10d.new_group",
    "torch.distributed.new_subgroups",
    "torch.distributed.device_mesh.init_device_mesh",
}


def _mentions(value: str, names: set[str]) -> bool:
    """Cheap pre-check: does a backend string name one of `names`?"""
    return any(part.rpartition(":")[2].strip().lower() in names for part in value.split(","))


class Rule(NameAware):
    #: findings and their reasons hold a token themselves: no name is followed to one
    FOLLOWS = False

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.invalid = {k.lower() for k in self.spec.tables.get("invalid_backends", [])}
        self.env: dict[str, str] = self.spec.tables.get("env", {})

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = string_value(node)
        if value is None:
            return
        if value in self.env:
            self.report(node, f"{value}: {self.env[value]}", severity=Severity.WARNING)
            return
        if self.invalid and _mentions(value, self.invalid) and self._is_backend(node):
            self._backend(node, value)

    def _backend(self, node: cst.SimpleString, value: str) -> None:
        # "nccl", or a device map such as "cpu:gloo,cuda:rccl".
        parts = []
        bad = []
        for part in value.split(","):
            device, sep, name = part.rpartition(":")
            if name.strip().lower() in self.invalid:
                bad.append(name.strip())
                name = "nccl"
            parts.append(f"{device}{sep}{name}")
        if not bad:
            return
        new = ",".join(parts)
        self.report(
            node,
            f'"{bad[0]}" is not a torch.distributed backend; on ROCm the "nccl" backend is RCCL, '
            'use "nccl"',
            self.fix(self.replace(node, requote(node, new)), description=f'use "{new}"'),
        )

    def _is_backend(self, node: cst.SimpleString) -> bool:
        arg = self.parent(node)
        if not isinstance(arg, cst.Arg):
            return False
        call = self.parent(arg)
        if not isinstance(call, cst.Call):
            return False
        names = self.qualified_names(call.func)
        if arg.keyword is not None:
            return arg.keyword.value == "backend" and bool(names & BACKEND_KEYWORD)
        return call.args[0] is arg and bool(names & BACKEND_FIRST)
