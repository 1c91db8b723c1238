"""warp-literal-mix: a device function that names the warp size and also spells it 32.

`int laneId = threadIdx.x % kWarpSize;` next to `numBlocks = divUp(numVecs, 32)` and
`vec = block * kWarpSize + laneId`: the 32 counts the same lanes as the constant (one value per
lane in blocks of a warp), so once the constant follows the 64-lane CDNA wavefront the function
disagrees with itself (blocks of 32 read as blocks of 64). Reported are literal 32s in the forms
that count or index lanes, `divUp(x, 32)` / `roundDown(x, 32)` / `roundUp(x, 32)`, `x / 32`,
`x % 32` and `x * 32`, in a device function that does lane arithmetic with the warp constant
(`% W`, `/ W`, `* W`, `W *`). A constant the file passes as an explicit shuffle width is a
logical group size and is not followed.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cuda2rocm.checks import warp_constants
from cuda2rocm.checks.warp_size_32 import _mentions_thread, number
from cuda2rocm.frontends.cpp import CppRule, hip_excluded

_ROUNDING = re.compile(r"(^|::)(div_?up|round_?down|round_?up|ceil_?div|div_?round_?up)$", re.I)
_ARITH = frozenset({"/", "%", "*"})


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        # A constant the file defines per target, from a query or as a parameter already
        # follows the wavefront: the project has been through this, and its remaining 32s
        # are other sizes (ggml's quant blocks of 32 next to its physical warp size).
        _, portable = warp_constants.definitions(view)
        logical = warp_constants.logical_widths(view) | portable
        for function in view.functions:
            body = function.child_by_field_name("body")
            if body is None or not view.in_device_code(body):
                continue
            constant = self._lane_constant(function, logical)
            if constant is None:
                continue
            for literal in _descendants(function):
                if literal.type != "number_literal" or number(view, literal) != 32:
                    continue
                form = _lane_form(view, literal)
                if form is None or hip_excluded(view, literal) or _thread_math(view, literal):
                    continue
                self.report(
                    literal,
                    f"`{form}` spells 32 where this function counts lanes with `{constant}`: "
                    f"once `{constant}` follows the wavefront (64 lanes on AMD CDNA) this 32 "
                    f"no longer matches it; write `{constant}` here too",
                )

    def _lane_constant(self, function: Node, logical: set[str]) -> str | None:
        """The warp constant the function does lane arithmetic with (`% W`, `/ W`, `* W`)."""
        view = self.view
        for node in _descendants(function):
            if node.type != "binary_expression":
                continue
            op = node.child_by_field_name("operator")
            if op is None or view.text(op) not in _ARITH:
                continue
            for side in (node.child_by_field_name("left"), node.child_by_field_name("right")):
                if side is None or side.type != "identifier":
                    continue
                name = view.text(side)
                if name not in logical and (
                    warp_constants.WARP_CONSTANT.match(name) or name == "warpSize"
                ):
                    return name
        return None


_CASTS = frozenset({"idx_t", "int", "size_t", "int64_t", "long", "unsigned"})


def _climb(node: Node) -> tuple[Node, Node | None]:
    """Up through casts and parentheses: `(idx_t)32`, `(32)`, `idx_t(32)`."""
    parent = node.parent
    while parent is not None:
        if parent.type in ("cast_expression", "parenthesized_expression"):
            node, parent = parent, parent.parent
            continue
        if parent.type == "argument_list" and len(parent.named_children) == 1:
            call = parent.parent
            func = call.child_by_field_name("function") if call is not None else None
            if (
                func is not None
                and func.type in ("identifier", "primitive_type")
                and (func.text.decode() in _CASTS)
            ):
                node, parent = call, call.parent
                continue
        break
    return node, parent


def _lane_form(view, literal: Node) -> str | None:
    """The expression around a 32 that counts or indexes lanes, or None."""
    node, parent = _climb(literal)
    if parent is None:
        return None
    if parent.type == "argument_list":
        call = parent.parent
        func = call.child_by_field_name("function") if call is not None else None
        named = [a for a in parent.named_children if a.type != "comment"]
        if func is not None and _ROUNDING.search(view.text(func)) and named[-1:] == [node]:
            return view.text(call)
        return None
    if parent.type == "binary_expression":
        op = parent.child_by_field_name("operator")
        if op is not None and view.text(op) in _ARITH:
            return view.text(parent)
    return None


def _thread_math(view, literal: Node) -> bool:
    """`tid % 32`, `threadIdx.x / 32`: lane math on a thread index, warp-size-32's finding."""
    _, parent = _climb(literal)
    if parent is None or parent.type != "binary_expression":
        return False
    left = parent.child_by_field_name("left")
    return left is not None and _mentions_thread(view, left)


def _descendants(node: Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)
