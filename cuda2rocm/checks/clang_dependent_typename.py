"""clang-dependent-typename: `T::Member(args)` used as a functional cast to a dependent type.

Inside a template, `Traits::BlockLoad(tmp).Load(...)` names a member *type* of the template
parameter without `typename`. nvcc accepts it; clang (and so hipcc) rejects it when the template
is instantiated: "missing 'typename' prior to dependent type name 'MyTraits::BlockLoad'".

Whether `Member` is a type cannot be known from the template alone, so the rule fires only when
the file itself says so: the name is written elsewhere as `typename X::Member` (or
`typename X::Member::Inner`), or declared as a member type of a class in the file
(`using Member = ...`, `typedef ... Member;`, a nested `struct Member`), and never as a
function. The qualifier must be a type parameter of an enclosing template. The safe fix inserts
`typename`, which every compiler accepts and which changes nothing else.
"""

from __future__ import annotations

import re

from cuda2rocm.frontends.cpp import CppRule, ancestors

_TYPENAME_BEFORE = re.compile(rb"\btypename\s*$")
_TYPE_DECLS = frozenset(
    {"alias_declaration", "type_definition", "struct_specifier", "class_specifier"}
)


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        types: set[str] | None = None
        for call in view.calls:
            fn = call.child_by_field_name("function")
            if fn is None or fn.type != "qualified_identifier":
                continue
            scope, name = fn.child_by_field_name("scope"), fn.child_by_field_name("name")
            if scope is None or name is None or scope.type != "namespace_identifier":
                continue
            if name.type != "identifier":
                continue  # `T::template X<...>(...)`, nested qualifiers: not this rule
            if view.text(scope) not in _type_parameters(view, call):
                continue
            before = view.data[max(0, fn.start_byte - 40) : fn.start_byte]
            if _TYPENAME_BEFORE.search(before):
                continue
            if types is None:
                types = _member_types(view)
            member = view.text(name)
            if member not in types:
                continue
            qualified = view.text(fn)
            self.report(
                fn,
                f"`{qualified}(...)` constructs a dependent type without `typename`: nvcc "
                f"accepts it, clang/hipcc rejects it with \"missing 'typename' prior to "
                f'dependent type name"; write `typename {qualified}(...)`',
                self.fix(self.insert_before(fn, "typename "), description="insert `typename`"),
            )


def _type_parameters(view, node) -> set[str]:
    """Names of the type parameters of every template that encloses `node`."""
    names: set[str] = set()
    for parent in ancestors(node):
        if parent.type != "template_declaration":
            continue
        params = parent.child_by_field_name("parameters")
        for param in params.named_children if params is not None else ():
            if param.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
                for child in param.named_children:
                    if child.type == "type_identifier":
                        names.add(view.text(child))
                        break
    return names


def _member_types(view) -> set[str]:
    """Names the file shows to be types (and never functions)."""
    types: set[str] = set()
    functions: set[str] = set()
    stack = [view.tree.root_node]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in ("comment", "string_literal", "raw_string_literal", "char_literal"):
            continue
        if kind == "dependent_type":
            # `typename T::A::B`: B is a type, and so is A (a dependent scope is a class).
            idents = _names(node)
            types.update(view.text(n) for n in idents[1:])
        elif kind in _TYPE_DECLS and _in_class(node):
            if kind == "type_definition":
                for decl in node.children_by_field_name("declarator"):
                    if decl.type == "type_identifier":
                        types.add(view.text(decl))
            else:
                name = node.child_by_field_name("name")
                if name is not None and name.type == "type_identifier":
                    types.add(view.text(name))
        elif kind == "function_declarator":
            decl = node.child_by_field_name("declarator")
            if decl is not None:
                functions.add(view.text(decl).rsplit("::", 1)[-1])
        stack.extend(node.children)
    return types - functions


def _in_class(node) -> bool:
    """Declared inside a class body: a member type, as `Traits::Member` would name."""
    parent = node.parent
    while parent is not None and parent.type not in ("field_declaration", "field_declaration_list"):
        if parent.type in ("function_definition", "translation_unit", "namespace_definition"):
            return False
        parent = parent.parent
    return parent is not None


def _names(node) -> list:
    """Identifiers of a qualified name, in source order: its own scopes and name, not what
    its template arguments name (`typename S<N::rank>::type` says `type` is a type, and
    nothing about `rank`, which is a value there)."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type == "template_argument_list":
            continue
        if current.type in ("type_identifier", "namespace_identifier", "identifier"):
            found.append(current)
        stack.extend(current.children)
    return sorted(found, key=lambda n: n.start_byte)
