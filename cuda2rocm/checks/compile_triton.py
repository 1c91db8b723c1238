"""compile-triton: compilation paths that do not exist on ROCm, and a note on torch.compile.

Errors: TensorRT as a `torch.compile` backend, importing TensorRT, and PTX text in Triton's
`inline_asm_elementwise`. Info: plain `torch.compile` (Inductor generates Triton, which ROCm
wheels ship). Nothing is rewritten.
"""

from __future__ import annotations

import re

import libcst as cst

from cuda2rocm.frontends.python import NameAware, dotted, string_value
from cuda2rocm.frontends.python_guards import HIP, VendorGuard
from cuda2rocm.model import Severity

COMPILE = {"torch.compile"}
OPTIMIZE = {"torch._dynamo.optimize"}
TENSORRT_BACKENDS = {"tensorrt", "torch_tensorrt"}
TENSORRT_MODULES = {"tensorrt", "torch_tensorrt"}
INLINE_ASM = "inline_asm_elementwise"
#: PTX instructions are `opcode.type` (`cvt.rn.f16.f32`, `mov.b32`), registers `.reg`,
#: special registers `%laneid`/`%tid`; AMDGCN assembly uses `v_add_f32`-style names instead.
PTX = re.compile(
    r"(?:^|[\s;{])(?:cvt|mov|ld|st|mma|wgmma|shfl|prmt|lop3|ex2|lg2|rcp|rsqrt|sqrt|add|sub|mul"
    r"|mad|fma|and|or|xor|not|shl|shr|min|max|neg|abs|selp|setp|bfe|bfi|cp|red|atom|vote|bar"
    r"|membar|fence|tanh)\.[a-z0-9]|\.reg\s|%laneid|%tid\.|%warpid"
)


class Rule(NameAware):
    #: findings and their reasons hold a token themselves: no name is followed to one
    FOLLOWS = False

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._guard = VendorGuard(
            self, (HIP, "torch.version.cuda"), follow_names=True, early_exit=True
        )

    # -- torch.compile ---------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        names = self.qualified_names(node.func)
        if names & COMPILE:
            backend = _keyword(node, "backend")
            self._compile(node, backend)
        elif names & OPTIMIZE:
            backend = _keyword(node, "backend")
            if backend is None and node.args and node.args[0].keyword is None:
                backend = node.args[0]
            if backend is not None:
                self._tensorrt_backend(backend)
        elif any(n.startswith("triton.") and n.endswith("." + INLINE_ASM) for n in names):
            self._inline_asm(node)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        # `@torch.compile` without a call
        if self.qualified_names(node.decorator) & COMPILE:
            self._compile(node.decorator, None)

    def _compile(self, node: cst.CSTNode, backend: cst.Arg | None) -> None:
        if backend is not None:
            value = string_value(backend.value)
            if value in TENSORRT_BACKENDS:
                self._tensorrt_backend(backend)
                return
            if value != "inductor":
                return
        if self._guard.rocm_aware(node):
            return
        func = node.func if isinstance(node, cst.Call) else node
        self.report(
            func,
            "torch.compile works on ROCm: its default Inductor backend generates Triton kernels, "
            "and ROCm PyTorch wheels ship Triton for AMD (pytorch-triton-rocm); expect different "
            "autotuning results and 64-wide wavefronts on CDNA (num_warps counts wavefronts)",
            severity=Severity.INFO,
        )

    def _tensorrt_backend(self, backend: cst.Arg) -> None:
        value = string_value(backend.value)
        if value in TENSORRT_BACKENDS and not self._guard.rocm_aware(backend):
            self.report(
                backend.value,
                f'backend="{value}" compiles with NVIDIA TensorRT, which does not exist on ROCm; '
                'use the default "inductor" backend there (branch on torch.version.hip)',
            )

    # -- TensorRT imports ------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = dotted(alias.name)
            if name and name.split(".")[0] in TENSORRT_MODULES:
                self._tensorrt_import(node, name)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        name = dotted(node.module)
        if name and name.split(".")[0] in TENSORRT_MODULES:
            self._tensorrt_import(node, name)

    def _tensorrt_import(self, node: cst.CSTNode, name: str) -> None:
        if self._optional(node) or self._guard.rocm_aware(node):
            return
        self.report(
            node,
            f"{name} is NVIDIA TensorRT, which does not exist on ROCm: this import fails on AMD "
            "hosts; make it optional and fall back to torch.compile's default backend",
        )

    def _optional(self, node: cst.CSTNode) -> bool:
        """Inside `try:` with an `except ImportError`/`ModuleNotFoundError`/bare `except`."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.Try):
                for handler in ancestor.handlers:
                    kind = handler.type
                    if kind is None:
                        return True
                    text = self.text(kind)
                    if (
                        "ImportError" in text
                        or "ModuleNotFoundError" in text
                        or (text == "Exception")
                    ):
                        return True
        return False

    # -- Triton inline assembly ------------------------------------------------------------
    def _inline_asm(self, call: cst.Call) -> None:
        asm = _keyword(call, "asm")
        if asm is None and call.args and call.args[0].keyword is None:
            asm = call.args[0]
        if asm is None:
            return
        text = string_value(asm.value)
        if text is None or not PTX.search(text) or self._guard.rocm_aware(call):
            return
        self.report(
            asm.value,
            "inline_asm_elementwise with PTX: Triton passes the text to the target's assembler, "
            "and AMD GPUs cannot assemble PTX; give ROCm an AMDGCN variant or a plain Triton "
            "expression",
        )


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
