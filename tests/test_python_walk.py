"""The read-only walk visits what LibCST's `visit_batched` visits, in the same order."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.discover import language_of
from cuda2rocm.frontends import python_walk

SAMPLE = '''\
"""Module docstring."""
from __future__ import annotations

import os, sys as system
from .pkg import (a, b as c)
from x import *


@decorator(arg=1)
class Box(Base, metaclass=Meta):
    size: int = 3

    async def run(self, *args, key: str = "k", **kw) -> None:
        async with lock as held, other:
            async for item in stream:
                yield item
        try:
            value = [i ** 2 for i in range(10) if i % 2]
        except (OSError, ValueError) as err:
            raise RuntimeError("x") from err
        else:
            pass
        finally:
            del value
        while not done:
            continue
        match command:
            case [first, *rest] if first:
                print(f"{first!r:>{width}} {rest=}")
            case {"k": v, **others}:
                pass
            case Point(x=0) | None:
                pass
        lam = lambda p, /, q=1: (p, q)
        global counter
        counter += 1 if (n := len(args)) else -1
        return {**kw, "n": n}, {1, 2}, (3,), x[1:2, ::3], -value, not held, a @ b
'''


def _texts():
    yield pytest.param(SAMPLE, id="sample")
    for spec in load_catalogue():
        for example in (*spec.invalid, *spec.valid):
            if language_of(Path(example.path)) == "python":
                yield pytest.param(example.code, id=f"{spec.id}:{example.name}")


def _module(text: str) -> cst.Module | None:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError:
        return None


@pytest.mark.parametrize("text", list(_texts()))
def test_children_in_libcst_order(text):
    """Every node's children, as the walk reads them, are LibCST's `children` (same objects,
    same order)."""
    module = _module(text)
    if module is None:
        return
    pending = [module]
    while pending:
        node = pending.pop()
        expected = node.children
        got = python_walk.children(node)
        assert [id(c) for c in got] == [id(c) for c in expected], type(node).__name__
        pending.extend(expected)


class _Recorder(cst.BatchableCSTVisitor):
    def __init__(self, log: list) -> None:
        super().__init__()
        self.log = log

    def visit_Name(self, node: cst.Name) -> None:
        self.log.append(("visit", node.value))

    def leave_Name(self, node: cst.Name) -> None:
        self.log.append(("leave", node.value))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.log.append(("def", node.name.value))

    def leave_Call(self, node: cst.Call) -> None:
        self.log.append(("call", id(node)))


def test_walk_calls_what_visit_batched_calls():
    """Visitors and the before/after hooks see the same nodes in the same order."""
    module = cst.parse_module(SAMPLE)
    runs = []
    for traverse in (cst.visit_batched, python_walk.walk):
        log: list = []
        traverse(
            module,
            [_Recorder(log), _Recorder(log)],
            lambda n, log=log: log.append(("enter", id(n))),
            lambda n, log=log: log.append(("exit", id(n))),
        )
        runs.append(log)
    assert runs[0] == runs[1]
    assert len(runs[0]) > 200


def test_attribute_visitors_are_refused():
    class WithAttribute(cst.BatchableCSTVisitor):
        def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:
            pass

    with pytest.raises(ValueError, match="attribute visitor"):
        python_walk.walk(cst.parse_module("x = 1\n"), [WithAttribute()])
