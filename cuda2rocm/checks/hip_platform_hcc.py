"""hip-platform-hcc: platform macros of the retired HCC era in preprocessor tests.

`__HIP_PLATFORM_HCC__` / `__HIP_PLATFORM_NVCC__` were renamed `__HIP_PLATFORM_AMD__` /
`__HIP_PLATFORM_NVIDIA__` in ROCm 4.1 and removed in ROCm 6.0 (HIP 5.2's hip_common.h still
defines the old names "until upstream updation"); `__HCC__` was defined only by the HCC
compiler, which HIP-Clang replaced in ROCm 3.5 (hipcc 5.2.3 -dM defines `__HIP__`, not
`__HCC__`). So on current ROCm such a test is false: `#if !defined(__HIP_PLATFORM_HCC__)` takes
the CUDA branch. The replacements are the rule's table. A condition that already names the new
macro is taken to handle both.
"""

from __future__ import annotations

from cuda2rocm.frontends import cpp
from cuda2rocm.frontends.cpp import CppRule
from cuda2rocm.model import Edit, Safety


class Rule(CppRule):
    def check(self) -> None:
        table: dict[str, dict] = self.spec.tables["macros"]
        view = self.view
        for _, cond in view.conditions:
            idents = list(cpp.identifiers(cond)) if cond.type != "identifier" else [cond]
            spelled = {view.text(n) for n in idents}
            for node in idents:
                name = view.text(node)
                entry = table.get(name)
                if entry is None or entry["new"] in spelled:
                    continue
                start, end = view.span(node)
                self._report(start, end, name, entry)
        for token in view.macro_tokens:
            entry = table.get(token.name)
            if entry is not None:
                self._report(token.start, token.end, token.name, entry)

    def _report(self, start: int, end: int, name: str, entry: dict) -> None:
        new = entry["new"]
        safety = Safety.SAFE if entry.get("safe") else Safety.UNSAFE
        self.report(
            (start, end),
            f"`{name}` {entry['why']}, so this test is false on current ROCm; test `{new}` instead",
            self.fix(Edit(start, end, new, name), description=f"test {new}", safety=safety),
        )
