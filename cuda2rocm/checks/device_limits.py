"""device-limits: NVIDIA device limits hard-coded into launch configuration or shared memory.

- `prop.sharedMemPerBlockOptin` (warning): HIP 5.2's `hipDeviceProp_t` has no such member
  (hipcc: "no member named 'sharedMemPerBlockOptin' in 'hipDeviceProp_t'"), and
  `hipDeviceAttributeSharedMemPerBlockOptin` is documented "Cuda only" in hip_runtime_api.h.
- `cudaDevAttrMaxSharedMemoryPerBlockOptin` (warning): the same "Cuda only" attribute.
- `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, n)` and launches
  `<<<g, b, n>>>` whose shared-memory size is a constant above 64 KiB (warning): AMD's LDS per
  workgroup is 64 KiB on gfx90a/gfx942 (160 KiB on gfx950); the opt-in itself (info when the
  size is not a constant) is NVIDIA's mechanism for going past 48 KiB.
- the constants 65535 (grid-size cap) and 49152 / `48 * 1024` (NVIDIA's default static shared
  memory per block) in files that launch kernels (info): query `cudaDeviceProp` instead.

No fix: the right size depends on the kernel and the device.
"""

from __future__ import annotations

from cuda2rocm import facts
from cuda2rocm.frontends.cpp import CppRule
from cuda2rocm.model import Severity

AMD_LDS = 64 * 1024
NV_DEFAULT_SMEM = 48 * 1024
GRID_CAP = 65535
OPTIN_FIELD = "sharedMemPerBlockOptin"
OPTIN_ATTR = "cudaDevAttrMaxSharedMemoryPerBlockOptin"
DYN_SMEM_ATTR = "cudaFuncAttributeMaxDynamicSharedMemorySize"
_SUFFIX = "uUlLzZ"


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for node in view.identifiers:
            name = view.text(node)
            if name == OPTIN_FIELD and node.type == "field_identifier":
                if facts.verdict("device-prop-smem-optin", self.ctx.targets) is None:
                    continue  # hipDeviceProp_t has it from ROCm 6.0
                self.report(
                    node,
                    f"`{OPTIN_FIELD}` is not a member of hipDeviceProp_t before ROCm 6.0 (hipcc: "
                    f"\"no member named '{OPTIN_FIELD}'\"); use `sharedMemPerBlock`, which "
                    "is the whole LDS (64 KiB on gfx90a/gfx942) on AMD GPUs",
                )
            elif name == OPTIN_ATTR:
                self.report(
                    node,
                    f"`{OPTIN_ATTR}` maps to hipDeviceAttributeSharedMemPerBlockOptin, which HIP "
                    "documents as CUDA-only; query `cudaDevAttrMaxSharedMemoryPerBlock`",
                )
        launches = False
        for call in view.calls:
            launch = _kernel_call_syntax(call)
            if launch is not None:
                launches = True
                args = [a for a in launch.named_children if a.type != "comment"]
                if len(args) >= 3:
                    self._shared_size(args[2], "dynamic shared memory of this launch")
                continue
            fn = call.child_by_field_name("function")
            if fn is None or view.text(fn).rsplit("::", 1)[-1] != "cudaFuncSetAttribute":
                continue
            args_node = call.child_by_field_name("arguments")
            args = [a for a in args_node.named_children if a.type != "comment"]
            opt_in = len(args) == 3 and view.text(args[1]).endswith(DYN_SMEM_ATTR)
            if opt_in and not self._shared_size(args[2], "this dynamic shared memory opt-in"):
                self.report(
                    call,
                    f"`{DYN_SMEM_ATTR}` opts in past NVIDIA's 48 KiB default; AMD GPUs have "
                    "no opt-in and a fixed LDS per workgroup (64 KiB on gfx90a/gfx942): "
                    "size shared memory from `sharedMemPerBlock`",
                    severity=Severity.INFO,
                )
        if launches or "dim3" in view.source.text:
            self._constants()

    def _shared_size(self, node, what: str) -> bool:
        value = _constant(self.view, node)
        if value is None or value <= AMD_LDS:
            return False
        self.report(
            node,
            f"{what} is {value} bytes, more than the 64 KiB of LDS an AMD workgroup can use on "
            "gfx90a/gfx942: the launch fails on ROCm; size it from `sharedMemPerBlock`",
        )
        return True

    def _constants(self) -> None:
        view = self.view
        for node in view.numbers:
            parent = node.parent
            value = _constant(view, node)
            if (
                value == GRID_CAP
                and view.text(node).rstrip(_SUFFIX).isdigit()
                and _bounds_something(view, node)
            ):
                self.report(
                    node,
                    "65535 hard-codes NVIDIA's grid-size limit; query "
                    "`cudaDeviceProp::maxGridSize` (AMD limits differ)",
                    severity=Severity.INFO,
                )
            elif value == NV_DEFAULT_SMEM:
                self._default_smem(node)
            elif (
                parent is not None
                and parent.type == "binary_expression"
                and parent.child_by_field_name("left") == node
                and _constant(view, parent) == NV_DEFAULT_SMEM
            ):
                self._default_smem(parent)

    def _default_smem(self, node) -> None:
        self.report(
            node,
            "48 KiB is NVIDIA's default shared memory per block; AMD GPUs give a workgroup "
            "64 KiB of LDS (gfx90a/gfx942): query `sharedMemPerBlock` instead",
            severity=Severity.INFO,
        )


_COMPARISONS = frozenset({"<", "<=", ">", ">="})


def _bounds_something(view, node) -> bool:
    """65535 as a bound: `min(x, 65535)`, `dim3(65535)`, `x < 65535`, `c ? 65535 : x`."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None:
        return False
    if parent.type == "argument_list":
        call = parent.parent
        fn = call.child_by_field_name("function") if call.type == "call_expression" else None
        name = view.text(fn).rsplit("::", 1)[-1] if fn is not None else ""
        return name in ("min", "max", "dim3") or call.type == "init_declarator"
    if parent.type == "binary_expression":
        return view.text(parent.child_by_field_name("operator")) in _COMPARISONS
    return parent.type == "conditional_expression"


def _kernel_call_syntax(call):
    for child in call.children:
        if child.type == "kernel_call_syntax":
            return child
    return None


def _constant(view, node) -> int | None:
    """The value of an integer constant expression of literals, or None."""
    kind = node.type
    if kind == "number_literal":
        text = view.text(node).rstrip(_SUFFIX).replace("'", "")
        try:
            return int(text, 0)
        except ValueError:
            return None
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return _constant(view, node.named_children[0])
    if kind == "binary_expression":
        left = _constant(view, node.child_by_field_name("left"))
        right = _constant(view, node.child_by_field_name("right"))
        if left is None or right is None:
            return None
        op = view.text(node.child_by_field_name("operator"))
        if op == "*":
            return left * right
        if op == "+":
            return left + right
        if op == "<<" and 0 <= right < 64:
            return left << right
    return None
