"""clang-rejects: C++ that nvcc accepts and HIP-Clang rejects, whatever the language level.

Each case was compiled with nvcc 13 (`-std=c++17 -arch=sm_80 --expt-relaxed-constexpr`, as
torch's build passes it: accepted) and hipcc 5.2.3
(`-std=c++17 --offload-arch=gfx90a`: rejected); see rules/clang-rejects.toml:
- a braced list as a launch dimension, `k<<<{g, 1, 1}, {256, 1, 1}>>>()`: "expected
  expression" (clang parses `<<<` arguments as expressions). Fix (safe): `dim3{...}`, which both
  compilers accept and which is what nvcc built from the braces.
- a `constexpr` variable initialised through a reference (`const P& p` parameter or local),
  `constexpr float k = 1.f / p.kScale;`: "constexpr variable 'k' must be initialized by a
  constant expression" (clang before P2280, C++23, does not allow naming a reference of unknown
  binding in a constant expression; a by-value object is fine). Write the static member through
  the type: `std::remove_reference_t<decltype(p)>::kScale` (accepted by both).
- `.at(i)` of a `std::array` (or `std::vector`) in device code: "reference to __host__ function
  '__throw_out_of_range_fmt' in __host__ __device__ function" (libstdc++'s bounds check throws).
  Use `[i]`.
- class template argument deduction of `std::array` / `std::tuple` in device code
  (`auto a = std::array{x, y};`): "no viable constructor or deduction guide for deduction of
  template arguments of 'array'" (in a `__host__ __device__` function: "reference to __host__
  function '<deduction guide for array>'"): libstdc++'s deduction guides are host functions.
  Spell the template arguments.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cuda2rocm.frontends.cpp import (
    CppRule,
    ancestors,
    hip_excluded,
    nodes_of_type,
    nodes_of_types,
)
from cuda2rocm.model import Severity

#: Class templates whose deduction in device code hipcc 5.2 rejects (libstdc++'s deduction
#: guides are host functions); std::pair's implicit guides compile on both.
_CTAD = {"std::array": "std::array<float, 3>{...}", "std::tuple": "std::tuple<float, int>(...)"}
_STD_CONTAINER = re.compile(r"^(const\s+)?(std::)?(array|vector)\s*<")


#: Jinja statement tags (`{% if %}`): the file is a code generator's template (FBGEMM's
#: `*_template.cu`), whose `{{ expr }}` / `{% ... %}` are not C++ braced lists.
_JINJA = re.compile(r"\{%-?\s*(if|for|else|elif|endif|endfor|set|macro|endmacro|include)\b")


#: What `check` reads, and the subtrees it does not enter.
_READ = ("kernel_call_syntax", "ERROR", "declaration", "call_expression", "qualified_identifier")
_NOT_CODE = ("comment", "string_literal", "raw_string_literal")


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        self._types: dict[str, str] | None = None
        self._references: dict[int, set[str]] = {}
        for node in nodes_of_types(view.tree.root_node, _READ, _NOT_CODE):
            if node.type == "kernel_call_syntax":
                self._launch([c for c in node.named_children if c.type != "comment"][:2])
            elif node.type == "ERROR":
                self._launch(_braced_launch_arguments(view, node))
            elif node.type == "declaration" and _is_constexpr(view, node):
                self._constexpr(node)
            elif node.type == "call_expression":
                self._at(node)
            if node.type == "qualified_identifier" and view.text(node) in _CTAD:
                self._deduced(node)

    @property
    def types(self) -> dict[str, str]:
        """name -> declared type (`_declared_types`), read only for an `.at()` in device code."""
        if self._types is None:
            self._types = _declared_types(self.view)
        return self._types

    def _launch(self, args: list[Node]) -> None:
        for arg in args:
            if arg.type != "initializer_list" or hip_excluded(self.view, arg):
                continue
            text = self.view.text(arg)
            if text.startswith(("{{", "{%", "{#")) and _JINJA.search(self.view.source.text):
                continue  # a Jinja tag of a code-generator template, not a braced list
            self.report(
                arg,
                f"a braced list as a launch dimension (`{text}`): hipcc rejects it (expected "
                f"expression); write `dim3{text}`, which nvcc and hipcc both accept",
                self.fix(self.replace(arg, f"dim3{text}"), description="spell the dim3"),
            )

    def _constexpr(self, decl: Node) -> None:
        view = self.view
        function = next((a for a in ancestors(decl) if a.type == "function_definition"), None)
        if function is None:
            return
        if function.id not in self._references:  # a function with many constexpr locals
            self._references[function.id] = _references(view, function)
        references = self._references[function.id]
        if not references:
            return
        for init in decl.children_by_field_name("declarator"):
            value = init.child_by_field_name("value") if init.type == "init_declarator" else None
            if value is None:
                continue
            for access in nodes_of_type(value, "field_expression"):
                obj = access.child_by_field_name("argument")
                field_node = access.child_by_field_name("field")
                if obj is None or field_node is None or obj.type != "identifier":
                    continue
                name = view.text(obj)
                if name not in references or hip_excluded(view, access):
                    continue
                if _unevaluated(access, value) or _called(access):
                    continue  # `decltype(r.f())` is fine; a call through `r` fails on nvcc too
                member = view.text(field_node)
                self.report(
                    access,
                    f"`{view.text(access)}` in a constexpr initializer names the reference "
                    f"`{name}`: clang (hipcc) rejects it (must be initialized by a constant "
                    "expression) while nvcc accepts it; name the static member through the "
                    f"type: `std::remove_reference_t<decltype({name})>::{member}`",
                )

    def _deduced(self, node: Node) -> None:
        view = self.view
        if not _deduced_use(node) or not view.in_device_code(node) or hip_excluded(view, node):
            return
        name = view.text(node)
        self.report(
            node,
            f"`{name}` with deduced template arguments (CTAD) in device code: hipcc rejects it "
            f"(no viable constructor or deduction guide for deduction of template arguments of "
            f"'{name[5:]}'; in a __host__ __device__ function: reference to __host__ function "
            f"'<deduction guide for {name[5:]}>') while nvcc accepts it; spell the arguments, "
            f"e.g. `{_CTAD[name]}`",
        )

    def _at(self, call: Node) -> None:
        view = self.view
        func = call.child_by_field_name("function")
        if func is None or func.type != "field_expression":
            return
        field_node = func.child_by_field_name("field")
        if field_node is None or view.text(field_node) != "at":
            return
        if not view.in_device_code(call) or hip_excluded(view, call):
            return
        obj = func.child_by_field_name("argument")
        holder = _last_name(view, obj)
        declared = self.types.get(holder) if holder else None
        if declared is not None and not _STD_CONTAINER.match(declared):
            return  # a type of the project's own, which may well have a device `at`
        what = f"a `{declared.split('<')[0].strip()}`" if declared else "a std::array/vector"
        self.report(
            call,
            f"`{view.text(call)}` in device code: `at()` of {what} throws on a bad index, and "
            "hipcc rejects the call (reference to __host__ function '__throw_out_of_range_fmt' "
            "in a __device__ function) while nvcc accepts it; use `[...]`",
            severity=Severity.ERROR if declared else Severity.WARNING,
        )


def _deduced_use(node: Node) -> bool:
    """`std::array{...}`, `std::array a{...}`, `std::tuple(...)`: the template's arguments are
    left to class template argument deduction (not `std::array<float, 2>`, not a scope)."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "compound_literal_expression":
        return parent.child_by_field_name("type") == node
    if parent.type == "call_expression":
        return parent.child_by_field_name("function") == node
    if parent.type == "declaration":
        return parent.child_by_field_name("type") == node
    return False


def _braced_launch_arguments(view, error: Node) -> list[Node]:
    """tree-sitter's CUDA grammar cannot parse `<<<{...}, {...}>>>` either: in its recovery
    node, the braced lists that follow an unclosed `<<<` are the launch's first arguments."""
    found: list[Node] = []
    for child in error.named_children:
        before = view.data[error.start_byte : child.start_byte]
        if before.count(b"<<<") <= before.count(b">>>"):
            found = []  # not (or no longer) inside a launch configuration
            continue
        if child.type == "initializer_list" and len(found) < 2:
            gap = view.data[found[-1].end_byte : child.start_byte] if found else b""
            if not found or gap.strip() == b",":
                found.append(child)
    return found


def _unevaluated(node: Node, stop: Node) -> bool:
    """Inside `decltype(...)`, `sizeof(...)`, `alignof(...)` or `noexcept(...)` below `stop`."""
    for parent in ancestors(node):
        if parent.type in ("decltype", "sizeof_expression", "alignof_expression", "noexcept"):
            return True
        if parent == stop:
            return False
    return False


def _called(access: Node) -> bool:
    parent = access.parent
    return (
        parent is not None
        and parent.type == "call_expression"
        and (parent.child_by_field_name("function") == access)
    )


def _is_constexpr(view, node: Node) -> bool:
    return any(c.type == "type_qualifier" and view.text(c) == "constexpr" for c in node.children)


def _references(view, function: Node) -> set[str]:
    """Names the function binds as references: parameters and locals declared `T& name`."""
    names: set[str] = set()
    stack = [function]
    while stack:
        node = stack.pop()
        if node.type == "reference_declarator":
            inner = node.named_children[-1] if node.named_children else None
            if inner is not None and inner.type == "identifier":
                names.add(view.text(inner))
        stack.extend(node.children)
    return names


def _last_name(view, node: Node | None) -> str | None:
    if node is None:
        return None
    if node.type in ("identifier", "field_identifier"):
        return view.text(node)
    if node.type == "field_expression":
        return _last_name(view, node.child_by_field_name("field"))
    return None


def _declared_types(view) -> dict[str, str]:
    """name -> type text, for the fields, variables and parameters the file declares."""
    types: dict[str, str] = {}
    stack = [view.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("field_declaration", "declaration", "parameter_declaration"):
            type_node = node.child_by_field_name("type")
            if type_node is not None:
                for decl in node.children_by_field_name("declarator"):
                    while decl is not None and decl.type not in ("identifier", "field_identifier"):
                        decl = decl.child_by_field_name("declarator")
                    if decl is not None:
                        types[view.text(decl)] = view.text(type_node)
        stack.extend(node.children)
    return types
