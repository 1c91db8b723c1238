"""Sites: the uses of a name grouped by the source line that must change.

A port edits every use of a name ROCm's build does not translate, so a rule reports each line
that holds one (one finding per line, naming what is on it), not the first use per file: the
finding marks the edit. Uses on lines no HIP pass compiles are dropped when any use is live
(`live_first`'s rule); when none is, the first stays, so the engine marks it guarded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import tree_sitter

from cuda2rocm.frontends.cpp import CppView, hip_excluded

T = TypeVar("T")


def _start(item: object) -> int:
    return item.start_byte if isinstance(item, tree_sitter.Node) else item[0]  # type: ignore[index,attr-defined]


def by_line(
    view: CppView, items: Iterable[T], key: Callable[[T], object] | None = None
) -> list[list[T]]:
    """`items` (nodes, or `(start, end, ...)` tuples of character offsets) grouped by the line
    they start on, in file order. `key` picks the node or span of an item when it is neither."""
    pick = key or (lambda i: i)
    ordered = sorted(items, key=lambda i: _start(pick(i)))
    live = [i for i in ordered if not hip_excluded(view, pick(i))]
    if not live:
        live = ordered[:1]
    groups: dict[int, list[T]] = {}
    for item in live:
        groups.setdefault(_line(view, pick(item)), []).append(item)
    return list(groups.values())


def _line(view: CppView, item: object) -> int:
    if isinstance(item, tree_sitter.Node):
        return item.start_point[0] + 1
    return view.source.lines.position(item[0], item[0]).line  # type: ignore[index]


def names_on(names: Iterable[str]) -> str:
    """`a`, `b` and `c`: the distinct names of one line, in order."""
    seen = list(dict.fromkeys(names))
    quoted = [f"`{n}`" for n in seen]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
