"""sdpa-cudnn-only: scaled-dot-product attention restricted to the cuDNN backend.

ROCm has no cuDNN attention kernel, so SDPA fails with "no available kernel" there. The safe
fix keeps the cuDNN-only selection on CUDA and gives ROCm its own backends:
`sdpa_kernel(SDPBackend.CUDNN_ATTENTION)` becomes
`sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
if torch.version.hip else SDPBackend.CUDNN_ATTENTION)`. (A plain widened list would change
CUDA: without `set_priority` torch's default order tries flash attention before cuDNN.)
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware
from cuda2rocm.frontends.python_guards import HIP, VendorGuard, torch_name

SDPA_KERNEL = {"torch.nn.attention.sdpa_kernel"}
CUDNN = "torch.nn.attention.SDPBackend.CUDNN_ATTENTION"
SDP_KERNEL = {"torch.backends.cuda.sdp_kernel"}
SDP_PARAMS = ("enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn")
TOGGLES = {
    f"torch.backends.cuda.enable_{k}_sdp": k for k in ("flash", "mem_efficient", "math", "cudnn")
}
ROCM_BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH")


class Rule(NameAware):
    #: findings and their reasons hold a token themselves: no name is followed to one
    FOLLOWS = False

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._guard = VendorGuard(
            self, (HIP, "torch.version.cuda"), follow_names=True, early_exit=True
        )
        self._torch: str | None = None
        #: enclosing function or module -> kind -> `enable_<kind>_sdp(False)` calls
        self._disabled: dict[int, dict[str, list[cst.Call]]] = {}

    def visit_Module(self, node: cst.Module) -> None:
        self._torch = torch_name(node)

    def visit_Call(self, node: cst.Call) -> None:
        names = self.qualified_names(node.func)
        if names & SDPA_KERNEL:
            self._sdpa_kernel(node)
        elif names & SDP_KERNEL:
            self._sdp_kernel(node)
        else:
            kind = next((TOGGLES[n] for n in names if n in TOGGLES), None)
            if kind and node.args and _is_false(node.args[0].value):
                owner = next(
                    (a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None
                )
                group = self._disabled.setdefault(id(owner), {})
                group.setdefault(kind, []).append(node)

    def leave_Module(self, original_node: cst.Module) -> None:
        for group in self._disabled.values():
            if "cudnn" in group or not all(k in group for k in ("flash", "mem_efficient", "math")):
                continue
            calls = [c for k in ("flash", "mem_efficient", "math") for c in group[k]]
            last = max(calls, key=lambda c: self.span(c))
            if not self._guard.rocm_aware(last):
                self.report(
                    last,
                    "flash, memory-efficient and math SDPA are all disabled, leaving only cuDNN "
                    "attention, which does not exist on ROCm (scaled_dot_product_attention "
                    "then finds no kernel); keep flash/mem-efficient/math enabled when "
                    "torch.version.hip is set",
                )

    # -- sdpa_kernel(...) ------------------------------------------------------------------
    def _sdpa_kernel(self, call: cst.Call) -> None:
        arg = next((a for a in call.args if a.keyword and a.keyword.value == "backends"), None)
        if arg is None and call.args and call.args[0].keyword is None and not call.args[0].star:
            arg = call.args[0]
        if arg is None or not self._cudnn_only(arg.value) or self._guard.rocm_aware(call):
            return
        self.report(
            arg.value,
            "SDPA restricted to the cuDNN backend: ROCm has no cuDNN attention kernel "
            "(can_use_cudnn_attention() is false under USE_ROCM), so attention fails with "
            '"no available kernel"; allow FLASH_ATTENTION, EFFICIENT_ATTENTION and MATH on ROCm',
            self._fix(arg.value),
        )

    def _cudnn_only(self, value: cst.CSTNode) -> bool:
        if isinstance(value, cst.List):
            return bool(value.elements) and all(self._is_cudnn(e.value) for e in value.elements)
        return self._is_cudnn(value)

    def _is_cudnn(self, node: cst.CSTNode) -> bool:
        return isinstance(node, (cst.Attribute, cst.Name)) and CUDNN in self.qualified_names(node)

    def _fix(self, value: cst.BaseExpression):
        first = value.elements[0].value if isinstance(value, cst.List) else value
        if self._torch is None or not isinstance(first, cst.Attribute):
            return None
        prefix = self.text(first.value)
        rocm = ", ".join(f"{prefix}.{b}" for b in ROCM_BACKENDS)
        original = self.text(value)
        return self.fix(
            self.replace(value, f"[{rocm}] if {self._torch}.version.hip else {original}"),
            description="use flash, memory-efficient and math attention on ROCm",
        )

    # -- torch.backends.cuda.sdp_kernel(...) (deprecated) -----------------------------------
    def _sdp_kernel(self, call: cst.Call) -> None:
        enabled = dict.fromkeys(SDP_PARAMS, True)
        for i, arg in enumerate(call.args):
            if arg.star:
                return
            key = arg.keyword.value if arg.keyword else (SDP_PARAMS[i] if i < 4 else None)
            if key in enabled:
                enabled[key] = not _is_false(arg.value)
        only_cudnn = enabled["enable_cudnn"] and not any(
            enabled[k] for k in ("enable_flash", "enable_math", "enable_mem_efficient")
        )
        if only_cudnn and not self._guard.rocm_aware(call):
            self.report(
                call,
                "torch.backends.cuda.sdp_kernel(...) (deprecated) here enables only cuDNN "
                "attention, which does not exist on ROCm, so attention finds no kernel there; "
                "use torch.nn.attention.sdpa_kernel and allow FLASH_ATTENTION, "
                "EFFICIENT_ATTENTION and MATH when torch.version.hip is set",
            )


def _is_false(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"
