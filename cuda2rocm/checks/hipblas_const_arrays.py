"""hipblas-const-arrays: `const void* const*` pointer arrays passed to cublasGemmBatchedEx.

cuBLAS declares the batched A/B arrays `const void* const Aarray[]`; hipBLAS before 1.0
(ROCm < 5.6) declares hipblasGemmBatchedEx's `const void* A[]`, so the cuBLAS spelling no longer
converts once hipify renames the call (hipcc 5.2 with hipBLAS 0.51: "candidate function not
viable: 8th argument ('const void *const *') would lose const qualifier"). The fix casts to
`const void**`, which converts implicitly to cuBLAS's `const void* const*` too.
"""

from __future__ import annotations

import re

from cuda2rocm.frontends.cpp import CppRule, hip_excluded

_CALLS = frozenset({"cublasGemmBatchedEx", "hipblasGemmBatchedEx"})
#: 0-based positions of the A and B pointer arrays.
_ARRAYS = (7, 10)
_CONST_CONST = re.compile(r"^const\s*void\s*\*\s*const\s*\*$")


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for call in view.calls:
            func = call.child_by_field_name("function")
            if func is None or view.text(func) not in _CALLS or hip_excluded(view, call):
                continue
            args = call.child_by_field_name("arguments")
            named = [a for a in args.named_children if a.type != "comment"] if args else []
            for at in _ARRAYS:
                if at >= len(named) or named[at].type != "cast_expression":
                    continue
                cast_type = named[at].child_by_field_name("type")
                if cast_type is None or not _CONST_CONST.match(
                    " ".join(view.text(cast_type).split())
                ):
                    continue
                value = named[at].child_by_field_name("value")
                self.report(
                    named[at],
                    f"argument {at + 1} of {view.text(func)} is cast to `const void * const *`: "
                    "hipBLAS before 1.0 (ROCm < 5.6) declares it `const void* []`, so the call "
                    "does not compile there (would lose const qualifier); cast to "
                    "`(const void **)`, which cuBLAS accepts too",
                    self.fix(
                        self.replace(named[at], f"(const void **) {view.text(value)}"),
                        description="cast to const void **",
                    )
                    if value is not None
                    else None,
                )
