"""A read-only batched traversal of a LibCST tree, in LibCST's own order, without rebuilding it.

LibCST's `visit_batched` goes through each node's `_visit_and_replace_children`, which builds
a new node (dataclass construction and validation) for every node it visits, even when the
visitors only read; on a large file that is most of the traversal's cost. The rules here only
read, so this walk reads each node's child fields in the order `_visit_and_replace_children`
visits them (taken from LibCST's source once per node type: its `visit_*(self, "field", ...)`
calls) and calls the same `visit_<Type>` / `leave_<Type>` methods, with the same
`before_visit` / `after_leave` hooks, on the same node objects. Attribute visitors
(`visit_<Type>_<field>`) are not supported: no rule has one, and `walk` refuses them.
tests/test_python_walk.py checks the order against LibCST's `children` on every node of
every rule example.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable

import libcst as cst

_FIELD = re.compile(r"""visit_\w+\(\s*self,\s*["'](\w+)["']""")
#: node type -> the fields holding child nodes, in the order LibCST visits them.
_ORDER: dict[type, tuple[str, ...]] = {}


def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of `kind` that `_visit_and_replace_children` visits, in its order (none for
    a leaf, whose method returns the node itself)."""
    order = _ORDER.get(kind)
    if order is None:
        source = inspect.getsource(kind._visit_and_replace_children)
        order = _ORDER[kind] = tuple(dict.fromkeys(_FIELD.findall(source)))
    return order


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The node's children in visit order (LibCST's `children`, without rebuilding)."""
    found: list[cst.CSTNode] = []
    for field in child_fields(type(node)):
        value = getattr(node, field)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(c for c in value if isinstance(c, cst.CSTNode))
    return found


def walk(
    module: cst.Module,
    visitors: Iterable[cst.BatchableCSTVisitor],
    before_visit: Callable[[cst.CSTNode], object] | None = None,
    after_leave: Callable[[cst.CSTNode], object] | None = None,
) -> None:
    """Every visitor's `visit_<Type>` before a node's children and `leave_<Type>` after, as
    `libcst.visit_batched` calls them."""
    methods: dict[str, list[Callable]] = {}
    for visitor in visitors:
        for name, method in visitor.get_visitors().items():
            if name.count("_") > 1 and name.split("_", 2)[2][:1].islower():
                raise ValueError(f"attribute visitor {name} is not supported")
            methods.setdefault(name, []).append(method)
    plan: dict[type, tuple[tuple, tuple, tuple[str, ...]]] = {}
    nothing: tuple = ()

    def visit(node: cst.CSTNode) -> None:
        kind = type(node)
        step = plan.get(kind)
        if step is None:
            name = kind.__name__
            step = plan[kind] = (
                tuple(methods.get(f"visit_{name}", nothing)),
                tuple(methods.get(f"leave_{name}", nothing)),
                child_fields(kind),
            )
        enter, leave, fields = step
        if before_visit is not None:
            before_visit(node)
        for method in enter:
            method(node)
        for field in fields:
            value = getattr(node, field)
            if isinstance(value, cst.CSTNode):
                visit(value)
            elif isinstance(value, (tuple, list)):
                for child in value:
                    if isinstance(child, cst.CSTNode):
                        visit(child)
        for method in leave:
            method(node)
        if after_leave is not None:
            after_leave(node)

    visit(module)
