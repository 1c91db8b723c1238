"""Follow a project's warp-size constant to the use sites that depend on the hardware width.

`#define WARP_SIZE 32`, `constexpr int kWarpSize = 32`, `THREADS_PER_WARP`: the definition is
one finding (warp-size-32 rewrites it); its uses are another. Once the constant follows the
target (64 on CDNA, 32 on RDNA: hipcc's `__AMDGCN_WAVEFRONT_SIZE`), device uses are right, but
host uses are not: the host pass cannot know the device's wavefront (torch 2.13's
`C10_WARP_SIZE` is `at::cuda::warp_size()` there, and since ROCm 7 `warpSize` is not a constant
expression). So:

- host code (launch shapes, grid sizes, shared-memory byte counts, checks) that uses the
  constant is reported wherever the constant is not a template/function parameter of the file;
- device code is reported only when the definition lives in another file (this file cannot be
  fixed through it) and only in the forms that change with the width: lane/warp arithmetic on a
  thread index, comparisons with a thread index or block size, `__shared__` sizes;
- `__launch_bounds__` and `== 32` tests of the constant are reported in both.

A name the file defines with a value other than a bare 32 (a HIP branch, `warpSize`), or takes
as a template parameter, is the project's own portable spelling and is left alone; so is a name
another file of the project defines that way for ROCm (`view.wavefront_constants`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from cuda2rocm.frontends.cpp import CppView, ancestors, hip_excluded, initializations

#: Project spellings of the warp size (not HIP/CUDA's own `warpSize`, which is the hardware's).
WARP_CONSTANT = re.compile(
    r"^(?!c10_)\w*?(warp_?size|warp_?width|threads_?per_?warp)$"
    r"|^(k_?)?(warp_?threads|lanes_?per_?warp|num_?lanes|warp_?lanes)$",
    re.I,
)
_HARDWARE = frozenset({"warpSize"})
_CUDA_MARKERS = re.compile(
    r"__global__|__device__|<<<|cuda_runtime|hip_runtime|\bcudaStream_t\b|\bhipStream_t\b"
)
_SHUFFLES = frozenset(
    {"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor"}
    | {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync"}
)
_THREADISH = re.compile(
    r"^(tid|tidx|lane|lane_?id|thread_?id|ltid|threadIdx|blockIdx|block_?size|blockDim)$", re.I
)
_PARAMETER_TYPES = frozenset(
    {
        "parameter_declaration",
        "optional_parameter_declaration",
        "template_parameter_list",
        "variadic_parameter_declaration",
    }
)


@dataclass(frozen=True)
class Use:
    #: Character span of the use.
    start: int
    end: int
    line: int
    name: str
    #: "host", "device", "launch-bounds" or "assert-32".
    kind: str
    #: Defined in another file: whether it is tied to the hardware or a logical 32 is unknown.
    external: bool = False


def definitions(view: CppView) -> tuple[set[str], set[str]]:
    """(names the file defines as a bare 32, names it defines any other way)."""
    fixed, other = set(), set()
    for node in view.defines:
        name = node.child_by_field_name("name")
        if name is None or not WARP_CONSTANT.match(view.text(name)):
            continue
        value = node.child_by_field_name("value")
        bare = value is not None and node.type == "preproc_def"
        if bare and view.text(value).strip().strip("()").rstrip("uU") == "32":
            fixed.add(view.text(name))
        else:
            other.add(view.text(name))
    for ident in view.identifiers:
        text = view.text(ident)
        if not WARP_CONSTANT.match(text) or text in _HARDWARE:
            continue
        parent = ident.parent
        if parent is None:
            continue
        if parent.type == "init_declarator" and parent.child_by_field_name("declarator") == ident:
            value = parent.child_by_field_name("value")
            if value is not None and view.text(value).strip("{}() ").rstrip("uU") == "32":
                fixed.add(text)
            else:
                other.add(text)
        elif parent.type == "enumerator" and parent.child_by_field_name("name") == ident:
            value = parent.child_by_field_name("value")
            (fixed if value is not None and view.text(value) == "32" else other).add(text)
        elif ident.type == "identifier" and (
            parent.type in _PARAMETER_TYPES
            or (
                parent.type in ("init_declarator", "reference_declarator", "pointer_declarator")
                and parent.parent is not None
                and parent.parent.type in _PARAMETER_TYPES
            )
        ):
            other.add(text)  # a parameter: `template <int kWarpSize>`, `int warp_size`
    fixed.update(role_constants(view))
    return fixed, other


def uses(view: CppView) -> Iterator[Use]:
    """Use sites of the file's warp-size constants that depend on the hardware width."""
    if not _CUDA_MARKERS.search(view.source.text):
        return  # not GPU code of ours (a SYCL or CPU source that names its own WARP_SIZE)
    fixed, other = definitions(view)
    other |= logical_widths(view)
    # Defined in another file as the wavefront on ROCm (every ROCm-compiled definition is not
    # a bare 32; context.project_macros.wavefront_constants): portable, like `other`.
    other |= view.wavefront_constants - fixed
    derived = _derived(view, other, fixed)
    seen_lines: set[tuple[int, str]] = set()
    for ident in view.identifiers:
        name = view.text(ident)
        if name in _HARDWARE:
            operand = ident.parent if ident.parent.type == "field_expression" else ident
            if _compared_with_32(view, operand) and not hip_excluded(view, ident):
                start, end = view.span(operand)
                yield Use(start, end, ident.start_point[0], view.text(operand), "assert-32")
            continue
        if name in other or not (WARP_CONSTANT.match(name) or name in derived or name in fixed):
            continue
        if _is_definition(ident) or not (ident.type == "identifier" or _vexing(ident)):
            continue
        if _runtime_query(view, ident):
            continue  # `at::cuda::warp_size()`: the run-time query the message recommends
        kind = _kind(view, ident, external=name not in fixed)
        if name in derived and kind not in ("host", "launch-bounds"):
            continue  # a constant computed from the warp size: only launch shapes are followed
        if kind is None or hip_excluded(view, ident):
            continue
        key = (ident.start_point[0], name)
        if key in seen_lines:
            continue
        seen_lines.add(key)
        start, end = view.span(ident)
        external = derived.get(name, name not in fixed)
        yield Use(start, end, ident.start_point[0], name, kind, external)
    for define in view.defines:
        body = define.child_by_field_name("value")
        if body is None or "<<<" not in view.text(body):
            continue  # only launch macros: elsewhere a macro body's context is unknown
        b_start, b_end = view.span(body)
        for token in view.macro_tokens:
            if not (b_start <= token.start < b_end) or token.name in other:
                continue
            if token.name in _HARDWARE or not WARP_CONSTANT.match(token.name):
                continue
            line = view.source.lines.position(token.start, token.end).line - 1
            if (line, token.name) not in seen_lines and not hip_excluded(view, define):
                seen_lines.add((line, token.name))
                yield Use(token.start, token.end, line, token.name, "host", token.name not in fixed)


def role_constants(view: CppView) -> dict[str, str]:
    """Constants the file defines only as a bare 32 whose device code uses them as the warp
    width, whatever their name (`constexpr int kLanes = 32`, `#define GROUP 32`): the divisor
    of a thread index into warps or lanes (`threadIdx.x / kLanes`, `tid % GROUP`), or the
    start or bound of a loop over whole-wavefront shuffles (`for (o = GROUP >> 1; ...)`).
    Such a name is the file's warp size as much as one spelled `WARP_SIZE`; a name also passed
    as a shuffle's explicit width sizes logical groups instead and is not one. Maps each name
    to its first such use, as a message says it."""
    values: dict[str, set[str]] = {}
    for node in view.defines:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is not None and node.type == "preproc_def":
            text = view.text(value).strip().strip("()").rstrip("uU") if value is not None else ""
            values.setdefault(view.text(name), set()).add(text)
    for ident in view.identifiers:
        parent = ident.parent
        if parent is None or ident.type != "identifier":
            continue
        if parent.type == "init_declarator" and parent.child_by_field_name("declarator") == ident:
            declaration = parent.parent
            constant = declaration is not None and any(
                c.type == "type_qualifier" and view.text(c) in ("const", "constexpr")
                for c in declaration.children
            )
            value = parent.child_by_field_name("value")
            text = view.text(value).strip("{}() ").rstrip("uU") if value is not None else ""
            values.setdefault(view.text(ident), set()).add(text if constant else "?")
        elif parent.type == "enumerator" and parent.child_by_field_name("name") == ident:
            value = parent.child_by_field_name("value")
            values.setdefault(view.text(ident), set()).add(view.text(value) if value else "?")
        elif parent.type in _PARAMETER_TYPES or (
            parent.parent is not None and parent.parent.type in _PARAMETER_TYPES
        ):
            values.setdefault(view.text(ident), set()).add("?")
    candidates = {n for n, v in values.items() if v == {"32"}} - logical_widths(view)
    candidates -= set(view.wavefront_constants)
    found: dict[str, str] = {}
    if not candidates:
        return found
    for ident in view.identifiers:
        name = view.text(ident)
        if name not in candidates or name in found or _is_definition(ident):
            continue
        if not view.in_device_code(ident) or hip_excluded(view, ident):
            continue
        if _divides_a_thread_index(view, ident):
            found[name] = "`" + " ".join(view.text(ident.parent).split()) + "`"
        elif _bounds_a_shuffle_loop(view, ident):
            found[name] = "the bounds of a whole-wavefront shuffle loop"
    return found


def _divides_a_thread_index(view: CppView, ident: Node) -> bool:
    parent = ident.parent
    if parent is None or parent.type != "binary_expression":
        return False
    op = parent.child_by_field_name("operator")
    left = parent.child_by_field_name("left")
    return (
        parent.child_by_field_name("right") == ident
        and op is not None
        and view.text(op) in ("/", "%")
        and left is not None
        and _mentions_thread(view, left)
    )


def _bounds_a_shuffle_loop(view: CppView, ident: Node) -> bool:
    """`ident` in the header of a `for` (not its body) whose body shuffles over the whole
    wavefront (no explicit width)."""
    loop = next((a for a in ancestors(ident) if a.type == "for_statement"), None)
    if loop is None:
        return False
    body = loop.child_by_field_name("body")
    if body is None or _within(ident, body):
        return False
    for node in _walk(body):
        shuffle = _shuffle_arguments(view, node) if node.type == "call_expression" else None
        if shuffle is not None and len(shuffle[0]) <= shuffle[1]:
            return True  # no width argument: the whole wavefront
    return False


def _shuffle_arguments(view: CppView, call: Node) -> tuple[list[Node], int] | None:
    """(arguments, index of the `width` one) of a call to a CUDA/HIP shuffle, else None."""
    func = call.child_by_field_name("function")
    name = view.text(func) if func is not None else ""
    if name not in _SHUFFLES:
        return None
    args = call.child_by_field_name("arguments")
    named = [a for a in args.named_children if a.type != "comment"] if args else []
    return named, 3 if name.endswith("_sync") else 2


def logical_widths(view: CppView) -> set[str]:
    """Constants the file passes as the explicit `width` of a shuffle: they size logical groups
    (`__shfl_xor_sync(m, v, o, WARP_SIZE)`), self-consistent on a 64-lane wavefront too."""
    found: set[str] = set()
    for call in view.calls:
        shuffle = _shuffle_arguments(view, call)
        if shuffle is None:
            continue
        named, at = shuffle
        if len(named) > at and named[at].type == "identifier":
            found.add(view.text(named[at]))
    return found


def _derived(view: CppView, other: set[str], fixed: set[str]) -> dict[str, bool]:
    """Namespace- or class-scope constants computed from a followed warp constant:
    `constexpr int kLanes = kWarpSize;`, `const int kThreads = 4 * WARP_SIZE;` (one level).
    Maps each to whether its warp constant is defined in another file."""
    found: dict[str, bool] = {}
    for node in view.declarations:
        scope = node.parent.type if node.parent is not None else ""
        if scope not in ("translation_unit", "declaration_list", "field_declaration_list"):
            continue  # function-local values (`dim3 block(kWarpSize, 4)`) are reported as uses
        if not any(
            c.type == "type_qualifier" and view.text(c) in ("const", "constexpr")
            for c in node.children
        ):
            continue
        for target, value in initializations(node):
            if target.type != "identifier":
                continue
            name = view.text(target)
            if WARP_CONSTANT.match(name) or name in other:
                continue
            sources = {
                view.text(n)
                for n in _walk(value)
                if n.type == "identifier"
                and WARP_CONSTANT.match(view.text(n))
                and view.text(n) not in other
                and view.text(n) not in _HARDWARE
            }
            if sources:
                found[name] = not sources <= fixed  # from a constant defined elsewhere
    return {k: v for k, v in found.items() if k not in other}


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _vexing(ident: Node) -> bool:
    """`dim3 block(kWarpSize, n)` parses as a function declaration: its "parameter types" are
    the constructor's arguments."""
    parent = ident.parent
    return (
        ident.type == "type_identifier"
        and parent is not None
        and parent.type == "parameter_declaration"
        and parent.child_by_field_name("declarator") is None
    )


#: Run-time queries of the active device's wavefront (torch's ATen/cuda/CUDAContext.h).
_RUNTIME_QUERIES = frozenset({"at::cuda::warp_size", "::at::cuda::warp_size"})


def _runtime_query(view: CppView, ident: Node) -> bool:
    """`ident` names the function of a call to torch's run-time warp-size query."""
    top = ident
    while top.parent is not None and top.parent.type == "qualified_identifier":
        top = top.parent
    call = top.parent
    return (
        call is not None
        and call.type == "call_expression"
        and call.child_by_field_name("function") == top
        and "".join(view.text(top).split()) in _RUNTIME_QUERIES
    )


def _is_definition(ident: Node) -> bool:
    parent = ident.parent
    return parent is not None and (
        (parent.type == "init_declarator" and parent.child_by_field_name("declarator") == ident)
        or parent.type in ("preproc_def", "enumerator", "preproc_defined")
    )


def _kind(view: CppView, ident: Node, external: bool) -> str | None:
    if _compared_with_32(view, ident):
        return "assert-32"
    function = None
    for parent in ancestors(ident):
        if parent.type in ("launch_bounds", "preproc_if", "preproc_elif"):
            if parent.type == "preproc_if" or parent.type == "preproc_elif":
                return None
            # Only a warp-by-warp bound breaks (64 x 64 = 4096 > 1024 threads per block).
            return "launch-bounds" if view.text(parent).count(view.text(ident)) > 1 else None
        if parent.type in ("function_definition", "lambda_expression"):
            function = parent
            break
    if function is None:
        return None  # a global constant derived from it: its own uses are what matter
    if view.in_device_code(ident):
        return "device" if external and _width_dependent(view, ident) else None
    if _body_of(function) is None or not _within(ident, _body_of(function)):
        return None  # a default argument or a parameter type
    return "host"


def _body_of(function: Node) -> Node | None:
    return function.child_by_field_name("body")


def _within(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _compared_with_32(view: CppView, ident: Node) -> bool:
    parent = ident.parent
    if parent is None or parent.type != "binary_expression":
        return False
    op = parent.child_by_field_name("operator")
    if op is None or view.text(op) not in ("==", "!="):
        return False
    other = [c for c in (parent.child_by_field_name(f) for f in ("left", "right")) if c != ident]
    if not other or view.text(other[0]).rstrip("uU") != "32":
        return False
    return view.text(op) != "==" or not _or_accepts_64(view, parent, view.text(ident))


def _or_accepts_64(view: CppView, comparison: Node, operand: str) -> bool:
    """`warpSize == 32 || warpSize == 64`: the test accepts 64-lane wavefronts too."""
    top = comparison
    while top.parent is not None and (
        top.parent.type == "parenthesized_expression"
        or (
            top.parent.type == "binary_expression"
            and view.text(top.parent.child_by_field_name("operator")) == "||"
        )
    ):
        top = top.parent
    name = re.escape(operand)
    wanted = re.compile(rf"(?:{name}\s*==\s*64[uU]?|64[uU]?\s*==\s*{name})(?!\w)")
    return top is not comparison and bool(wanted.search(view.text(top)))


def _width_dependent(view: CppView, ident: Node) -> bool:
    """Lane/warp arithmetic or a comparison with a thread index, or a `__shared__` size."""
    child = ident
    for parent in ancestors(ident):
        if parent.type == "binary_expression":
            for side in ("left", "right"):
                operand = parent.child_by_field_name(side)
                if operand is not None and operand != child and _mentions_thread(view, operand):
                    return True
        elif parent.type in ("array_declarator",) and child == parent.child_by_field_name("size"):
            decl = parent
            while decl is not None and decl.type not in ("declaration", "field_declaration"):
                decl = decl.parent
            if decl is None:  # a parameter: a view of per-warp scratch (`T tile[kWarpSize][..]`)
                return any(a.type == "parameter_declaration" for a in ancestors(parent))
            return any(
                c.type == "type_qualifier" and view.text(c) == "__shared__" for c in decl.children
            )
        elif parent.type not in ("parenthesized_expression", "array_declarator"):
            return False
        child = parent
    return False


def _mentions_thread(view: CppView, node: Node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "field_identifier") and _THREADISH.match(view.text(n)):
            return True
        stack.extend(n.children)
    return False
