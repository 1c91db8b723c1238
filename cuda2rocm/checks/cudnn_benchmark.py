"""cudnn-benchmark: `torch.backends.cudnn.benchmark = True`, a warm-up trap with MIOpen.

Portable, so informational and never rewritten; the note points at MIOPEN_FIND_MODE.
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware
from cuda2rocm.frontends.python_guards import HIP, VendorGuard

BENCHMARK = "torch.backends.cudnn.benchmark"


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
            if (
                isinstance(attr, cst.Attribute)
                and attr.attr.value == "benchmark"
                and BENCHMARK in self.qualified_names(attr)
                and not self._guard.rocm_aware(node)
            ):
                self.report(
                    attr,
                    "cudnn.benchmark=True makes MIOpen run an exhaustive search (and update its "
                    "find database) for every new convolution shape on ROCm, which can take "
                    "minutes per shape on a cold cache; keep it for long static-shape runs, and "
                    "consider MIOPEN_FIND_MODE=FAST for dynamic shapes or short jobs",
                )
