"""Files only a ROCm build compiles: the project's HIP side of a vendor switch.

A ported project keeps its HIP shim apart from its CUDA code and selects it with a switch:

    #if MYPROJ_USE_HIP                          // the HIP arm
    #include "hip/myproj_hip_runtime.h"         // <hip/hip_runtime.h>, then cudaX in HIP terms
    #include "hip/myproj_hip_helpers.h"         // uses what the header above defines
    #else
    #include "cuda/myproj_cuda_runtime.h"
    #endif

nvcc never compiles such a file: a CUDA build has no HIP headers, and the switch keeps it out.
So a definition there is the project's HIP port whatever it spells (`cudaError_t
cudaGetLastError();`, `struct CUmod_st;` then `typedef CUmod_st* CUmodule;`): hipcc is the only
compiler that reads it (`project_port.counts`). A file is HIP-only when

- it is HIP by what it holds outside every conditional (but its include guard) and holds no
  CUDA: an include of a HIP or ROCm header, a `#define cudaX hipX` map, or an include of another
  such file (`vendor_switches.hip_sides`); or
- it is a header, and every include site of it that a HIP pass may compile sits in an `#if`
  arm that spells HIP and no CUDA (by its own text and the project headers it includes), or in
  another HIP-only file (a fixpoint). A header with no such site, or one a Cython `cdef extern
  from` block names (no preprocessor picks a side there), is not.

Uses of CUDA names the project does not define stay reported in these files: nothing maps them.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence

from cuda2rocm.context import include_context, vendor_switches

HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc")


def files(
    texts: Mapping[str, str],
    find: Callable[[str, str], str | None],
    lines_of: Callable[[str, str], Iterable[tuple[str, int]]],
    line_value: Callable[[str, int], object],
    extra: Mapping[str, Sequence[tuple[str, int]]] | None = None,
) -> frozenset[str]:
    """Paths of the run's HIP-only files. `find(include, includer)`: the project file an
    `#include` names; `lines_of(path, text)`: its `include_lines`; `line_value(path, line)`:
    the line model's value there (an include no HIP pass compiles is no site); `extra`: Cython
    include edges (target, line), never on a HIP side."""
    hip, arms = vendor_switches.hip_sides(texts, find)
    sites: dict[str, list[tuple[str, bool]]] = {}  # header -> (includer, in a HIP arm)
    for path, text in texts.items():
        if "include" not in text:
            continue
        spans = arms.get(path, ())
        starts = [s for s, _ in spans]
        for name, line in lines_of(path, text):
            target = find(name, path)
            if target is None or target == path or line_value(path, line) is False:
                continue
            sites.setdefault(target, []).append((path, _inside(spans, starts, line)))
    for path, out in (extra or {}).items():
        for target, _ in out:
            sites.setdefault(target, []).append((path, False))
    return frozenset(include_context.every_includer(sites, hip, HEADER_SUFFIXES))


def _inside(spans: Sequence[tuple[int, int]], starts: Sequence[int], line: int) -> bool:
    """Whether `line` lies in one of `spans` (sorted (first, last) line ranges, nested ones
    included)."""
    i = bisect.bisect_right(starts, line)
    return any(first <= line <= last for first, last in spans[:i])
