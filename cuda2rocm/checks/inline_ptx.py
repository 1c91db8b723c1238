"""inline-ptx: `asm` statements whose template is PTX, which HIP-Clang cannot assemble.

HIP supports inline GCN/CDNA assembly, not PTX, and hipify leaves `asm` untouched, so the
template text decides: PTX instructions are dotted opcodes (`ld.global.f32`, `mma.sync`),
`.reg` declarations, or `%laneid`-style special registers. Statements that no HIP build compiles
(inside `#ifdef __CUDA_ARCH__`, `#ifndef USE_ROCM`, ...) are left alone, and so is `asm` in a
function that is provably host code (no `__device__`/`__global__`, nothing unplaceable before
its declarator): PTX runs only on the device, and host `asm` (x86, Arm, another accelerator's
host-side ISA) is assembled for the CPU by HIP-Clang as by nvcc's host compiler.
"""

from __future__ import annotations

import re

from cuda2rocm.frontends.cpp import CppRule

_OPCODES = (
    "ld|ldu|st|mov|cvt|cvta|mma|wmma|ldmatrix|stmatrix|cp|shfl|membar|fence|bar|barrier|red|"
    "atom|vote|prmt|lop3|add|sub|mul|mad|fma|div|rem|setp|selp|and|or|xor|not|shl|shr|min|max|"
    "abs|neg|rcp|sqrt|rsqrt|ex2|lg2|sin|cos|tanh|bfe|bfi|brev|popc|clz|activemask|match|redux|"
    "elect|nanosleep|griddepcontrol|tex|suld|sust|prefetch|discard|createpolicy|isspacep|trap|"
    "bra|call|ret|exit|wgmma|tcgen05|mbarrier|setmaxnreg|stmatrix"
)
PTX = re.compile(
    rf"(?<![\w.%])(?:{_OPCODES})(?:\.[a-z0-9_]+)+\b"
    r"|\.reg\s+\.\w+"
    r"|%(?:laneid|warpid|nwarpid|tid|ntid|ctaid|nctaid|smid|nsmid|gridid|clock64|clock|"
    r"globaltimer|lanemask_\w+|dynamic_smem_size|total_smem_size)\b"
)


class Rule(CppRule):
    def check(self) -> None:
        for node in self.view.asm:
            template = node.child_by_field_name("assembly_code")
            if template is None:
                continue
            found = PTX.search(self.view.text(template))
            if found is None or self.view.in_host_function(node):
                continue  # host code: assembled for the CPU (x86, Arm, RISC-V), never as PTX
            self.report(
                node,
                f"inline PTX (`{found.group(0)}`) cannot be assembled by HIP-Clang; give this a "
                "ROCm path under `#if defined(__HIP_PLATFORM_AMD__)` (USE_ROCM in torch "
                "extensions) using HIP intrinsics or `__builtin_amdgcn_*`",
                data={"instruction": found.group(0)},
            )
