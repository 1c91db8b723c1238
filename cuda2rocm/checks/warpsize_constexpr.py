"""warpsize-constexpr: `warpSize` where C++ needs a constant expression (ROCm 7 breakage).

Up to ROCm 6.4 HIP declared `static constexpr int warpSize = __AMDGCN_WAVEFRONT_SIZE;`, so HIP
code could size a `__shared__` array, a template argument, a `static_assert` or a `constexpr`
variable with it. From ROCm 7.0 `warpSize` is an object whose conversion to int calls
`__builtin_amdgcn_wavefrontsize()` (data/facts.toml warpsize-constexpr), and each of those
fails to compile (checked with clang -fsyntax-only against rocm-llvm-python 7.2.2's
hiprtc_runtime.h; 6.4.0's accepts them: tests/test_rocm7_rules.py). CUDA's `warpSize` was never
a constant, so such code is HIP code (or a HIP branch) that ROCm 7 breaks. Reported while the
targets reach ROCm 7.0 (always, unless `rocm-version` closes the range below it).
"""

from __future__ import annotations

from cuda2rocm import facts
from cuda2rocm.frontends.cpp import CppRule, ancestors, hip_excluded

FACT = "warpsize-constexpr"
#: Node types where the search for a constant-expression context stops.
_STOP = ("function_definition", "compound_statement", "expression_statement", "return_statement")


def constant_context(view, node) -> str | None:
    """What constant expression holds `node` ("an array size", ...), or None."""
    for parent in ancestors(node):
        if parent.type == "template_argument_list":
            return "a template argument"
        if parent.type == "array_declarator":
            return "an array size"
        if parent.type == "static_assert_declaration":
            return "a static_assert"
        if parent.type == "case_statement":
            return "a case label"
        if parent.type in ("declaration", "field_declaration") and any(
            c.type == "type_qualifier" and view.text(c) == "constexpr" for c in parent.children
        ):
            return "a constexpr initializer"
        if parent.type in _STOP:
            return None
    return None


class Rule(CppRule):
    def check(self) -> None:
        where = facts.verdict(FACT, self.ctx.targets)
        if where is None:
            return  # the port's newest release is before 7.0
        view = self.view
        for node in view.identifiers:
            if view.text(node) != "warpSize" or hip_excluded(view, node):
                continue
            needs = constant_context(view, node)
            if needs is None:
                continue
            self.report(
                node,
                f"`warpSize` as {needs}: from ROCm 7.0 `warpSize` is not a constant expression "
                "(its value comes from `__builtin_amdgcn_wavefrontsize()`), so this no longer "
                "compiles; use a per-target constant (`CUDA2ROCM_WARP_SIZE` of the "
                "compatibility header: 64 under `__GFX9__`, else 32, in device passes) or size "
                "the buffer for 64 lanes",
            )
