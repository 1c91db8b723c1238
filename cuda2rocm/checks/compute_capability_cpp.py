"""compute-capability-cpp: a compute capability read in C++ and used as an NVIDIA generation.

`cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)` (or the driver API's
`CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`, or `cudaDeviceProp::major`) returns the GFX IP
version under HIP (gfx90a: 9.0, gfx942: 9.4), so a threshold (`major >= 8`) or an `sm_XY` string
built from it (`std::to_string(major) + std::to_string(minor)`) means something else on ROCm.
Reported: the query, when the function then compares the value with a number, formats it, or
folds it into `major * 10 + minor`. Reading or logging the value is not reported.
"""

from __future__ import annotations

from tree_sitter import Node

from cuda2rocm.frontends.cpp import CppRule, ancestors, hip_excluded

_ATTRIBUTES = frozenset(
    {
        "cudaDevAttrComputeCapabilityMajor",
        "cudaDevAttrComputeCapabilityMinor",
        "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR",
        "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR",
    }
)
_QUERIES = frozenset({"cudaDeviceGetAttribute", "cuDeviceGetAttribute"})
_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
_FORMATTERS = frozenset({"std::to_string", "to_string", "sprintf", "snprintf", "std::format"})


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for call in view.calls:
            func = call.child_by_field_name("function")
            if func is None or view.text(func) not in _QUERIES:
                continue
            args = call.child_by_field_name("arguments")
            named = [a for a in args.named_children if a.type != "comment"] if args else []
            if len(named) < 2 or view.text(named[1]) not in _ATTRIBUTES:
                continue
            target = named[0]
            if target.type != "pointer_expression" or view.text(target)[:1] != "&":
                continue
            name = view.text(target)[1:].strip()
            function = next((a for a in ancestors(call) if a.type == "function_definition"), None)
            if function is None or hip_excluded(view, call):
                continue
            use = _generation_use(view, function, name, call)
            if use is None:
                continue
            self.report(
                call,
                f"`{name}` is a compute capability, used as an NVIDIA generation ({use}); under "
                "HIP it is the GFX IP version (MI210/MI250: 9.0, MI300 gfx942: 9.4), so the "
                "same numbers select other paths or an `sm_` target that does not exist; on "
                'ROCm branch on `hipDeviceProp_t::gcnArchName` (e.g. "gfx942") instead',
            )


def _generation_use(view, function: Node, name: str, query: Node) -> str | None:
    """How the function uses the value after the query: a comparison with a number, a
    formatter (`std::to_string(major)`), or `major * 10 + minor` arithmetic."""
    stack = [function]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type != "identifier" or view.text(node) != name:
            continue
        if node.start_byte < query.end_byte:
            continue
        parent = node.parent
        if parent is None:
            continue
        if parent.type == "binary_expression":
            op = view.text(parent.child_by_field_name("operator"))
            other = parent.child_by_field_name(
                "right" if parent.child_by_field_name("left") == node else "left"
            )
            if op in _COMPARISONS and other is not None and other.type == "number_literal":
                return f"`{view.text(parent)}`"
            if op == "*" and other is not None and view.text(other) in ("10", "100"):
                return f"`{view.text(parent)}`"
        if parent.type == "argument_list":
            call = parent.parent
            func = call.child_by_field_name("function") if call is not None else None
            if func is not None and view.text(func) in _FORMATTERS:
                return f"`{view.text(call)}`"
    return None
