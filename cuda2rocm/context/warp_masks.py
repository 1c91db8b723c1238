"""Lane masks a project has already ported: macros that drop the mask on ROCm, 64-bit mask types.

A port often keeps CUDA's mask arguments and makes them harmless on ROCm in one place:
`#define SHFL_DOWN_SYNC(mask, var, delta) __shfl_down(var, delta)` under `#ifdef USE_ROCM`
(the mask never reaches a HIP builtin), or `using warp_mask_t = unsigned long long;` under
`#ifdef USE_ROCM` (a 64-bit mask, as HIP's `*_sync` builtins require). A 32-bit mask constant
passed only to such a macro, or a mask of such a type, is not a 32-bit mask on ROCm.

Read once per run over every C/C++ file (ProjectMacros), only from definitions some HIP pass may
compile: a definition that only the CUDA build compiles (the `#else` of a HIP test) does not
count, and a name with any ROCm-reachable definition that keeps the mask stays unknown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

#: `#define NAME(first, ...) body` (one logical line; continuation lines joined by the caller).
_FUNCTION_MACRO = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+(?P<name>\w+)\((?P<params>[^)]*)\)(?P<body>(?:\\\n|[^\n])*)",
    re.M,
)
#: `using NAME = T;` / `typedef T NAME;`
_ALIAS = re.compile(
    r"\busing[ \t]+(?P<uname>\w+)[ \t]*=[ \t]*(?P<utype>[^;]+);"
    r"|\btypedef[ \t]+(?P<ttype>[^;]+?)[ \t]+(?P<tname>\w+)[ \t]*;"
)
_WIDE = re.compile(r"^(unsigned\s+long\s+long(\s+int)?|uint64_t|std::uint64_t|__uint64_t)$")
_HINT = re.compile(r"mask", re.I)


Definitions = Callable[[str, str], Iterable[tuple[str, int, bool]]]


def mask_macro_definitions(text: str) -> tuple[tuple[str, int, bool], ...]:
    """(name, line, drops its first parameter) of each function-like macro with one."""
    if "define" not in text:
        return ()
    out = []
    for m in _FUNCTION_MACRO.finditer(text):
        params = [p.strip() for p in m.group("params").split(",")]
        if not params or not params[0] or params[0] == "...":
            continue
        line = text.count("\n", 0, m.start()) + 1
        body = m.group("body").replace("\\\n", " ")
        drops = re.search(rf"\b{re.escape(params[0])}\b", body) is None
        out.append((m.group("name"), line, drops))
    return tuple(out)


def mask_free_macros(
    texts: dict[str, str],
    reachable: Callable[[str, int], bool],
    definitions: Definitions | None = None,
) -> dict[str, str]:
    """Function-like macros whose every definition a HIP pass may compile ignores its first
    parameter (the mask): name -> the first such site. `reachable(path, line)`: whether some
    HIP pass may compile that line. `definitions(path, text)`: `mask_macro_definitions(text)`
    (kept per file by the caller)."""
    sites: dict[str, list[tuple[bool, str]]] = {}
    for path, text in texts.items():
        found = definitions(path, text) if definitions else mask_macro_definitions(text)
        for name, line, drops in found:
            if not reachable(path, line):
                continue
            sites.setdefault(name, []).append((drops, f"{path}:{line}"))
    return {n: s[0][1] for n, s in sites.items() if s and all(d for d, _ in s)}


def mask_type_definitions(text: str) -> tuple[tuple[str, int, bool], ...]:
    """(name, line, a 64-bit unsigned type) of each type alias named like a mask."""
    if "mask" not in text.lower():
        return ()
    out = []
    for m in _ALIAS.finditer(text):
        name = m.group("uname") or m.group("tname")
        if not _HINT.search(name):
            continue
        line = text.count("\n", 0, m.start()) + 1
        target = " ".join((m.group("utype") or m.group("ttype")).split())
        out.append((name, line, bool(_WIDE.match(target))))
    return tuple(out)


def wide_mask_types(
    texts: dict[str, str],
    reachable: Callable[[str, int], bool],
    definitions: Definitions | None = None,
) -> dict[str, str]:
    """Type aliases named like a mask (`warp_mask_t`) whose every definition a HIP pass may
    compile is a 64-bit unsigned type: name -> the first such site. `definitions(path,
    text)`: `mask_type_definitions(text)` (kept per file by the caller)."""
    sites: dict[str, list[tuple[bool, str]]] = {}
    for path, text in texts.items():
        found = definitions(path, text) if definitions else mask_type_definitions(text)
        for name, line, wide in found:
            if not reachable(path, line):
                continue
            sites.setdefault(name, []).append((wide, f"{path}:{line}"))
    return {n: s[0][1] for n, s in sites.items() if s and all(w for w, _ in s)}
