"""Headers compiled only after the HIP runtime header: their includers bring it in first.

nvcc includes cuda_runtime.h in every CUDA file; hipcc includes nothing, so a file that uses
`__forceinline__` or `threadIdx` with no runtime include of its own fails when compiled alone.
A header is never compiled alone, though: if every file of the run that includes it has already
included something that brings in `hip/hip_runtime.h` (the runtime itself; any torch header,
since torch's `torch/headeronly/macros/Macros.h` includes it under `__HIPCC__`; a CUDA runtime or
fp16 header, which the hipify step maps to its HIP counterpart, or which is reported on its own
line where nothing maps it), the header sees the runtime. Followed through headers that provide
it and through includers that are themselves such headers (a fixpoint). A header no file of the
run includes is unknown, so it keeps its finding. A file whose own project includes lead to the
runtime (a platform header that includes `hip/hip_runtime.h` under `__HIP_PLATFORM_AMD__`)
sees it too (`runtime_included`), unless every HIP pass skips the include that would bring it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from cuda2rocm.context import include_context

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
_PROVIDES = re.compile(
    r"^(hip/hip_runtime\.h|hip_runtime\.h|hip/hip_runtime_api\.h|torch/|ATen/|c10/"
    r"|cuda_runtime\.h|cuda_runtime_api\.h|cuda\.h|cuda_fp16\.h|cuda_bf16\.h|hip/hip_fp16\.h)"
)
_HEADER_SUFFIXES = (".h", ".hpp", ".hxx", ".cuh", ".inl", ".hh")


def included_names(text: str) -> tuple[str, ...]:
    """The names of a file's `#include`s, in order."""
    return tuple(m.group(2).strip() for m in _INCLUDE.finditer(text))


def include_lines(text: str) -> tuple[tuple[str, int], ...]:
    """(name, line) of a file's `#include`s, in order."""
    return tuple(
        (m.group(2).strip(), text.count("\n", 0, m.start()) + 1) for m in _INCLUDE.finditer(text)
    )


def _includes(
    texts: Mapping[str, str],
    find: Callable[[str, str], str | None],
    names_of: Callable[[str, str], Iterable[str]] | None,
) -> dict[str, list[tuple[str, str | None]]]:
    """Per file, its `#include`s in order as (name, the project file it names or None)."""
    includes: dict[str, list[tuple[str, str | None]]] = {}
    for path, text in texts.items():
        names = names_of(path, text) if names_of else included_names(text)
        includes[path] = [(name, find(name, path)) for name in names]
    return includes


def _providers(includes: Mapping[str, list[tuple[str, str | None]]]) -> set[str]:
    """Files that bring the runtime in, directly or through project headers (a fixpoint)."""
    provides = {p for p, incs in includes.items() if any(_PROVIDES.match(n) for n, _ in incs)}
    changed = True
    while changed:
        changed = False
        for path, incs in includes.items():
            if path not in provides and any(t in provides for _, t in incs if t):
                provides.add(path)
                changed = True
    return provides


def runtime_included(
    texts: Mapping[str, str],
    find: Callable[[str, str], str | None],
    lines_of: Callable[[str, str], Iterable[tuple[str, int]]],
    line_value: Callable[[str, int], object],
) -> frozenset[str]:
    """Paths of files whose own `#include`s bring the runtime in through project headers
    (`"core.hpp"` -> `"device.hpp"` -> `<hip/hip_runtime.h>` under `__HIP_PLATFORM_AMD__`):
    hipcc follows the chain, so the file compiles as it is. `lines_of(path, text)`: its
    `include_lines`; `line_value(path, line)`: the line model's value there. An `#include`
    on a line every HIP pass skips (`#ifndef __HIP_PLATFORM_AMD__` / `<cuda_runtime.h>`) is no
    edge: on ROCm it brings nothing. Files naming the runtime themselves are the rule's own
    test."""
    includes: dict[str, list[tuple[str, str | None]]] = {}
    for path, text in texts.items():
        includes[path] = [
            (name, find(name, path))
            for name, line in lines_of(path, text)
            if line_value(path, line) is not False
        ]
    provides = _providers(includes)
    return frozenset(
        p for p, incs in includes.items() if any(t in provides for _, t in incs if t and t != p)
    )


def runtime_first(
    texts: Mapping[str, str],
    find: Callable[[str, str], str | None],
    names_of: Callable[[str, str], Iterable[str]] | None = None,
) -> frozenset[str]:
    """Paths of headers every include site of which comes after the runtime header.
    `find(include, includer)`: the project file an `#include` names, or None.
    `names_of(path, text)`: `included_names(text)` (kept per file by the caller)."""
    includes = _includes(texts, find, names_of)
    provides = _providers(includes)
    # Include sites of each project header: (includer, whether the runtime came before it).
    sites: dict[str, list[tuple[str, bool]]] = {}
    for path, incs in includes.items():
        seen = False
        for name, target in incs:
            if target is not None:
                sites.setdefault(target, []).append((path, seen))
            seen = seen or bool(_PROVIDES.match(name)) or (target in provides)
    return frozenset(include_context.every_includer(sites, (), _HEADER_SUFFIXES))
