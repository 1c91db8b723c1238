"""launch-grid-limit: grids sized from the data, which HIP refuses past 2^32 threads.

HIP dispatches a launch as one HSA AQL packet whose grid size (in work-items, i.e. threads) is a
32-bit field, and the runtime rejects a launch whose grid x block product exceeds 2^32 - 1
(ROCm/hip#2253; the HIP launch API reference; rocminfo reports "Grid Max Size: 4294967295").
CUDA allows up to (2^31 - 1) x 65535 x 65535 blocks of 1024 threads. A grid computed by
ceil-dividing a runtime size (`div_round_up(n, 256)`, `(n + 255) / 256`) grows with the input,
so a large enough tensor launches fine on CUDA and fails on ROCm; the fix is to cap the grid
(`std::min(blocks, cap)`) and make the kernel loop grid-stride. The rule follows the grid
argument of a launch (`<<<grid, ...>>>`, `*LAUNCH_KERNEL(kernel, grid, ...)`,
`hipLaunchKernelGGL`, `cudaLaunchKernel`) through local variables (`dim3 grid(gx)`,
`auto gx = div_round_up(...)`) of the same function, and reports the ceil-divisions that are not
already inside a `min`.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cuda2rocm.frontends.cpp import CppRule, ancestors, hip_excluded, nodes_of_types

_CEIL_DIV = re.compile(
    r"^(div_?round_?up|div_?up|ceil_?div|cdiv|ceildiv|div_?ceil|round_?up_?div|DIVUP|DIV_UP"
    r"|\w*calc_x?block_count|GET_BLOCKS|get_?blocks|num_?blocks)$",
    re.I,
)
_LAUNCH = re.compile(
    r"(launch_?kernel|^hipLaunchKernelGGL$|^cudaLaunchKernel$|^cudaLaunchCooperativeKernel$)",
    re.I,
)
_MIN = re.compile(r"^(std::)?(min|fminf?|MIN)$")
_MAX_DEPTH = 3


def _last(name: str) -> str:
    return re.split(r"::|\.|->", name.split("<", 1)[0].strip())[-1].strip()


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        self.seen: set[int] = set()
        for function in view.functions:
            body = function.child_by_field_name("body")
            if body is None or view.in_device_code(body):
                continue
            for grid in self._grids(function):
                self._follow(grid, body, 0)

    def _grids(self, function: Node):
        view = self.view
        for node in nodes_of_types(function, ("kernel_call_syntax", "call_expression")):
            if node.type == "kernel_call_syntax":
                args = [c for c in node.named_children if c.type != "comment"]
                if args:
                    yield args[0]
            elif node.type == "call_expression":
                func = node.child_by_field_name("function")
                args_node = node.child_by_field_name("arguments")
                if func is not None and args_node is not None:
                    name = _last(view.text(func))
                    args = [c for c in args_node.named_children if c.type != "comment"]
                    if _LAUNCH.search(name) and len(args) >= 3:
                        yield args[1]

    def _follow(self, expr: Node, body: Node, depth: int) -> None:
        view = self.view
        stack = [expr]
        while stack:
            node = stack.pop()
            if node.type == "call_expression":
                func = node.child_by_field_name("function")
                name = _last(view.text(func)) if func is not None else ""
                if _CEIL_DIV.match(name):
                    self._flag(node)
                    continue
            elif node.type == "binary_expression" and _is_round_up_division(view, node):
                self._flag(node)
                continue
            elif node.type in ("identifier", "type_identifier") and depth < _MAX_DEPTH:
                for value in _local_values(view, body, view.text(node), before=node):
                    self._follow(value, body, depth + 1)
            stack.extend(node.children)

    def _flag(self, node: Node) -> None:
        view = self.view
        if node.start_byte in self.seen or hip_excluded(view, node):
            return
        parent = None
        for parent in ancestors(node):
            if parent.type == "call_expression":
                func = parent.child_by_field_name("function")
                if func is not None and _MIN.match(view.text(func).split("<", 1)[0].strip()):
                    return  # already capped
            if parent.type in ("declaration", "expression_statement", "kernel_call_syntax"):
                break
        self.seen.add(node.start_byte)
        where = view.span(node)
        if parent is not None and parent.type == "declaration":
            # `const dim3 blocks(` / `  div_round_up(n, k));`: from the grid's declaration on
            where = (view.span(parent)[0], where[1])
        self.report(
            where,
            f"grid size `{view.text(node)}` grows with the input: HIP refuses a launch of more "
            "than 2^32 threads in all (grid x block; CUDA allows far more), so a large input "
            "fails on ROCm only; cap the grid (std::min with a maximum block count) and loop "
            "grid-stride in the kernel",
        )


def _is_round_up_division(view, node: Node) -> bool:
    """`(n + b - 1) / b`, `(n + 255) / 256`."""
    op = node.child_by_field_name("operator")
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op is None or view.text(op) != "/" or left is None or right is None:
        return False
    while left.type in ("parenthesized_expression", "cast_expression") and left.named_children:
        left = left.named_children[-1]
    if left.type != "binary_expression":
        return False
    text = view.text(left).replace(" ", "")
    if "+" not in text:
        return False
    if text.endswith("-1") or "-1)" in text:
        return True
    addend = left.child_by_field_name("right")
    try:
        return int(view.text(addend), 0) + 1 == int(view.text(right), 0)
    except (TypeError, ValueError):
        return False


def _local_values(view, body: Node, name: str, before: Node):
    """Initialisers of local variables called `name` declared before `before` in `body`."""
    stack = [body]
    while stack:
        node = stack.pop()
        if node.start_byte >= before.start_byte:
            continue
        if node.type == "init_declarator":
            target = node.child_by_field_name("declarator")
            value = node.child_by_field_name("value")
            if target is not None and value is not None and view.text(target) == name:
                yield value
                continue
        elif node.type == "function_declarator":  # `dim3 grid(gx, gy);` (vexing parse)
            target = node.child_by_field_name("declarator")
            params = node.child_by_field_name("parameters")
            if target is not None and params is not None and view.text(target) == name:
                yield params
                continue
        stack.extend(node.children)
