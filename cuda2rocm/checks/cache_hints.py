"""cache-hints: CUDA's cache-operator loads and stores (`__ldcs`, `__stcs`, `__stcg`, ...).

HIP has no `__stcs` / `__stcg` / `__stwb` at all and declares `__ldcs` / `__ldcg` / `__ldca` for
`__half` and `__half2` only (hip/amd_detail/amd_hip_fp16.h: HIP 5.2 as installed, ROCm/clr
rocm-5.6.0 ... rocm-6.2.0 and 2024's tip), so a `__ldcs(reinterpret_cast<const int4*>(p))`
fails with hipcc: "use of undeclared identifier '__ldcs'" (llm.c's common.h). The PTX ISA
(Cache Operators) treats cache operators as performance hints only: they do not change the
memory consistency behaviour, so a plain load or store is the same program. The compatibility
header gives HIP builds that plain access for these names (compat_header.CACHE_HINTS); the fix
includes it. `__ldcv` / `__stwt` (volatile-style accesses for memory others change) are left
out: a plain access there could be merged or hoisted, which the asm of CUDA's forms is not
documented to prevent either way.
"""

from __future__ import annotations

from cuda2rocm.compat_header import CACHE_HINTS
from cuda2rocm.frontends.cpp import CppRule
from cuda2rocm.frontends.sites import by_line


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        if view.hipified:
            return
        uses: dict[str, list] = {}
        for call in view.calls:
            fn = call.child_by_field_name("function")
            if fn is not None and fn.type == "identifier" and view.text(fn) in CACHE_HINTS:
                uses.setdefault(view.text(fn), []).append(fn)
        if not uses:
            return
        has_compat = view.includes_header(self.ctx.compat_header)
        for name, nodes in uses.items():
            fix = None
            if not has_compat and (edit := view.compat_include_edit(self.ctx)) is not None:
                fix = self.fix(edit, description=f"include {self.ctx.compat_header}")
            elif has_compat:
                continue  # the header maps it
            for site in by_line(view, nodes):  # each call is a line of the port
                self.report(
                    site[0],
                    f"`{name}` has no HIP counterpart for this type (HIP declares "
                    f"{CACHE_HINTS[name]}); a cache operator is a performance hint only, so the "
                    f"compatibility header {self.ctx.compat_header} maps it to a plain "
                    "access under hipcc",
                    fix,
                    data={"cuda_name": name},
                )
