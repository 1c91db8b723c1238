"""nvcc-flags: nvcc-only flags in extension builds, which hipcc receives unchanged on ROCm.

Looks at the value of a `"nvcc"` key (`extra_compile_args={"cxx": [...], "nvcc": [...]}`) and
of `extra_cuda_cflags=` (`torch.utils.cpp_extension.load`/`load_inline`). The flag list is
followed through literals, `+` concatenations, `*unpacking` and names bound once to such an
expression and never mutated. The flag table (with hipcc equivalents) is the rule's data.

The fix selects the list on IS_HIP_EXTENSION: `[hipcc flags] if IS_HIP_EXTENSION else <the
original expression, byte for byte>`, importing IS_HIP_EXTENSION if needed.

Why it is safe: IS_HIP_EXTENSION is False on every non-ROCm build of torch (it needs ROCM_HOME
and torch.version.hip), so CUDA builds get the original expression unchanged. On ROCm, hipcc
gets only flags it accepts: the table's `hip` replacements, and flags kept from the original
list only when they are in the rule's `portable` table (exact flags, or -D/-U/-I of the
patterns there). Every flag the fix can write is compiled with hipcc in
tests/test_nvcc_flags_hipcc.py. Any other element (`--ftz=false`, a variable) means no fix.

Lists assembled elsewhere (`flags += [...]`, `flags.append(...)`, `args["nvcc"] = ...`)
are the sites of `nvcc_flag_sites.FlagSites`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from cuda2rocm.checks.nvcc_flag_sites import IGNORED, FlagSites
from cuda2rocm.frontends.python import string_value
from cuda2rocm.frontends.python_build import import_edit, under_vendor_test
from cuda2rocm.model import Severity

_KEYWORDS = {"extra_cuda_cflags"}
#: `-U__CUDA_NO_HALF_OPERATORS__` / `_CONVERSIONS__`: the two whose HIP twins torch 2.13 defines
#: for hipcc (COMMON_HIPCC_FLAGS) and ROCm 7.0's fp16 header tests (hiprtc_runtime.h). HIP has
#: no HALF2/BFLOAT16 twins, so `-U__CUDA_NO_HALF2_OPERATORS__` needs nothing on ROCm.
_CUDA_UNDEF = re.compile(r"-U__CUDA_NO_(HALF_(?:OPERATORS|CONVERSIONS)__)")


@dataclass
class Element:
    node: cst.BaseExpression
    #: The string value; None when it is not a plain literal.
    value: str | None


class Rule(FlagSites):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.flags: dict[str, dict] = self.spec.tables["flags"]
        portable = self.spec.tables["portable"]
        self._portable = frozenset(portable["exact"])
        self._patterns = [re.compile(p) for p in portable["patterns"]]
        self._module: cst.Module | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self._module = node

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if string_value(node.key) == "nvcc":
            self._check(node.value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in _KEYWORDS:
            self._check(node.value)
            self._cuda_macro_undefs(node.value)

    def _cuda_macro_undefs(self, value: cst.BaseExpression) -> None:
        """`load(..., extra_cuda_cflags=["-U__CUDA_NO_HALF_OPERATORS__"])`: on ROCm torch puts
        `-D__HIP_NO_HALF_OPERATORS__=1` (COMMON_HIPCC_FLAGS) before these flags and, unlike
        BuildExtension's `_hipify_compile_flags`, does not rename CUDA in them; HIP's fp16
        header tests only the `__HIP_NO_*` names, so the -U undoes nothing there."""
        if under_vendor_test(self, value):
            return
        for element in self._resolve(value) or []:
            macro = _CUDA_UNDEF.fullmatch(element.value or "")
            if macro is None:
                continue
            twin = "__HIP_NO_" + macro.group(1)
            self.report(
                element.node,
                f"-U__CUDA_NO_{macro.group(1)} does not reach HIP: torch's load() defines "
                f"{twin}=1 for hipcc and passes extra_cuda_cflags unrenamed, so __half "
                f"operators/conversions stay disabled on ROCm; also pass -U{twin} when "
                "IS_HIP_EXTENSION",
                severity=Severity.WARNING,
            )

    # -- resolving the list ----------------------------------------------------------------------
    def _resolve(self, expr: cst.BaseExpression, depth: int = 0) -> list[Element] | None:
        if depth > 8:
            return None
        if isinstance(expr, (cst.List, cst.Tuple)):
            out: list[Element] = []
            for el in expr.elements:
                if isinstance(el, cst.StarredElement):
                    inner = self._resolve(el.value, depth + 1)
                    if inner is None:
                        out.append(Element(el.value, None))
                    else:
                        out += inner
                else:
                    out.append(Element(el.value, string_value(el.value)))
            return out
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            left = self._resolve(expr.left, depth + 1)
            right = self._resolve(expr.right, depth + 1)
            return None if left is None or right is None else left + right
        if isinstance(expr, cst.Name):
            value = self._binding(expr)
            return None if value is None else self._resolve(value, depth + 1)
        return None

    def _binding(self, name: cst.Name) -> cst.BaseExpression | None:
        """The value of a name assigned once (`flags = [...]`) and not mutated afterwards."""
        found = self.single_assignment(name)
        if found is None:
            return None
        assignment, statement = found
        for ref in assignment.references:
            if isinstance(self.parent(ref.node), (cst.Attribute, cst.Subscript)):
                return None  # flags.append(...), flags[0] = ...: not a constant list
        return statement.value

    # -- classification ------------------------------------------------------------------------
    def _match(self, value: str) -> tuple[str, dict, bool] | None:
        """(flag, table entry, value joined with '=') for an nvcc-only flag."""
        if value in self.flags:
            return value, self.flags[value], False
        name, eq, _ = value.partition("=")
        if eq and name in self.flags and self.flags[name].get("value"):
            return name, self.flags[name], True
        return None

    def portable(self, flag: str) -> bool:
        """Whether hipcc accepts `flag` as nvcc does (the rule's `portable` table)."""
        return flag in self._portable or any(p.fullmatch(flag) for p in self._patterns)

    def _hip_list(self, elements: list[Element]) -> tuple[list[str], list[str]] | None:
        """(hipcc elements as source text, the nvcc-only flags found); None if a part is not
        a literal, or is neither a known nvcc-only flag nor portable."""
        quote = next((e.node.quote for e in elements if isinstance(e.node, cst.SimpleString)), '"')
        hip: list[str] = []
        found: list[str] = []
        i = 0
        while i < len(elements):
            el = elements[i]
            if el.value is None:
                return None
            hit = self._match(el.value)
            if hit is None:
                if not self.portable(el.value):
                    return None
                hip.append(self.text(el.node))
                i += 1
                continue
            _, entry, joined = hit
            found.append(el.value)
            arg = None
            if entry.get("value"):
                if joined:
                    arg = el.value.partition("=")[2]
                elif i + 1 < len(elements) and elements[i + 1].value is not None:
                    arg = elements[i + 1].value
                    found[-1] += f" {arg}"
                    i += 1
                elif i + 1 < len(elements):
                    return None
            if entry.get("unwrap") and arg:
                host = [a for a in arg.split(",") if a]
                if not all(self.portable(a) for a in host):
                    return None
                hip += [f"{quote}{a}{quote}" for a in host]
            hip += [f"{quote}{h}{quote}" for h in entry.get("hip", [])]
            i += 1
        return hip, found

    def _check(self, value: cst.BaseExpression) -> None:
        if under_vendor_test(self, value):
            return
        elements = self._resolve(value)
        if not elements:
            return
        known = [e for e in elements if e.value is not None and self._match(e.value)]
        if not known:
            return
        shown = ", ".join(dict.fromkeys(e.value for e in known if e.value))
        message = (
            f"nvcc-only flags ({shown}) reach hipcc unchanged on ROCm, where torch passes this "
            "list to hipcc and only renames CUDA macros; select the list on IS_HIP_EXTENSION"
        )
        result = self._hip_list(elements)
        values = [e.value for e in elements]
        if self.hipcc_ignores([e.value for e in known if e.value], values):
            message, severity = IGNORED.format(shown=shown), Severity.INFO
        else:
            severity = None
        if result is None or self._module is None:
            self.report(
                value,
                message + " (some elements are not literals or not known to work with hipcc: "
                "no automatic fix)",
                severity=severity,
            )
            return
        hip, _ = result
        spelled, edit = import_edit(self, self._module, "IS_HIP_EXTENSION")
        if spelled is None:  # not a torch build script: report, no fix
            self.report(value, message, severity=severity)
            return
        replacement = f"[{', '.join(hip)}] if {spelled} else {self.text(value)}"
        edits = [self.replace(value, replacement)]
        if edit is not None:
            edits.append(edit)
        self.report(
            value,
            message,
            self.fix(*edits, description="use hipcc flags when IS_HIP_EXTENSION"),
            severity=severity,
        )
