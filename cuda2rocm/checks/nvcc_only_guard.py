"""nvcc-only-guard: preprocessor guards meaning "a GPU compiler" that only nvcc defines.

`hipcc -dM -E -x hip` (HIP 5.2, host pass `--cuda-host-only` and device pass
`--cuda-device-only`) defines `__HIPCC__` and `__HIP__` in both passes and
`__HIP_DEVICE_COMPILE__` in the device pass, never `__CUDACC__` or `__NVCC__` (nvcc defines
both). So `#ifdef __CUDACC__` is silently false under hipcc: the classic
`#define HOST_DEVICE __host__ __device__` falls back to nothing, and kernels calling those
functions fail with "no matching function for call to 'f'". torch's hipify rewrites
`__CUDACC__` to `__HIPCC__`, so torch-built files are skipped for that macro.

`__CUDACC__` tests get an unsafe fix that also tests `__HIPCC__` (nothing changes under nvcc,
which never defines `__HIPCC__`); it is not offered when the condition also tests a value only
nvcc defines (`__CUDA_ARCH__`, cuda-arch-macro's job; `__CUDACC_VER_MAJOR__`, `CUDA_VERSION`:
the test stays decided by it under hipcc) or the branch holds inline assembly. `__NVCC__` is
often a deliberate "this compiler" test (nvcc-only pragmas), so it is reported for review
without a fix. Project macros such as `WITH_CUDA` are info: the build must define them for
ROCm; not reported when the project's setup.py/CMake already defines it, or its HIP counterpart
(`WITH_HIP`, `WITH_ROCM`), for ROCm builds (detectron2 passes `WITH_HIP`).

Include guards of CUDA's runtime headers (`#ifdef __CUDA_RUNTIME_H__`, `__DRIVER_TYPES_H__`,
`__CUDA_RUNTIME_API_H__`: "is the runtime in?", as NVIDIA's samples' helper_cuda.h asks) are
never defined by HIP's headers, so the helpers they guard vanish under hipcc ("use of undeclared
identifier 'checkCudaErrors'"). The `portable` fix includes the compatibility header, which
defines them under HIP; the `hip` fix tests the guard of the HIP header that replaces it
(HIP 5.2 hip_runtime.h, hip_runtime_api.h, driver_types.h: `HIP_INCLUDE_HIP_...`).
"""

from __future__ import annotations

from cuda2rocm.context import preprocessor
from cuda2rocm.context.preprocessor import UNDEFINED, UNKNOWN, Tri, Val
from cuda2rocm.frontends import cpp
from cuda2rocm.frontends.cpp import HIP_MACROS, CppRule
from cuda2rocm.model import Severity

CUDACC = "__CUDACC__"
NVCC = "__NVCC__"
HIPCC = "__HIPCC__"
#: nvcc's values that hipcc never defines (so they read 0 in `#if`): a condition combining
#: `defined(__CUDACC__)` with one of them stays decided by it under hipcc, so also testing
#: `__HIPCC__` does not make hipcc take the branch nvcc takes (faiss's
#: `!defined(__CUDACC__) || __CUDACC_VER_MAJOR__ < 11` is still true under hipcc).
NVCC_VALUES = frozenset(
    {"__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__", "__CUDACC_VER__"}
    | {"__NVCC__", "__CUDA_ARCH__", "CUDA_VERSION", "CUDART_VERSION", "__CUDA_API_VERSION"}
)
#: Build-system macros projects define for "CUDA build"; HIP has no counterpart.
PROJECT = frozenset({"WITH_CUDA", "BUILD_CUDA", "USE_CUDA", "GOOGLE_CUDA", "ENABLE_CUDA"})
_WATCHED = frozenset({CUDACC, NVCC}) | PROJECT
#: CUDA runtime include guards (compat_header.RUNTIME_GUARDS) and the guard of the HIP header
#: that replaces each (as HIP 5.2's /usr/include/hip/*.h spell them).
RUNTIME_GUARDS = {
    "__CUDA_RUNTIME_H__": "HIP_INCLUDE_HIP_HIP_RUNTIME_H",
    "__CUDA_RUNTIME_API_H__": "HIP_INCLUDE_HIP_HIP_RUNTIME_API_H",
    "__DRIVER_TYPES_H__": "HIP_INCLUDE_HIP_DRIVER_TYPES_H",
}


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for branch, cond in view.conditions:
            idents = list(cpp.identifiers(cond))
            names = [view.text(n) for n in idents]
            if any(
                n in HIP_MACROS or n in ("USE_HIP", "WITH_HIP", "__HIP_PLATFORM_AMD__")
                for n in names
            ):
                continue  # already handles HIP
            guards = [n for n in idents if view.text(n) in RUNTIME_GUARDS]
            if guards:
                self._runtime_guards(guards)
            hits = [n for n in idents if view.text(n) in _WATCHED]
            if not hits:
                continue
            first = view.text(hits[0])
            if any(view.text(n) == CUDACC for n in hits):
                if view.torch_built:
                    continue  # torch's hipify rewrites __CUDACC__ to __HIPCC__
                hip, nvcc = _values(view, branch, cond)
                message = (
                    f"`{CUDACC}` is defined by nvcc only (hipcc defines `{HIPCC}`), so this "
                    f"branch is silently skipped by hipcc; test `{HIPCC}` as well"
                )
                if hip is True:
                    message = (
                        f"`{CUDACC}` is defined by nvcc only (hipcc defines `{HIPCC}`), so hipcc "
                        "takes this branch, meant for compilers other than nvcc"
                        + (" (and skips its `#else`)" if _alternative(branch) else "")
                        + f"; test `{HIPCC}` as well"
                    )
                same = _same_choice(branch, hip, nvcc)
                fix = None
                if not same and NVCC_VALUES.isdisjoint(names) and not view.holds_asm(branch):
                    fix = self._fix(branch, cond, [n for n in hits if view.text(n) == CUDACC])
                why = same % " ".join(view.text(cond).split()) if same else ""
                self.report(cond, message, fix, severity=Severity.WARNING, guarded=why)
            elif first == NVCC:
                self.report(
                    cond,
                    f'`{NVCC}` is defined by nvcc only; if this guard means "a GPU build" '
                    f'rather than "the nvcc compiler", test `{HIPCC}` as well',
                    severity=Severity.INFO,
                )
            elif not _rocm_counterpart(first, view.rocm_macros):
                self.report(
                    cond,
                    f"`{first}` is a project macro for a CUDA build; make sure the ROCm build "
                    f"defines it (or a HIP counterpart) too",
                    severity=Severity.INFO,
                )

    def _runtime_guards(self, uses) -> None:
        view = self.view
        if view.torch_built or view.hipified:
            return
        if self.ctx.target == "hip":
            edits = [self.replace(n, RUNTIME_GUARDS[view.text(n)]) for n in uses]
            fix = self.fix(*edits, description="test the HIP header's include guard")
        elif view.includes_header(self.ctx.compat_header):
            return  # the compatibility header defines the guards under HIP
        else:
            compat = view.compat_include_edit(self.ctx)
            fix = None  # a file the header may not go into (compat_header.may_include)
            if compat is not None:
                fix = self.fix(compat, description=f"include {self.ctx.compat_header}")
        name = view.text(uses[0])
        self.report(
            uses[0],
            f"`{name}` is the include guard of a CUDA runtime header, which HIP's headers never "
            f"define, so this branch is silently skipped by hipcc; HIP's counterpart is "
            f"`{RUNTIME_GUARDS[name]}` (the compatibility header defines `{name}` under HIP)",
            fix,
            severity=Severity.WARNING,
        )

    def _fix(self, branch, cond, uses):
        view = self.view
        if cond.type == "identifier" and branch.type in ("preproc_ifdef", "preproc_elifdef"):
            directive = branch.child(0)
            word = view.text(directive)
            if word not in ("#ifdef", "#ifndef"):
                return None
            if word == "#ifdef":
                new = f"#if defined({CUDACC}) || defined({HIPCC})"
            else:
                new = f"#if !defined({CUDACC}) && !defined({HIPCC})"
            return self.fix(
                self.replace_between(directive, cond, new), description=f"also test {HIPCC}"
            )
        tests = [u for u in uses if u.parent is not None and u.parent.type == "preproc_defined"]
        if len(tests) != len(uses):
            return None  # `#if __CUDACC__`: spelled differently, leave to a human
        if len(tests) == 1 and tests[0].parent == cond:
            edits = [self.replace(cond, f"{view.text(cond)} || defined({HIPCC})")]
        else:
            edits = [
                self.replace(t.parent, f"({view.text(t.parent)} || defined({HIPCC}))")
                for t in tests
            ]
        return self.fix(*edits, description=f"also test {HIPCC}")


def _alternative(branch) -> bool:
    return branch.child_by_field_name("alternative") is not None


def _expression(view, branch, cond) -> str:
    """The condition as an `#if` expression (`#ifndef X` is `!defined(X)`)."""
    text = view.text(cond)
    if branch.type in ("preproc_ifdef", "preproc_elifdef") and cond.type == "identifier":
        word = view.text(branch.child(0)) if branch.child(0) is not None else ""
        return f"!defined({text})" if word.endswith("ndef") else f"defined({text})"
    return text


def _nvcc(name: str) -> Val:
    """What nvcc defines, as far as a `__CUDACC__` test goes: `__CUDACC__`, `__NVCC__`, its
    version macros (value: whichever nvcc); never a HIP macro; anything else unknown."""
    if name in (CUDACC, NVCC):
        return Val(True, 1, 1)
    if name in NVCC_VALUES:
        return Val(True)
    if name in HIP_MACROS:
        return UNDEFINED
    return UNKNOWN


def _values(view, branch, cond) -> tuple[Tri, Tri]:
    """The condition's value under hipcc (both passes agree, else unknown; facts of
    data/hip_macros.toml, `hipcc -dM -E`) and under nvcc."""
    if branch.type not in ("preproc_if", "preproc_ifdef"):
        return None, None  # an #elif also depends on the branches before it
    expression = _expression(view, branch, cond)
    hip = {
        preprocessor.evaluate(expression, preprocessor.base_lookup(p, False))[0]
        for p in preprocessor.HIPCC_PASSES
    }
    return (hip.pop() if len(hip) == 1 else None), preprocessor.evaluate(expression, _nvcc)[0]


def _same_choice(branch, hip: Tri, nvcc: Tri) -> str:
    """Why hipcc's choice is one an nvcc build also makes ("" when it may differ), with a `%s`
    for the condition: both take it or both skip it; or hipcc takes a branch with no `#else`
    that nvcc may take too (faiss's `!defined(__CUDACC__) || __CUDACC_VER_MAJOR__ < 11`, true
    under hipcc, where neither macro is defined, and under nvcc 10): the code is meant for a
    CUDA compiler as well, and no other side is silently chosen."""
    if hip is None:
        return ""
    if hip is nvcc:
        taken = "take" if hip else "skip"
        return f"hipcc and nvcc both {taken} `%s`: nothing differs on ROCm"
    if hip is True and nvcc is None and not _alternative(branch):
        return (
            "hipcc takes this branch (`%s` is true: hipcc defines neither `__CUDACC__` nor "
            "nvcc's version macros, `hipcc -dM -E`, HIP 5.2) and some nvcc builds take it too; "
            "with no `#else`, no other code is silently chosen instead"
        )
    return ""


def _rocm_counterpart(name: str, rocm_macros: frozenset[str]) -> bool:
    """Whether the build already defines `name` or its HIP/ROCm spelling for ROCm builds."""
    spellings = {name, name.replace("CUDA", "HIP"), name.replace("CUDA", "ROCM")}
    return bool(spellings & rocm_macros)
