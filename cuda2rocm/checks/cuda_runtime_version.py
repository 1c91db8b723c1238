"""cuda-runtime-version: a CUDA runtime/driver version read at run time and compared as one.

`cudaRuntimeGetVersion(&v)` / `cudaDriverGetVersion(&v)` (and the driver API's
`cuDriverGetVersion`) become `hipRuntimeGetVersion` / `hipDriverGetVersion` under HIP, and both
store HIP_VERSION there (`major * 10000000 + minor * 100000 + patch`, clr
hipamd/src/hip_context.cpp; ROCm 7.0: 70000000 and more). A test against a CUDA release number
(`v >= 11000`, `v / 1000 < 12`) is then decided by the size of the encoding, not by a feature.
Reported: each comparison of the stored value (directly or through `/`, `%`, `*` arithmetic)
with a number, after the query in the same function; code no HIP pass compiles is skipped.
"""

from __future__ import annotations

from tree_sitter import Node

from cuda2rocm.frontends.cpp import CppRule, ancestors, hip_excluded

_QUERIES = frozenset({"cudaRuntimeGetVersion", "cudaDriverGetVersion", "cuDriverGetVersion"})
_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
_ARITHMETIC = frozenset({"/", "%", "*", "+", "-"})


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for call in view.calls:
            func = call.child_by_field_name("function")
            if func is None or view.text(func) not in _QUERIES:
                continue
            args = call.child_by_field_name("arguments")
            named = [a for a in args.named_children if a.type != "comment"] if args else []
            if not named or named[0].type != "pointer_expression":
                continue
            if view.text(named[0])[:1] != "&":
                continue
            name = view.text(named[0])[1:].strip()
            function = next((a for a in ancestors(call) if a.type == "function_definition"), None)
            if function is None or hip_excluded(view, call):
                continue
            query = view.text(func)
            for comparison in _comparisons(view, function, name, call):
                if hip_excluded(view, comparison):
                    continue
                self.report(
                    comparison,
                    f"`{name}` comes from {query}, which stores HIP_VERSION under HIP "
                    "(major * 10000000 + minor * 100000 + patch), so this CUDA-release test "
                    "is decided by the encoding on ROCm; compare HIP_VERSION values (or test "
                    "the feature) in a ROCm branch",
                )


def _comparisons(view, function: Node, name: str, query: Node) -> list[Node]:
    """Comparisons with a number of `name` (or arithmetic on it) after `query`, in order."""
    found: list[Node] = []
    stack = [function]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type != "identifier" or view.text(node) != name:
            continue
        if node.start_byte < query.end_byte:
            continue
        child, parent = node, node.parent
        while parent is not None and (
            parent.type == "parenthesized_expression"
            or (
                parent.type == "binary_expression"
                and view.text(parent.child_by_field_name("operator")) in _ARITHMETIC
            )
        ):
            child, parent = parent, parent.parent
        if parent is None or parent.type != "binary_expression":
            continue
        if view.text(parent.child_by_field_name("operator")) not in _COMPARISONS:
            continue
        left = parent.child_by_field_name("left")
        other = parent.child_by_field_name("right" if left == child else "left")
        numeric = other is not None and other.type == "number_literal"
        if numeric and not any(f.id == parent.id for f in found):
            found.append(parent)
    return sorted(found, key=lambda n: n.start_byte)
