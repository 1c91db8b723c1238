"""cooperative-groups: grid-wide groups and 32-thread tiles, which behave differently on ROCm.

Cooperative groups are supported by HIP (`hip/hip_cooperative_groups.h`), but a grid group's
`sync()` needs a cooperative launch (`cudaLaunchCooperativeKernel` ->
`hipLaunchCooperativeKernel`), and a tile of 32 threads is half a 64-lane wavefront on CDNA.
Review only.
"""

from __future__ import annotations

from cuda2rocm.checks.warp_size_32 import number
from cuda2rocm.frontends.cpp import CppRule, hip_excluded

GRID = frozenset({"this_grid", "this_multi_grid"})
TILES = frozenset({"tiled_partition", "thread_block_tile"})


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for node in view.identifiers:
            name = view.text(node)
            if name in GRID and _called(node) and not hip_excluded(view, node):
                self.report(
                    node,
                    f"`{name}()`: grid-wide synchronisation needs a cooperative launch "
                    "(hipLaunchCooperativeKernel on ROCm) and device support; check how this "
                    "kernel is launched",
                )
            elif name in TILES and node.parent is not None:
                args = node.parent.child_by_field_name("arguments")
                if args is None or node.parent.type not in ("template_function", "template_type"):
                    continue
                if any(number(view, a) == 32 for a in args.named_children):
                    self.report(
                        node.parent,
                        f"`{name}<32>` is a full warp on NVIDIA but half a 64-lane wavefront on "
                        "AMD CDNA GPUs; check code that treats the tile as the whole warp",
                    )


def _called(node) -> bool:
    current = node
    while current.parent is not None and current.parent.type == "qualified_identifier":
        current = current.parent
    parent = current.parent
    return parent is not None and parent.type == "call_expression"
