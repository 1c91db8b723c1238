"""Files that need an NVIDIA-only C++ template library: one porting decision, not one per line.

CUTLASS and CuTe are header-only template libraries written for NVIDIA GPUs: their headers
use PTX `mma`/`ldmatrix`/`cp.async` and NVIDIA's architecture tags (CUTLASS's `include/cutlass/
arch/`), no ROCm release ships them, and HIPIFY has no mapping for them (HIPIFY's tables in
`reference/`). A file that includes one, directly or through the project's own headers, does
not compile under hipcc whatever its other lines say. Porting it is one decision: keep it out
of the ROCm build, or replace the component (composable_kernel, hipBLASLt, a Triton kernel).
Its other findings (a runtime name to map, a warp literal) are not actions while that decision
stands, and reporting each of them hid the decision behind hundreds of lines.

So, over the include graph (edges only where some HIP pass may compile the `#include`):
- a *direct user* includes a library header on a line some HIP pass may compile;
- a *user* is a direct user or a file that includes a user;
- a direct user that no other direct user includes (directly or not) is where the decision is
  reported: its first library include keeps its finding. Every other finding of every user is
  guarded, naming that include. A kernel file that reaches the library only through project
  headers follows the header's decision.
An include every HIP pass skips (`#ifndef USE_ROCM`) is no edge: that file already keeps the
library out of its ROCm build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

#: Include prefixes of NVIDIA-only template libraries, with the name a message gives them.
LIBRARIES = {"cutlass/": "CUTLASS", "cute/": "CuTe"}


def library_of(include: str) -> str | None:
    """The library an `#include` name belongs to, or None."""
    return next((name for prefix, name in LIBRARIES.items() if include.startswith(prefix)), None)


def users(
    texts: Mapping[str, str],
    find: Callable[[str, str], str | None],
    lines_of: Callable[[str, str], Iterable[tuple[str, int]]],
    line_value: Callable[[str, int], object],
) -> tuple[dict[str, str], dict[str, int]]:
    """(path of each user -> why its findings are guarded, path of each reporting direct
    user -> the line of the library include that stays reported).

    `lines_of(path, text)`: its `include_lines`; `line_value(path, line)`: the line model's
    value there (False: every HIP pass skips it)."""
    direct: dict[str, tuple[str, int, str]] = {}
    edges: dict[str, set[str]] = {}
    for path, text in texts.items():
        for name, line in lines_of(path, text):
            if line_value(path, line) is False:
                continue
            lib = library_of(name)
            if lib is not None:
                direct.setdefault(path, (name, line, lib))
                continue
            target = find(name, path)
            if target is not None and target != path:
                edges.setdefault(path, set()).add(target)
    if not direct:
        return {}, {}
    below = {d: _reach(d, edges) for d in direct}  # what each direct user includes
    covered = {t for d, reach in below.items() for t in reach if t in direct and t != d}
    tops = sorted(d for d in direct if d not in covered)
    kept = {d: direct[d][1] for d in tops}
    why: dict[str, str] = {}
    for top in tops:
        why[top] = _reason(direct[top], top, direct[top], top)
        for path in sorted(below[top] & direct.keys()):
            why.setdefault(path, _reason(direct[path], path, direct[top], top))
    for path in sorted(_includers_of(direct.keys(), edges) - why.keys()):
        reach = _reach(path, edges)
        via = next((t for t in tops if t in reach), None) or min(reach & direct.keys())
        why[path] = _reason(direct[via], via, direct[via], via)
    return why, kept


def _reason(need: tuple[str, int, str], where: str, top: tuple[str, int, str], at: str) -> str:
    """Why a finding follows the decision on a library: what needs it, where it is reported."""
    name, line, lib = need
    text = (
        f"in code that needs {lib} (<{name}> at {where}:{line}), which no ROCm release ships: "
        "porting it is one decision (keep it out of the ROCm build, or replace the component)"
    )
    if (where, line) == (at, top[1]):
        return text + ", reported at that include"
    return text + f", reported at <{top[0]}> in {at}:{top[1]}"


def _includers_of(targets: Iterable[str], edges: Mapping[str, set[str]]) -> set[str]:
    """Files that include one of `targets`, directly or not."""
    back: dict[str, set[str]] = {}
    for path, ts in edges.items():
        for t in ts:
            back.setdefault(t, set()).add(path)
    seen: set[str] = set()
    stack = [p for t in targets for p in back.get(t, ())]
    while stack:
        path = stack.pop()
        if path not in seen:
            seen.add(path)
            stack.extend(back.get(path, ()))
    return seen


def _reach(start: str, edges: Mapping[str, set[str]]) -> set[str]:
    """Files `start` includes, directly or not (itself left out unless in a cycle)."""
    seen: set[str] = set()
    stack = list(edges.get(start, ()))
    while stack:
        path = stack.pop()
        if path in seen:
            continue
        seen.add(path)
        stack.extend(edges.get(path, ()))
    return seen
