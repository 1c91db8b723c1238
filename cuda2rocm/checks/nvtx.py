"""nvtx: `torch.cuda.nvtx` ranges and marks, which ROCm implements with roctx.

Portable and informational: the ranges show in ROCm's profilers instead of Nsight. Only the
calls that open a range or set a mark are reported (their `range_pop`/`range_end` partners add
nothing).
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware

OPENERS = {f"torch.cuda.nvtx.{n}" for n in ("range_push", "range", "range_start", "mark")}


class Rule(NameAware):
    #: findings and their reasons hold a token themselves: no name is followed to one
    FOLLOWS = False

    def visit_Call(self, node: cst.Call) -> None:
        names = self.qualified_names(node.func) & OPENERS
        if names:
            what = sorted(names)[0]
            self.report(
                node.func,
                f"{what} works on ROCm, where torch.cuda.nvtx is implemented with roctx: the "
                "ranges appear in rocprof/rocprofv3 traces, not in Nsight Systems (nsys)",
            )
