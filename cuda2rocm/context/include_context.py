"""What a header sees from its includers: the names defined before every include point of it.

A header is never compiled alone: it is compiled inside each translation unit that includes
it, after whatever that unit included before it. A project's HIP compatibility folder often
holds headers that use a CUDA spelling (`cudaStream_t`) the project maps in another header
(`#define cudaStream_t hipStream_t` under its HIP switch), which every includer includes
first. The header's own includes do not show it; its includers do.

The model walks each root of the include graph (a source file: `.cu`, `.cpp`, a Cython
`.pyx`, `.pxd`; or any file nothing of the run includes) in file order, as the preprocessor
does: a definition adds its name from its line on, an include enters the header in place the
first time the unit meets it (include guards make later ones empty), and on entering a header
the names defined so far are noted. A header's context is what every such note of it holds,
over every root that reaches it (the intersection). A header no root reaches gets nothing; a
source file gets nothing (it is also compiled on its own, with nothing before it). Which
definitions count and which include lines are edges is the caller's (`project_port`: a
definition that ports its name where a HIP pass compiles it; an include no HIP pass skips).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

#: (line, name, "path:line") of a definition that counts, or (line, None, target path) of an
#: include edge, in file order.
Event = tuple[int, str | None, str]


def every_includer(
    sites: Mapping[str, Sequence[tuple[str, bool]]],
    seed: Iterable[str],
    suffixes: tuple[str, ...],
) -> set[str]:
    """`seed` and every header (by `suffixes`) each include site of which holds (its flag) or
    sits in a file already found, to a fixpoint. `sites`: header -> (includer, flag) per include
    site. A header is compiled only inside its includers, so what holds at every include point
    of it holds for it."""
    found = set(seed)
    changed = True
    while changed:
        changed = False
        for header, where in sites.items():
            if header in found or not header.endswith(suffixes) or not where:
                continue
            if all(flag or includer in found for includer, flag in where):
                found.add(header)
                changed = True
    return found


def events(
    definitions: Iterable[tuple[str, int, str]], edges: Iterable[tuple[str, int]]
) -> tuple[Event, ...]:
    """One file's definitions ((name, line, site)) and include edges ((target, line)) merged
    in file order (a definition on an include's line is taken before it)."""
    merged = [(line, name, site) for name, line, site in definitions]
    merged += [(line, None, target) for target, line in edges]
    merged.sort(key=lambda e: (e[0], e[1] is None))
    return tuple(merged)


def names_before(
    files: Mapping[str, Sequence[Event]],
    is_header: Callable[[str], bool],
) -> dict[str, dict[str, str]]:
    """Header path -> {name: "path:line"} of the names every root that reaches the header has
    defined before it enters it. `files`: path -> its `events` (every file of the run with an
    include or a definition that counts)."""
    included = {target for evs in files.values() for _, name, target in evs if name is None}
    roots = sorted(p for p in files if p not in included or not is_header(p))
    context: dict[str, dict[str, str]] = {}
    for root in roots:
        _walk(root, files, is_header, context)
    return {path: names for path, names in context.items() if names}


def _walk(
    root: str,
    files: Mapping[str, Sequence[Event]],
    is_header: Callable[[str], bool],
    context: dict[str, dict[str, str]],
) -> None:
    """One unit from `root`: note, at each header's first include, what was defined so far."""
    seen = {root}
    defined: dict[str, str] = {}
    stack = [iter(files.get(root, ()))]
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
            continue
        _, name, target = step
        if name is not None:
            defined.setdefault(name, target)
            continue
        if target in seen:
            continue
        seen.add(target)
        if is_header(target):
            kept = context.get(target)
            if kept is None:
                context[target] = dict(defined)
            elif kept:
                context[target] = {n: s for n, s in kept.items() if n in defined}
        stack.append(iter(files.get(target, ())))
