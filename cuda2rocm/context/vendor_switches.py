"""Project macros that are vendor switches by what their branches hold.

A ported project often switches on a macro of its own that its build sets in a way the tool
cannot evaluate (`-DHAVE_GPU_NV=1` under an option, a generated config header):

    #if HAVE_GPU_NV                      // the CUDA side
    #include <cuda_runtime.h>
    #define gpuStream_t cudaStream_t
    #elif HAVE_GPU_AMD                   // the HIP side
    #include "gpu/amd_side.h"            // itself includes <hip/hip_runtime.h>
    #endif

The chain says what the macros mean. An arm is HIP when it includes a HIP or ROCm library
header (`hip/`, `hipblas/`, `rocprim/`, `rccl.h`) or spells HIP identifiers, or includes a
project header that is HIP by what it holds unconditionally (outside every conditional but
its include guard): such an include, an identifier, a `#define cudaX hipX` map, or an include
of another such header (followed to a fixpoint, so include cycles end). A header whose HIP
lines all sit under conditions (a portability header with both vendors inside) makes no arm
HIP. CUDA arms are read the same way with CUDA spellings.

- **CUDA-only**: the HIP arm is what the project's ROCm build compiles, and an arm before it
  is taken only where the HIP arm is not, so on ROCm its test is false. Such a macro, tested
  alone (`#if M`, `#ifdef M`, `#if defined(M)`) by a CUDA arm and no HIP, is not defined on
  ROCm: every other `#if M` of the project is CUDA-only code too. Arms after the HIP one say
  nothing (the HIP arm may be the `#elif` of a CPU fallback).
- **Defined on ROCm** (the project's ROCm switch, where the build cannot be read): a macro
  tested alone by a HIP arm is defined on ROCm only when that chain selects the GPU runtime
  by it: its arm reaches the HIP runtime (`hip/hip_runtime.h`, directly or through project
  headers) and a sibling arm, before or after, reaches the CUDA runtime (`cuda_runtime.h`,
  `cuda.h`). A ROCm build that left the macro undefined would compile the CUDA runtime, so a
  project that wrote that chain sets it there. A HIP arm that selects a library or a feature
  (`#ifdef HAVE_ROCTX`, hipBLASLt over cuBLASLt) is an option, not the switch, and says
  nothing; so does a file torch's hipify rewrites (its CUDA arm compiles on ROCm too).

A macro some chain puts on the HIP side is never CUDA-only, one some chain puts on the CUDA
side (its CUDA arm where another arm is HIP) is never a ROCm switch, and one the project
`#define`s or `#undef`s itself is left to its headers (`project_macros`); the build's own facts
win over both (`BuildDefines.with_cuda_only`).
Names with a leading underscore are the compilers' and stay theirs (the preprocessor passes
know them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from cuda2rocm.context.preprocessor import blank_comments
from cuda2rocm.context.runtime_provided import included_names

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)", re.M)
#: A test of one macro: `M`, `defined(M)`, `defined M`, `M == 1`-free spellings only.
_SIMPLE = re.compile(
    r"^\s*(?:defined\s*\(\s*([A-Za-z]\w*)\s*\)|defined\s+([A-Za-z]\w*)|([A-Za-z]\w*))\s*(?://.*|/\*.*)?$"
)
_HIP_INCLUDE = r'#\s*include\s*[<"](?:hip\w*|roc\w+|miopen|rccl)[/.]'
_CUDA_INCLUDE = r'#\s*include\s*[<"](?:cuda|cublas|cudnn|cusparse|curand|cufft|nccl|cub/)'
_HIP = re.compile(_HIP_INCLUDE + r"|\bhip[A-Z]\w*|\bHIP[A-Z_]\w*|\b__hip_\w+")
_CUDA = re.compile(
    _CUDA_INCLUDE
    + r"|\b(?:cuda|cublas|cudnn|cusparse|curand|cufft)[A-Z]\w*|\bCU(?:BLAS|DNN|DA)_\w+"
)
#: A header is one vendor's by its includes, or by mapping CUDA names to HIP ones
#: (`#define cudaStream_t hipStream_t`); names it merely mentions (a declaration, a message)
#: are no vendor: a multi-backend library's core headers mention every one.
_HIP_HEADER = re.compile(
    _HIP_INCLUDE + r"|^[ \t]*#[ \t]*define[ \t]+(?:cu[a-z]+[A-Z]|CU[A-Z]*_)\w*(?:\([^)\n]*\))?"
    r"[ \t]+(?:hip|HIP)\w",
    re.M,
)
_CUDA_HEADER = re.compile(_CUDA_INCLUDE)
_HIP_RUNTIME = re.compile(r'#\s*include\s*[<"](?:hip/)?hip_runtime(?:_api)?\.h[>"]')
_CUDA_RUNTIME = re.compile(r'#\s*include\s*[<"](?:cuda_runtime(?:_api)?|cuda)\.h[>"]')
_DEFINES = re.compile(r"^[ \t]*#[ \t]*(?:define|undef)[ \t]+([A-Za-z_]\w*)", re.M)

#: What a text spells: HIP, CUDA, and whether it includes either runtime header.
HIP, CUDA, HIP_RT, CUDA_RT = "hip", "cuda", "hip-runtime", "cuda-runtime"
Find = Callable[[str, str], "str | None"]


@dataclass
class Switches:
    #: macro -> why it is not defined on ROCm.
    cuda_only: dict[str, str] = field(default_factory=dict)
    #: macro -> why it is defined on ROCm; `valued`: those some HIP arm tests by value (`#if M`).
    rocm: dict[str, str] = field(default_factory=dict)
    valued: set[str] = field(default_factory=set)


def infer(texts: Mapping[str, str], find: Find | None = None) -> dict[str, str]:
    """Macro -> why it is CUDA-only ("`HAVE_GPU_NV` guards CUDA code whose sibling `#elif`
    at gpu.h:6 is the HIP one"), over the run's C/C++ texts."""
    return judge(texts, find).cuda_only


def judge(
    texts: Mapping[str, str],
    find: Find | None = None,
    hipified: Callable[[str], bool] | None = None,
) -> Switches:
    """The run's vendor switches. `find(include, includer)`: the project file an `#include`
    names, or None (`ProjectMacros._find`); without it only arms' own text counts.
    `hipified(path)`: whether torch's hipify rewrites that file (no ROCm switch is read there)."""
    headers = _HeaderKinds(texts, find)
    cuda: dict[str, str] = {}
    rocm: dict[str, str] = {}
    hip_side: set[str] = set()
    cuda_side: set[str] = set()
    valued: set[str] = set()
    for path, text in texts.items():
        if "#" not in text or not (_HIP.search(text) or headers.reaches_hip(path, text)):
            continue
        for chain in _chains(text):
            kinds = [headers.arm(path, body) for _, _, body in chain]
            _judge(path, chain, kinds, cuda, hip_side, cuda_side)
            if hipified is None or not hipified(path):
                _switch(path, chain, kinds, rocm, valued)
    defined = {m.group(1) for text in texts.values() for m in _DEFINES.finditer(text)}
    return Switches(
        cuda_only={n: why for n, why in cuda.items() if n not in hip_side},
        rocm={n: why for n, why in rocm.items() if n not in cuda_side | cuda.keys() | defined},
        valued=valued,
    )


def hip_sides(
    texts: Mapping[str, str], find: Find | None = None
) -> tuple[frozenset[str], dict[str, tuple[tuple[int, int], ...]]]:
    """(files HIP by what they hold unconditionally and not CUDA: an include of a HIP header,
    a `#define cudaX hipX` map, or an include of another such file; path -> the (first, last)
    lines of each `#if` arm that spells HIP and no CUDA, by its own text and the project
    headers it includes; comments left out, an include guard is no arm). nvcc compiles
    neither: no HIP headers there (`hip_only`)."""
    headers = _HeaderKinds(texts, find)
    graph = headers._graph()
    hip = frozenset(p for p, f in graph.items() if HIP in f and CUDA not in f)
    arms: dict[str, tuple[tuple[int, int], ...]] = {}
    for path, text in texts.items():
        if "#" not in text or not (_HIP.search(text) or headers.reaches_hip(path, text)):
            continue
        blanked = blank_comments(text)
        guard = _DIRECTIVE.search(blanked) if _guard(blanked) else None
        first = blanked.count("\n", 0, guard.start()) + 1 if guard is not None else 0
        spans = []
        for chain in _chains(blanked):
            if chain[0][1] == first:
                continue  # the include guard: the whole file, not an arm of a switch
            for _, line, body in chain:
                flags = headers.arm(path, body)
                if HIP in flags and CUDA not in flags:
                    spans.append((line, line + body.count("\n")))
        if spans:
            arms[path] = tuple(sorted(spans))
    return hip, arms


Chain = list[tuple[str, int, str]]


def _kind(flags: frozenset[str]) -> str:
    return HIP if HIP in flags else CUDA if CUDA in flags else "other"


def _judge(
    path: str,
    chain: Chain,
    flags: list[frozenset[str]],
    cuda: dict[str, str],
    hip: set[str],
    cuda_side: set[str],
) -> None:
    """One `#if` chain: (test, line, the arm's own text) per arm, with what each arm reaches."""
    kinds = [_kind(f) for f in flags]
    if HIP not in kinds:
        return
    for (test, _, _), kind in zip(chain, kinds, strict=True):
        name = _macro(test)
        if name is not None and kind == HIP:
            hip.add(name)
        elif name is not None and kind == CUDA:
            cuda_side.add(name)  # the CUDA arm of a chain with a HIP one
    first_hip = kinds.index(HIP)
    _, hip_line, _ = chain[first_hip]
    for (test, line, _), kind in zip(chain[:first_hip], kinds[:first_hip], strict=True):
        name = _macro(test)
        if name is None or kind != CUDA or name.startswith("_"):
            continue
        cuda.setdefault(
            name,
            f"`{name}` guards CUDA code ({path}:{line}) whose sibling branch at "
            f"{path}:{hip_line} is the HIP one: the ROCm build takes that branch",
        )


def _switch(
    path: str, chain: Chain, flags: list[frozenset[str]], rocm: dict[str, str], valued: set[str]
) -> None:
    """A HIP-runtime arm tested by one macro, with a sibling CUDA-runtime arm: the macro is
    the project's ROCm switch."""
    cuda_arms = [
        line
        for (_, line, _), f in zip(chain, flags, strict=True)
        if _kind(f) == CUDA and CUDA_RT in f
    ]
    if not cuda_arms:
        return
    for (test, line, _), f in zip(chain, flags, strict=True):
        name = _macro(test)
        if name is None or name.startswith("_") or _kind(f) != HIP or HIP_RT not in f:
            continue
        if _by_value(test):
            valued.add(name)  # `#if M`: nonzero where the arm is taken
        rocm.setdefault(
            name,
            f"`{name}` selects the HIP runtime ({path}:{line}) over the CUDA one "
            f"({path}:{cuda_arms[0]}): the project's ROCm build defines it",
        )


class _HeaderKinds:
    """What project headers bring in unconditionally, through their own includes."""

    def __init__(self, texts: Mapping[str, str], find: Find | None) -> None:
        self.texts = texts
        self.find = find
        self._flags: dict[str, frozenset[str]] | None = None

    def _graph(self) -> dict[str, frozenset[str]]:
        """Per project file, the flags its unconditional text reaches (a fixpoint over its
        unconditional includes: cycles end, each edge adds flags only)."""
        if self._flags is not None:
            return self._flags
        own: dict[str, set[str]] = {}
        edges: dict[str, set[str]] = {}
        for path, text in self.texts.items():
            top = _unconditional(blank_comments(text)) if "#" in text else ""
            own[path] = set(_spelled(top, header=True))
            if self.find is not None:
                targets = (self.find(n, path) for n in included_names(top))
                edges[path] = {t for t in targets if t is not None and t != path}
        changed = True
        while changed:
            changed = False
            for path, targets in edges.items():
                before = len(own[path])
                for t in targets:
                    own[path] |= own.get(t, set())
                changed = changed or len(own[path]) != before
        self._flags = {p: frozenset(f) for p, f in own.items()}
        return self._flags

    def included(self, path: str, text: str) -> frozenset[str]:
        """Flags the project headers `text` includes (anywhere in it) reach."""
        if self.find is None or "include" not in text:
            return frozenset()
        targets = [self.find(n, path) for n in included_names(text)]
        if not any(targets):
            return frozenset()
        graph = self._graph()
        found: set[str] = set()
        for t in targets:
            flags = graph.get(t, frozenset()) if t is not None and t != path else frozenset()
            if (HIP in flags) != (CUDA in flags):  # one vendor's header; both is portable code
                found |= flags
        return frozenset(found)

    def reaches_hip(self, path: str, text: str) -> bool:
        return HIP in self.included(path, text)

    def arm(self, path: str, body: str) -> frozenset[str]:
        """What one arm's text spells, with what the project headers it includes reach."""
        return _spelled(body) | self.included(path, body)


def _spelled(text: str, header: bool = False) -> frozenset[str]:
    """What `text` spells: an arm's own text by any HIP/CUDA spelling, a header's
    (`header`) by its includes and CUDA-to-HIP maps only."""
    flags = set()
    if (_HIP_HEADER if header else _HIP).search(text):
        flags.add(HIP)
        if _HIP_RUNTIME.search(text):
            flags.add(HIP_RT)
    if (_CUDA_HEADER if header else _CUDA).search(text):
        flags.add(CUDA)
        if _CUDA_RUNTIME.search(text):
            flags.add(CUDA_RT)
    return frozenset(flags)


def _unconditional(text: str) -> str:
    """The lines of `text` outside every `#if` (an include guard around the whole file, an
    `#ifndef G` whose next line is `#define G`, does not count)."""
    if "#" not in text:
        return text
    kept: list[str] = []
    depth = 0
    guard = _guard(text)
    start = 0
    for m in _DIRECTIVE.finditer(text):
        if depth <= guard:
            kept.append(text[start : m.start()])
        word = m.group(1)
        if word in ("if", "ifdef", "ifndef"):
            depth += 1
        elif word == "endif" and depth:
            depth -= 1
        start = m.end()
    if depth <= guard:
        kept.append(text[start:])
    return "".join(kept)


def _guard(text: str) -> int:
    """1 when the file is one include guard (its first directive `#ifndef G` with `#define G`
    on the next line, closed by its last directive), else 0."""
    found = list(_DIRECTIVE.finditer(text))
    if not found or found[0].group(1) != "ifndef":
        return 0
    name = found[0].group(2).strip()
    after = re.match(r"\s*#[ \t]*define[ \t]+(\w+)", text[found[0].end() :])
    if after is None or after.group(1) != name:
        return 0
    depth = 0
    for i, m in enumerate(found):
        depth += m.group(1) in ("if", "ifdef", "ifndef")
        depth -= m.group(1) == "endif"
        if depth == 0:
            return 1 if i == len(found) - 1 else 0
    return 0


def _by_value(test: str) -> bool:
    """`#if M` / `#elif M`: a test of the macro's value, not of its definition."""
    kind, _, rest = test.partition(" ")
    m = _SIMPLE.match(rest)
    return kind in ("if", "elif") and m is not None and m.group(3) is not None


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


def _chains(text: str) -> Iterable[Chain]:
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
