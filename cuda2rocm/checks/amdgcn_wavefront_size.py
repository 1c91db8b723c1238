"""amdgcn-wavefront-size: the deprecated `__AMDGCN_WAVEFRONT_SIZE` compiler macros.

clang documented `__AMDGCN_WAVEFRONT_SIZE__` and its alias `__AMDGCN_WAVEFRONT_SIZE` as
deprecated and llvm/llvm-project#157463 removes them; ROCm's own headers stopped using them in
7.0 (rocm-llvm-python 6.4.0's hiprtc_runtime.h defines warpSize from it, 7.0.0's does not:
data/facts.toml amdgcn-wavefront-size). In code it becomes an undeclared identifier; in an
`#if` an undefined macro is 0, so `#if __AMDGCN_WAVEFRONT_SIZE == 64` silently takes the
wave32 branch on every GPU. `__GFX9__` (device passes) or a run-time query
(`hipDeviceProp_t::warpSize`) replace it.
"""

from __future__ import annotations

from cuda2rocm import facts
from cuda2rocm.frontends.cpp import CppRule, hip_excluded

FACT = "amdgcn-wavefront-size"
NAMES = frozenset({"__AMDGCN_WAVEFRONT_SIZE", "__AMDGCN_WAVEFRONT_SIZE__"})


class Rule(CppRule):
    def check(self) -> None:
        if facts.verdict(FACT, self.ctx.targets) is None:
            return
        view = self.view
        seen: set[int] = set()
        hits = [(n, *view.span(n)) for n in view.identifiers if view.text(n) in NAMES]
        hits += [(None, t.start, t.end) for t in view.macro_tokens if t.name in NAMES]
        for node, start, end in sorted(hits, key=lambda h: h[1]):
            if start in seen or (node is not None and hip_excluded(view, node)):
                continue
            seen.add(start)
            name = view.source.text[start:end]
            self.report(
                (start, end),
                f"`{name}` is a deprecated clang macro that ROCm 7 no longer relies on and "
                "clang removes (llvm/llvm-project#157463); where it is undefined, `#if` reads "
                "it as 0 (the wave32 branch on every GPU) and code gets an undeclared "
                "identifier: test `__GFX9__` in device code (64-lane CDNA) or query "
                "`hipDeviceProp_t::warpSize` at run time",
            )
