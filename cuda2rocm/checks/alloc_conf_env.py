"""alloc-conf-env: CUDA-named memory settings, honoured on ROCm, and variants that disagree.

ROCm reads PYTORCH_CUDA_ALLOC_CONF (then PYTORCH_HIP_ALLOC_CONF, then PYTORCH_ALLOC_CONF),
PYTORCH_NO_CUDA_MEMORY_CACHING and CUBLAS_WORKSPACE_CONFIG, so setting them is portable (info).
When a file sets more than one allocator-config variant with different values, which one wins
depends on the torch version and the allocator: that is a warning.
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware
from cuda2rocm.frontends.python_env import EnvWrite, env_write
from cuda2rocm.model import Severity

ALLOC = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
PORTABLE = {
    "PYTORCH_CUDA_ALLOC_CONF": "ROCm builds read it before PYTORCH_HIP_ALLOC_CONF and "
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING": "ROCm accepts it for ease of porting",
    "CUBLAS_WORKSPACE_CONFIG": "ROCm accepts it for ease of porting (hipBLAS/hipBLASLt)",
}


WATCHED = frozenset(ALLOC) | frozenset(PORTABLE)


class Rule(NameAware):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._writes: list[EnvWrite] = []

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        write = env_write(self, node, WATCHED)
        if write is not None and (write.name in ALLOC or write.name in PORTABLE):
            self._writes.append(write)

    def leave_Module(self, original_node: cst.Module) -> None:
        alloc = [w for w in self._writes if w.name in ALLOC]
        values = {self._value(w) for w in alloc}
        disagree = len({w.name for w in alloc}) > 1 and (len(values) > 1 or None in values)
        for write in self._writes:
            if disagree and write.name in ALLOC:
                others = sorted({w.name for w in alloc} - {write.name})
                self.report(
                    write.key,
                    f"{write.name} is set here and {', '.join(others)} elsewhere in this file "
                    "with a different (or unknown) value; which one wins differs between "
                    "allocators and torch versions (CUDA/ROCm caching allocator: "
                    "PYTORCH_CUDA_ALLOC_CONF, then PYTORCH_HIP_ALLOC_CONF on ROCm, then "
                    "PYTORCH_ALLOC_CONF; the generic allocator config: PYTORCH_ALLOC_CONF "
                    "first); set one variable, or the same value in all",
                    severity=Severity.WARNING,
                )
            elif write.name in PORTABLE:
                self.report(
                    write.key,
                    f"{write.name} works on ROCm: {PORTABLE[write.name]}; nothing to change",
                )

    def _value(self, write: EnvWrite) -> str | None:
        if write.value is None:
            return None
        return self.text(write.value)
