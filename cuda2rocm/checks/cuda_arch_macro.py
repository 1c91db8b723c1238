"""cuda-arch-macro: preprocessor conditions on `__CUDA_ARCH__`, which HIP-Clang never defines.

Under HIP such a condition is silently false (hipcc -dM: no __CUDA_ARCH__), so device-only
code takes the host or `#else` path. The "device pass" tests (`#ifdef __CUDA_ARCH__`,
`defined(__CUDA_ARCH__)`) have an exact HIP counterpart, `__HIP_DEVICE_COMPILE__`, and get an
unsafe fix that tests both (the guarded code then compiles for AMD, so it must be portable;
the fix is not offered when the branch holds inline assembly). Architecture comparisons
(`__CUDA_ARCH__ >= 800`) have no counterpart: AMD features are tested with `__gfx90a__`,
`__GFX9__` or `__HIP_ARCH_HAS_*`, which needs a human. A condition with code on both sides
(`#else`/`#elif`, see `cpp.has_fallback`) is info: ROCm compiles the fallback side.
"""

from __future__ import annotations

import re

from cuda2rocm.frontends import cpp
from cuda2rocm.frontends.cpp import HIP_MACROS, CppRule, has_fallback
from cuda2rocm.model import Severity

ARCH = "__CUDA_ARCH__"
HIP_DEVICE = "__HIP_DEVICE_COMPILE__"


#: Host-only code in the `#else` of a device-pass test: what a HIP device pass rejects.
_HOST_ONLY = re.compile(
    r"\b(throw|try|catch|TORCH_CHECK\w*|TORCH_INTERNAL_ASSERT\w*|AT_ERROR|AT_ASSERT\w*"
    r"|C10_THROW_ERROR|std::(?:cout|cerr|clog|string|vector|map|runtime_error|ostream|"
    r"stringstream|ifstream|ofstream|thread|mutex)|fprintf|fopen|exit|abort)\b"
)
#: Calls whose device-side meaning is known: math functions and vector-type constructors.
_MATH = re.compile(
    r"^(?:std::|::)?(?:sqrt|rsqrt|cbrt|rcbrt|exp|exp2|exp10|expm1|log|log2|log10|log1p|pow|fabs|abs|"
    r"fmin|fmax|min|max|floor|ceil|round|rint|trunc|fma|fmod|sin|cos|tan|asin|acos|atan|atan2|"
    r"sinh|cosh|tanh|erf|erfc|hypot|copysign|isnan|isinf|isfinite|signbit)f?$"
    r"|^(?:glm::)?[iu]?(?:vec|mat)[2-4](?:x[2-4])?$|^(?:make_)?(?:float|int|uint|double)[1-4]$"
)
#: Device-side work a plain `#else` does not replace: atomics, barriers, warp exchange, asm.
_DEVICE_ONLY = re.compile(
    r"\b(atomic\w*|__sync\w*|__syncthreads\w*|__shfl\w*|__ballot\w*|__any\w*|__all\w*"
    r"|__activemask|__threadfence\w*|asm|cooperative_groups|cg::\w+)\b"
)


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for branch, cond in view.conditions:
            text = view.text(cond)
            if ARCH not in text:
                continue
            idents = list(cpp.identifiers(cond))
            uses = [n for n in idents if view.text(n) == ARCH]
            if not uses or any(view.text(n) in HIP_MACROS for n in idents):
                continue  # already handles HIP
            if self._ported(cond):
                continue
            if "||" in text and cpp.hip_taken(view, branch):
                # `defined(__CUDA_ARCH__) || defined(<ROCm macro>)`: the preprocessor model
                # proves every HIP pass takes the branch, so nothing is skipped on ROCm.
                self.report(
                    cond,
                    f"`{ARCH}` is never defined by HIP-Clang, but this condition also tests a "
                    "macro a ROCm build defines",
                    guarded="the condition is true in every HIP pass of a ROCm build (another "
                    f"side of its `||` is defined there), so ROCm compiles this branch: `{text}`",
                )
                continue
            tests = [n for n in uses if n.parent is not None and n.parent.type == "preproc_defined"]
            device_pass = len(tests) == len(uses) or cond.type == "identifier"
            fix = None
            # Safe because HIP-Clang never defines __CUDA_ARCH__ (nvcc's passes see the test
            # unchanged), and the widened branch is only offered where hipcc can compile it:
            # not when it holds inline PTX, nor when it reads __CUDA_ARCH__ itself (an
            # undeclared identifier under hipcc in `#if __CUDA_ARCH__ >= 800`, or a value).
            if (
                device_pass
                and not self.view.holds_asm(branch)
                and not self._reads_arch(branch, cond)
            ):
                fix = self._fix(branch, cond, tests)
            if device_pass:
                message = (
                    f"`{ARCH}` is never defined by HIP-Clang, so this device-code branch is "
                    f"silently skipped on ROCm; test `{HIP_DEVICE}` as well"
                )
            else:
                message = (
                    f"`{ARCH}` comparisons are always false on ROCm (HIP-Clang does not define "
                    "it); add an AMD branch that tests `__gfx90a__`/`__GFX9__` or "
                    "`__HIP_ARCH_HAS_*` feature macros"
                )
            severity = None
            where = view.span(cond)
            other = self._other_branch_end(branch) if device_pass else None
            if other is not None and not self._host_only(branch):
                # `#ifdef __CUDA_ARCH__ rsqrtf(x) #else 1.f / std::sqrt(x)` in a device
                # function: HIP's device pass compiles the `#else`, which is portable here.
                severity = Severity.INFO
                message += (
                    "; the HIP device pass compiles the `#else` branch instead, which holds no "
                    "host-only code here (no exceptions, TORCH_CHECK or I/O): a performance "
                    "or precision note, not a break"
                )
            elif other is not None:
                where = (where[0], other)
                message += (
                    "; the HIP device pass compiles the `#else` branch instead, so host-only "
                    "code there (exceptions, TORCH_CHECK, I/O) breaks the ROCm build"
                )
            elif self._fallback_features(branch):
                # `#if __CUDA_ARCH__ >= 530` / `#define FAST_HALF 1`: on ROCm the macro stays
                # undefined and every test of it in the project has an `#else` to compile.
                severity = Severity.INFO
                names = ", ".join(f"`{n}`" for n in self._fallback_features(branch))
                message += (
                    f" (this branch only defines {names}, and every test of it in the project "
                    "has an `#else`, which ROCm compiles: a performance note, not a break)"
                )
            elif has_fallback(view, branch):
                # `#if __CUDA_ARCH__ >= 530 fast #else portable #endif`: ROCm compiles the
                # other side, which is correct there; only the faster path is lost.
                severity = Severity.INFO
                message += (
                    " (ROCm compiles the `#else` side here, so this is a performance note, "
                    "not a break)"
                )
            self.report(where, message, fix, severity=severity)

    def _ported(self, cond) -> bool:
        """The project's port defines `__CUDA_ARCH__` where this file is compiled on ROCm (a
        header it includes, or a definition above: `#define __CUDA_ARCH__ 1300` in its HIP
        compat header, context.project_port): the test reads the project's value there."""
        from cuda2rocm.context import project_port

        view = self.view
        return ARCH in view.project_names or project_port.own_names(view).covers(
            ARCH, cond.start_byte
        )

    def _fallback_features(self, branch) -> list[str]:
        """The macros a branch without `#else` only `#define`s, when each is a project feature
        macro whose every test has an `#else` (`ProjectMacros.fallback_features`); else []."""
        view = self.view
        if not view.fallback_features or branch.child_by_field_name("alternative") is not None:
            return []
        skip = {branch.child_by_field_name(f) for f in ("condition", "name")}
        names = []
        for child in branch.named_children:
            if child in skip or child.type == "comment":
                continue
            name = child.child_by_field_name("name") if child.type == "preproc_def" else None
            if name is None or view.text(name) not in view.fallback_features:
                return []
            names.append(view.text(name))
        return names

    def _host_only(self, branch) -> bool:
        """Whether the `#else` side holds code a device pass cannot compile (exceptions,
        torch's host checks, streams and host I/O, host containers: `_HOST_ONLY`), or the
        device side does something the `#else` may not (atomics, barriers, warp exchange,
        inline asm: `_DEVICE_ONLY`), so taking the `#else` on the device is not equivalent."""
        alternative = branch.child_by_field_name("alternative")
        if alternative is None or _HOST_ONLY.search(self.view.text(alternative)):
            return True
        if not self._only_known_calls(alternative):
            return True  # a call this file does not show to be device code: unknown
        view = self.view
        device = view.source.text[view.char(branch.start_byte) : view.char(alternative.start_byte)]
        return bool(_DEVICE_ONLY.search(device))

    def _only_known_calls(self, alternative) -> bool:
        """Every call in the `#else` is a math function (`sqrtf`, `std::sqrt`, ...), a vector
        type's constructor (`float3`, `vec3`, `make_float2`), `assert`, or a function this file
        defines: code whose device-side meaning the file shows."""
        view = self.view
        defined = {cpp.function_name(view, f) for f in view.functions} - {""}
        for node in cpp.nodes_of_type(alternative, "call_expression"):
            callee = node.child_by_field_name("function")
            name = view.text(callee).strip() if callee is not None else ""
            if not (_MATH.match(name) or name in defined or name == "assert"):
                return False
        return True

    def _other_branch_end(self, branch) -> int | None:
        """End of the `#else` branch of a device-pass test inside a device function: the code
        the HIP device pass compiles in place of the skipped branch."""
        view = self.view
        alternative = branch.child_by_field_name("alternative")
        if alternative is None or alternative.type != "preproc_else":
            return None
        directive = view.text(branch.child(0)) if branch.child(0) is not None else ""
        cond = branch.child_by_field_name("condition")
        positive = directive == "#ifdef" or (
            directive == "#if" and cond is not None and cond.type == "preproc_defined"
        )
        if not positive or not view.in_device_code(branch):
            return None
        return view.char(alternative.end_byte)

    def _reads_arch(self, branch, cond) -> bool:
        """Whether the branch (up to its #else/#elif) names __CUDA_ARCH__ after its condition:
        in code, in a nested directive's condition, or in a macro body."""
        view = self.view
        alternative = branch.child_by_field_name("alternative")
        end = alternative.start_byte if alternative is not None else branch.end_byte
        start = cond.end_byte
        if any(start <= n.start_byte < end and view.text(n) == ARCH for n in view.identifiers):
            return True
        first, last = view.char(start), view.char(end)
        return any(t.name == ARCH and first <= t.start < last for t in view.macro_tokens)

    def _fix(self, branch, cond, tests):
        view = self.view
        if cond.type == "identifier" and branch.type == "preproc_ifdef":
            directive = branch.child(0)
            if view.text(directive) == "#ifdef":
                new = f"#if defined({ARCH}) || defined({HIP_DEVICE})"
            else:
                new = f"#if !defined({ARCH}) && !defined({HIP_DEVICE})"
            return self.fix(
                self.replace_between(directive, cond, new), description=f"also test {HIP_DEVICE}"
            )
        edits = [
            self.replace(t.parent, f"({view.text(t.parent)} || defined({HIP_DEVICE}))")
            for t in tests
        ]
        if len(tests) == 1 and tests[0].parent == cond:
            edits = [self.replace(cond, f"{view.text(cond)} || defined({HIP_DEVICE})")]
        return self.fix(*edits, description=f"also test {HIP_DEVICE}") if edits else None
