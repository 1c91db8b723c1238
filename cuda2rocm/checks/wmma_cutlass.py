"""wmma-cutlass: WMMA (`nvcuda::wmma`), CUTLASS and CuTe code, which has no HIP counterpart.

HIP has no warp-matrix kernel-language types or functions, and HIPIFY maps none of these
namespaces; the headers themselves are reported by hip-include. One finding per namespace and
file (with the number of uses), never inside branches no HIP build compiles.
"""

from __future__ import annotations

from cuda2rocm.frontends.cpp import CppRule, live_first

NAMESPACES = {
    "nvcuda": "WMMA (nvcuda::wmma)",
    "wmma": "WMMA (nvcuda::wmma)",
    "cutlass": "CUTLASS",
    "cute": "CuTe",
}


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        uses: dict[str, list] = {}
        for node in view.identifiers:
            name = view.text(node)
            if node.type != "namespace_identifier" or name not in NAMESPACES:
                continue
            if name == "wmma" and _qualified_by(view, node) == "nvcuda":
                continue
            uses.setdefault(NAMESPACES[name], []).append(node)
        for node in view.using:
            text = view.text(node)
            for name, what in NAMESPACES.items():
                if f"namespace {name}" in text:
                    uses.setdefault(what, []).insert(0, node)
        for what, nodes in uses.items():
            nodes.sort(key=lambda n: n.start_byte)
            nodes = live_first(view, nodes)
            times = f" ({len(nodes)} uses)" if len(nodes) > 1 else ""
            self.report(
                nodes[0],
                f"{what} has no HIP counterpart{times}; give this code a ROCm path (rocWMMA, "
                "composable_kernel, hipBLASLt, or an ATen/Triton fallback under USE_ROCM)",
                data={"library": what},
            )


def _qualified_by(view, node) -> str:
    parent = node.parent
    if parent is None or parent.type != "qualified_identifier":
        return ""
    outer = parent.parent
    if outer is None or outer.type != "qualified_identifier":
        return ""
    scope = outer.child_by_field_name("scope")
    return view.text(scope) if scope is not None else ""
