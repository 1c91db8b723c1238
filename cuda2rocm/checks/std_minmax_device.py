"""std-minmax-device: `std::min`/`std::max` forms that hipcc rejects.

hipcc 5.2 compiles at `-std=c++11` unless told otherwise (`hipcc -v` shows the flag it adds),
and in C++11 the standard library's `std::min`/`std::max` are not `constexpr`. clang's CUDA/HIP
wrapper header (`cuda_wrappers/algorithm`) adds `__host__ __device__` overloads for the two- and
three-argument forms only, so:

- the initializer-list forms `std::min({a, b, c})` in device code fail: "no matching function
  for call to 'min'" (the overload is a host function). Fix: nested two-argument calls.
- any `std::min`/`std::max` in a constant expression (a `constexpr` variable or function,
  `static_assert`) fails: "constexpr variable 'k' must be initialized by a constant expression".
  Fix: the equivalent conditional expression, offered only when both arguments are plain names
  or literals (they are then evaluated twice without side effects).

nvcc (C++17 by default) accepts both with `--expt-relaxed-constexpr`, which torch's extension
build passes; so does hipcc with `-std=c++14` or later.
"""

from __future__ import annotations

from cuda2rocm.frontends.cpp import CppRule, ancestors

_NAMES = ("min", "max")
_SIMPLE = frozenset(
    {"identifier", "number_literal", "qualified_identifier", "true", "false", "char_literal"}
)


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        if view.torch_built:
            return  # torch's build passes -std=c++17 to hipcc: every form compiles
        for call in view.calls:
            fn = call.child_by_field_name("function")
            if fn is None or fn.type != "qualified_identifier":
                continue
            scope, name = fn.child_by_field_name("scope"), fn.child_by_field_name("name")
            if scope is None or name is None or view.text(scope) != "std":
                continue
            op = view.text(name)
            if op not in _NAMES:
                continue
            args_node = call.child_by_field_name("arguments")
            args = list(args_node.named_children) if args_node is not None else []
            if any(a.type == "comment" for a in args):
                continue
            if args and args[0].type == "initializer_list" and view.in_device_code(call):
                self._initializer_list(call, op, args)
            elif _constexpr_context(view, call):
                self._constant(call, op, args)

    def _initializer_list(self, call, op, args) -> None:
        view = self.view
        items = [view.text(n) for n in args[0].named_children if n.type != "comment"]
        fix = None
        if len(args) == 1 and len(items) >= 2 and not _binds_reference(call):
            nested = f"std::{op}({items[0]}, {items[1]})"
            for item in items[2:]:
                nested = f"std::{op}({nested}, {item})"
            fix = self.fix(self.replace(call, nested), description="nested two-argument calls")
        self.report(
            call,
            f"`std::{op}({{...}})` in device code: hipcc (C++11, hipcc 5.2's default) has no "
            f'device overload for the initializer-list form and fails with "no matching '
            f"function for call to '{op}'\"; use nested two-argument `std::{op}` calls",
            fix,
        )

    def _constant(self, call, op, args) -> None:
        view = self.view
        fix = None
        if len(args) == 2 and all(a.type in _SIMPLE for a in args):
            a, b = (view.text(n) for n in args)
            # std::max(a, b) is `a < b ? b : a`; std::min(a, b) is `b < a ? b : a`.
            expr = f"({a} < {b} ? {b} : {a})" if op == "max" else f"({b} < {a} ? {b} : {a})"
            fix = self.fix(self.replace(call, expr), description="conditional expression")
        self.report(
            call,
            f"`std::{op}` in a constant expression: it is not constexpr in C++11, hipcc 5.2's "
            f'default, so hipcc fails ("must be initialized by a constant expression" / '
            f'"constexpr function never produces a constant expression"); use a conditional '
            f"expression or build with -std=c++17",
            fix,
        )


def _constexpr_context(view, node) -> bool:
    for parent in ancestors(node):
        if parent.type == "static_assert_declaration":
            return True
        if parent.type in ("declaration", "field_declaration", "function_definition"):
            if any(
                c.type == "type_qualifier" and view.text(c) == "constexpr" for c in parent.children
            ):
                return True
            if parent.type == "function_definition":
                return False
    return False


def _binds_reference(call) -> bool:
    """`const T& r = std::min({...})`: the nested form would return a dangling reference."""
    parent = call.parent
    if parent is None or parent.type != "init_declarator":
        return False
    declarator = parent.child_by_field_name("declarator")
    return declarator is not None and declarator.type == "reference_declarator"
