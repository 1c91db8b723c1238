"""visible-devices: CUDA_VISIBLE_DEVICES set from Python without its HIP counterpart.

HIP honours CUDA_VISIBLE_DEVICES as an alias in current releases, but HIP_VISIBLE_DEVICES is the
documented variable and newer ROCm documentation lists only it. A file that also sets
HIP_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES is ROCm-aware and not reported. No automatic fix:
a mirrored HIP_VISIBLE_DEVICES is inherited by child processes and, on ROCm, wins over
CUDA_VISIBLE_DEVICES (torch's `_parse_visible_devices`), so a child that later changes only
CUDA_VISIBLE_DEVICES would silently keep the parent's devices.
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends import text
from cuda2rocm.frontends.python import NameAware
from cuda2rocm.frontends.python_env import EnvWrite, env_write
from cuda2rocm.frontends.python_guards import HIP, VendorGuard

CUDA = "CUDA_VISIBLE_DEVICES"
ROCM = {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}


WATCHED = frozenset({CUDA, *ROCM})


class Rule(NameAware):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._writes: list[EnvWrite] = []
        self._rocm_aware_file = False
        self._guard = VendorGuard(
            self, (HIP, "torch.version.cuda"), follow_names=True, early_exit=True
        )

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        write = env_write(self, node, WATCHED)
        if write is None:
            return
        if write.name in ROCM:
            self._rocm_aware_file = True
        elif write.name == CUDA and not self._guard.rocm_aware(node):
            self._writes.append(write)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._rocm_aware_file:
            return
        for write in self._writes:
            self.report(
                write.key,
                "CUDA_VISIBLE_DEVICES is honoured by HIP as an alias in ROCm 6.x/7.x, but "
                "HIP_VISIBLE_DEVICES is the documented variable (newer ROCm docs list only it) "
                "and ROCR_VISIBLE_DEVICES is applied before either; set HIP_VISIBLE_DEVICES to "
                "the same value as well",
            )


class TextRule(text.TextRule):
    """Shell scripts and Dockerfiles: `export`, prefix assignments, `ENV`/`ARG`."""

    def check(self) -> None:
        if any(self.view.assigned(name) for name in ROCM):
            return
        for a in self.view.assignments:
            if a.name == CUDA:
                self.report(
                    a.start,
                    a.start + len(a.name),
                    "CUDA_VISIBLE_DEVICES is honoured by HIP as an alias in ROCm 6.x/7.x, but "
                    "HIP_VISIBLE_DEVICES is the documented variable (newer ROCm docs list only "
                    "it) and ROCR_VISIBLE_DEVICES is applied before either; set "
                    "HIP_VISIBLE_DEVICES to the same value as well",
                )
