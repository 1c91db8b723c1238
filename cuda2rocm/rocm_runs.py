"""Whether ROCm could compile and run a stretch of C++/CUDA code: the test a guard fix must pass.

A fix that adds `!defined(__HIP__)` (or `!defined(USE_ROCM)`, `!defined(__HIP_PLATFORM_AMD__)`)
to a condition states that the branch is CUDA-only. That is right only for code ROCm cannot
run: a name HIP has no counterpart for (the name table's `supported`), inline PTX, a CUDA header
HIP lacks, an `#error`, or nothing at all. A kernel launch, arithmetic, or a runtime call HIP
maps is code ROCm runs; guarding it away would make the ROCm build silently lose it (and end the
finding that says so). The reason returned is shown in the finding.
"""

from __future__ import annotations

import re

from cuda2rocm import names

_BLANK = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\b\s*(?:volatile\b|__volatile__\b)?\s*\(")
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]", re.M)
_ERROR = re.compile(r"^[ \t]*#[ \t]*error\b", re.M)
_DIRECTIVE_LINE = re.compile(r"^[ \t]*#[^\n]*", re.M)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define\b", re.M)
#: CUDA libraries with no HIP counterpart of the same API, which the name table does not list:
#: CUPTI (ROCm's tracing is roctracer / rocprofiler, another API) and NVML (ROCm has rocm-smi).
_NO_HIP_LIBRARY = re.compile(r"\b(?:CUPTI_\w+|cupti[A-Z_]\w*|NVML_\w+|nvml[A-Z]\w*)\b")


def cuda_only_reason(code: str) -> str | None:
    """Why ROCm cannot compile or run `code` (so a CUDA-only guard around it loses nothing), or
    None when it may: then a guard fix must let ROCm keep it."""
    blanked = _BLANK.sub(" ", code)
    if (
        not _DIRECTIVE_LINE.sub(" ", blanked).strip()
        and not _INCLUDE.search(blanked)
        and not _DEFINE.search(blanked)
    ):
        return "the branch holds no code"
    if _ERROR.search(blanked):
        return "the branch stops the build (`#error`)"
    if _ASM.search(blanked):
        return "the branch holds inline PTX (`asm`), which hipcc cannot assemble"
    for m in _INCLUDE.finditer(code):
        row = names.header(m.group(1))
        if row is not None and not row.supported:
            return f"the branch includes <{m.group(1)}>, which HIP has no counterpart for"
    library = _NO_HIP_LIBRARY.search(blanked)
    if library is not None:
        return f"the branch uses `{library.group(0)}` (a CUDA library HIP has no counterpart for)"
    for m in _WORD.finditer(blanked):
        row = names.lookup(m.group(0))
        if row is not None and row.kind != "header" and not row.supported:
            return f"the branch uses `{m.group(0)}`, which HIP has no counterpart for"
    return None
