"""half-members: fp16 struct members and raw initialisers whose layout differs in HIP.

Checked with hipcc 5.2.3 (HIP 5.2) against nvcc 13 (see rules/half-members.toml):
- `__half2` members `.x`/`.y` are `__half` in CUDA; HIP 5.2 declares them `unsigned short` (the
  raw bits), so `float d = v.x` compiles and yields the bit pattern as a number (1.0 reads as
  15360). Current ROCm (ROCm/clr amd_hip_fp16.h) declares them `__half`, like CUDA. Portable:
  `__low2half(v)` / `__high2half(v)` (or `__low2float` / `__high2float`).
- `__half` has no member `x` in HIP (`no member named 'x' in '__half'`); neither has CUDA 9+,
  but code under `CUDA_VERSION < 9000` (which plain hipcc takes: CUDA_VERSION is undefined)
  still uses it. Portable: `__half_as_ushort(h)` / `__ushort_as_half(bits)`.
- `__half_raw r = {bits}`: CUDA's `__half_raw` holds only `unsigned short x`; HIP's is a union
  whose first member is `_Float16 data`, so the braces convert the bits as a number
  (`{0x3c00}` is 15360.0, not 1.0). `__half2_raw{a, b}` does not compile in HIP 5.2 ("excess
  elements in struct initializer"). Portable: assign `.x` (and `.y`) after declaring it.
The file's own declarations tell which names hold half/half2 values (variables, fields and
parameters); names declared elsewhere are not followed.
"""

from __future__ import annotations

from tree_sitter import Node

from cuda2rocm import facts
from cuda2rocm.frontends.cpp import CppRule, enclosing_function, hip_excluded, nodes_of_types
from cuda2rocm.model import Severity

HALF2 = frozenset({"half2", "__half2", "at::Half2"})
HALF = frozenset({"half", "__half"})
RAW = frozenset({"__half_raw", "__half2_raw"})
_DECLARATIONS = frozenset(
    {"declaration", "field_declaration", "parameter_declaration", "optional_parameter_declaration"}
)


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        #: Declarations outside functions (struct fields, globals): name -> type text.
        self.outer: dict[str, str] = {}
        #: function start -> local name -> [(declaration start, type text)].
        self.scopes: dict[int, dict[str, list[tuple[int, str]]]] = {}
        any_half = False
        for node in _declarations(view.tree.root_node):
            type_node = node.child_by_field_name("type")
            if type_node is None:
                continue
            kind = view.text(type_node)
            if kind in RAW:
                self._raw(node, kind)
            any_half = any_half or kind in HALF2 or kind in HALF
            function = enclosing_function(node)
            for decl in node.children_by_field_name("declarator"):
                name = _declared_name(decl)
                if name is None:
                    continue
                if function is None:
                    self.outer.setdefault(view.text(name), kind)
                else:
                    table = self.scopes.setdefault(function.start_byte, {})
                    table.setdefault(view.text(name), []).append((node.start_byte, kind))
        if not any_half:
            return
        for ident in view.identifiers:
            if ident.type != "field_identifier" or view.text(ident) not in ("x", "y"):
                continue
            access = ident.parent
            if access is None or access.type != "field_expression":
                continue
            kind = self._type_of(access.child_by_field_name("argument"))
            if kind is None or hip_excluded(view, access):
                continue
            member = view.text(ident)
            if kind in HALF2:
                if facts.verdict("half2-members-half", self.ctx.targets) is None:
                    continue  # from ROCm 6.0 the members are `__half`, as in CUDA
                low = "__low2half" if member == "x" else "__high2half"
                self.report(
                    access,
                    f"`{view.text(access)}`: the `.{member}` of a `half2` is a `__half` in CUDA "
                    "but `unsigned short` (the raw bits) in HIP before ROCm 6.0, so it compiles "
                    f"and reads 1.0 as 15360; use `{low}(...)` (or "
                    f"`{low[:-4]}float`), which both provide",
                    severity=Severity.INFO,
                )
            elif kind in HALF and member == "x":
                self.report(
                    access,
                    f"`{view.text(access)}`: `__half` has no member `x` in HIP (hipcc: no "
                    "member named 'x' in '__half'); use `__half_as_ushort(h)` / "
                    "`__ushort_as_half(bits)` or a `__half_raw`",
                    severity=Severity.ERROR,
                )

    def _type_of(self, node: Node | None) -> str | None:
        """The declared type of what `node` reads (`v`, `s.v`, `p->v`, `v[i]`, `s[i].v`): a
        plain name is looked up in its function first, a field among the file's fields."""
        view = self.view
        while node is not None:
            if node.type == "identifier":
                function = enclosing_function(node)
                local = self.scopes.get(function.start_byte, {}) if function is not None else {}
                name = view.text(node)
                # The nearest declaration before the use (`#if` branches may each declare it).
                before = [k for at, k in sorted(local.get(name, ())) if at < node.start_byte]
                return before[-1] if before else self.outer.get(name)
            if node.type == "field_identifier":
                return self.outer.get(view.text(node))
            if node.type == "field_expression":
                node = node.child_by_field_name("field")
            elif node.type == "subscript_expression":
                node = node.child_by_field_name("argument")
            elif node.type == "parenthesized_expression" and node.named_child_count == 1:
                node = node.named_children[0]
            else:
                return None
        return None

    def _raw(self, node: Node, kind: str) -> None:
        view = self.view
        for decl in node.children_by_field_name("declarator"):
            value = decl.child_by_field_name("value") if decl.type == "init_declarator" else None
            if value is None or value.type != "initializer_list" or hip_excluded(view, decl):
                continue
            if not value.named_children:
                continue
            if kind == "__half2_raw":
                message = (
                    f"`{view.text(decl)}`: HIP's `__half2_raw` is a union led by a `_Float16` "
                    "vector, so a braced list of bits does not compile (hipcc 5.2: excess "
                    "elements in struct initializer); declare it and assign `.x` and `.y`"
                )
                severity = Severity.ERROR
            else:
                message = (
                    f"`{view.text(decl)}`: HIP's `__half_raw` is a union led by `_Float16 data`, "
                    "so the braces convert the bits as a number ({0x3c00} is 15360.0, not 1.0 "
                    "as in CUDA); declare it and assign `.x`, or use `__ushort_as_half(bits)`"
                )
                severity = Severity.WARNING
            self.report(decl, message, severity=severity)


def _declarations(root: Node):
    return nodes_of_types(
        root, tuple(sorted(_DECLARATIONS)), ("comment", "string_literal", "raw_string_literal")
    )


def _declared_name(decl: Node) -> Node | None:
    while decl is not None and decl.type not in ("identifier", "field_identifier"):
        decl = decl.child_by_field_name("declarator")
    return decl
