"""Project macros that are vendor switches by what their branches hold.

A ported project often switches on a macro of its own that its build sets in a way the tool
cannot evaluate (`-DHAVE_GPU_NV=1` under an option, a generated config header):

    #if HAVE_GPU_NV                      // the CUDA side
    #include <cuda_runtime.h>
    #define gpuStream_t cudaStream_t
    #elif HAVE_GPU_AMD                   // the HIP side
    #include <hip/hip_runtime.h>
    #define gpuStream_t hipStream_t
    #endif

The chain says what the macros mean: its HIP arm (one that includes a HIP or ROCm library
header, `hip/`, `hipblas/`, `rocprim/`, `rccl.h`, or spells HIP identifiers) is what the
project's ROCm build compiles, and an arm before it is taken only
where the HIP arm is not, so on ROCm its test is false. Such a macro, tested alone (`#if M`,
`#ifdef M`, `#if defined(M)`) by an arm that spells CUDA (a CUDA header, CUDA runtime/library
identifiers) and no HIP, is not defined on ROCm: every other `#if M` of the project is CUDA-only
code too. Arms after the HIP one say nothing (the HIP arm may be the `#elif` of a
CPU fallback). A macro that some chain puts on the HIP side, or that the build defines for
ROCm, is never inferred CUDA-only; names with a leading underscore are the compilers' and
stay theirs (the preprocessor passes know them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)", re.M)
#: A test of one macro: `M`, `defined(M)`, `defined M`, `M == 1`-free spellings only.
_SIMPLE = re.compile(
    r"^\s*(?:defined\s*\(\s*([A-Za-z]\w*)\s*\)|defined\s+([A-Za-z]\w*)|([A-Za-z]\w*))\s*(?://.*|/\*.*)?$"
)
_HIP = re.compile(
    r'#\s*include\s*[<"](?:hip\w*|roc\w+|miopen|rccl)[/.]|\bhip[A-Z]\w*|\bHIP[A-Z_]\w*|\b__hip_\w+'
)
_CUDA = re.compile(
    r'#\s*include\s*[<"](?:cuda|cublas|cudnn|cusparse|curand|cufft|nccl|cub/)'
    r"|\b(?:cuda|cublas|cudnn|cusparse|curand|cufft)[A-Z]\w*|\bCU(?:BLAS|DNN|DA)_\w+"
)


def infer(texts: Mapping[str, str]) -> dict[str, str]:
    """Macro -> why it is CUDA-only ("`HAVE_GPU_NV` guards CUDA code whose sibling `#elif`
    at gpu.h:6 is the HIP one"), over the run's C/C++ texts."""
    cuda: dict[str, str] = {}
    hip: set[str] = set()
    for path, text in texts.items():
        if "#" not in text or _HIP.search(text) is None:
            continue
        for chain in _chains(text):
            _judge(path, chain, cuda, hip)
    return {name: why for name, why in cuda.items() if name not in hip}


def _judge(path: str, chain: list[tuple[str, int, str]], cuda: dict[str, str], hip: set[str]):
    """One `#if` chain: (test, line, the arm's own text) per arm."""
    kinds = [_kind(body) for _, _, body in chain]
    if "hip" not in kinds:
        return
    first_hip = kinds.index("hip")
    for (test, _, _), kind in zip(chain, kinds, strict=True):
        name = _macro(test)
        if name is not None and kind == "hip":
            hip.add(name)
    _, hip_line, _ = chain[first_hip]
    for (test, line, _), kind in zip(chain[:first_hip], kinds[:first_hip], strict=True):
        name = _macro(test)
        if name is None or kind != "cuda" or name.startswith("_"):
            continue
        cuda.setdefault(
            name,
            f"`{name}` guards CUDA code ({path}:{line}) whose sibling branch at "
            f"{path}:{hip_line} is the HIP one: the ROCm build takes that branch",
        )


def _kind(body: str) -> str:
    if _HIP.search(body):
        return "hip"
    return "cuda" if _CUDA.search(body) else "other"


def _macro(test: str) -> str | None:
    """The macro an arm's test names alone (`#if M`, `#ifdef M`, `defined(M)`), else None."""
    kind, _, rest = test.partition(" ")
    if kind == "ifndef" or kind == "else":
        return None
    m = _SIMPLE.match(rest)
    if m is None:
        return None
    name = next(g for g in m.groups() if g)
    return None if name in ("defined", "0", "1") else name


def _chains(text: str) -> Iterable[list[tuple[str, int, str]]]:
    """Each `#if` chain as [(test "if M" / "elif M" / "ifdef M" / "else", line, arm text)],
    an arm's text holding its nested chains too."""
    stack: list[list] = []  # per open chain: [arms, start offset of the current arm]
    for m in _DIRECTIVE.finditer(text):
        word, rest = m.group(1), m.group(2).strip()
        line = text.count("\n", 0, m.start()) + 1
        if word in ("if", "ifdef", "ifndef"):
            stack.append([[(f"{word} {rest}", line)], m.end()])
            continue
        if not stack:
            continue  # an unbalanced #else / #endif: nothing to judge
        arms, start = stack[-1]
        arms[-1] = (*arms[-1][:2], text[start : m.start()])
        if word == "endif":
            stack.pop()
            yield [a for a in arms if len(a) == 3]
        else:
            arms.append((f"{word} {rest}" if word == "elif" else "else", line))
            stack[-1][1] = m.end()
