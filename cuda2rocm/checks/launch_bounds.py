"""launch-bounds: `__launch_bounds__(MAX_THREADS, MIN_BLOCKS)` — HIP reads the second number
differently.

In HIP the second parameter is the minimum number of warps per execution unit, not CUDA's
minimum blocks per multiprocessor (HIP kernel language reference), and hipify has no
conversion, so occupancy and register limits differ. One-argument bounds mean the same on both.
"""

from __future__ import annotations

from cuda2rocm.frontends.cpp import CppRule


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for node in view.launch_bounds:
            args = [c for c in node.named_children if c.type != "comment"]
            if len(args) < 2:
                continue
            self.report(
                node,
                f"the second argument ({view.text(args[1])}) means minimum blocks per "
                "multiprocessor in CUDA but minimum warps per execution unit in HIP; check the "
                "occupancy you want on AMD GPUs (a per-platform macro keeps both)",
            )
