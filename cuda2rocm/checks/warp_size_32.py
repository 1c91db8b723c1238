"""warp-size-32: a warp of 32 lanes written into kernel code.

AMD CDNA GPUs run 64-lane wavefronts, RDNA 32 (checked: hipcc defines `__AMDGCN_WAVEFRONT_SIZE`
64 for gfx90a, 32 for gfx1030), and hipify does not touch these numbers. The rule looks for
the idioms, not for every 32: a WARP_SIZE macro or constant of 32, lane/warp arithmetic on a
thread index (`& 31`, `% 32`, `/ 32`, `>> 5`), shuffle loops starting at 16, shuffle widths of
32, and one-dimensional `__shared__` per-warp arrays of 32. The fix spells the size
`CUDA2ROCM_WARP_SIZE` from the compatibility header; it is unsafe because a 32 can be a tile
size that merely equals the warp size.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from cuda2rocm.checks import warp_constants
from cuda2rocm.frontends.cpp import (
    CppRule,
    CppView,
    ancestors,
    enclosing_function,
    function_name,
    hip_excluded,
    identifiers,
    initializations,
    nodes_of_type,
)
from cuda2rocm.model import Severity

WARP = "CUDA2ROCM_WARP_SIZE"
#: A name for the warp size, with any prefix a project puts before it (`kWarpSize`,
#: `hw_warp_size`, `CUDA_WARP_SIZE`; not torch's `C10_WARP_SIZE`, judged on its own). Kept in
#: step with warp_constants.WARP_CONSTANT and context.project_macros._WARP_NAME.
_WARP_NAME = re.compile(r"^(?!c10_)\w*?warp_?(size|width)$", re.I)
_THREAD_NAMES = frozenset(
    {"tid", "tidx", "lane", "laneid", "lane_id", "threadid", "thread_id", "ltid", "local_tid"}
)
_NUMBER = re.compile(r"^(0x[0-9a-f]+|[0-7]+|\d+)[ul]*$", re.I)
_PRIMARY = frozenset(
    {"identifier", "field_expression", "call_expression", "parenthesized_expression"}
)
_LANE_NAME = re.compile(r"^(lane|lane_?id|lane_?idx|warp|warp_?id|warp_?idx|wid)$", re.I)
_WARP_INDEX = re.compile(r"^(warp|warp_?id|warp_?idx|wid|warp_?index)$", re.I)
#: A block's thread count (`kNThreads`, `NUM_THREADS`, `threads_per_block`, `BLOCK_THREADS`):
#: divided by 32 in device code it is the number of warps per block.
_THREAD_COUNT = re.compile(
    r"^(k_?)?(n_?|num_?)?threads(_?per_?block)?$|^(k_?)?block_?threads$", re.I
)
SHUFFLES = frozenset(
    {"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor"}
    | {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync"}
    | {"cuda2rocm_shfl_sync", "cuda2rocm_shfl_up_sync", "cuda2rocm_shfl_down_sync"}
    | {"cuda2rocm_shfl_xor_sync"}
)
# Calls that act on the whole hardware wavefront whatever width the shuffles use: a function
# that makes one cannot be read as working in logical 32-lane groups.
_WAVE_WIDE = re.compile(r"^(__ballot|__any|__all|__activemask|__syncwarp|__match_\w+|__reduce_\w+)")


def number(view: CppView, node: Node | None) -> int | None:
    """The value of an integer literal node (`32`, `0x1f`, `32u`), else None."""
    if node is None or node.type != "number_literal":
        return None
    m = _NUMBER.match(view.text(node).replace("'", ""))
    if m is None:
        return None
    digits = m.group(1)
    if digits[:2].lower() == "0x":
        return int(digits, 16)
    return int(digits, 8) if len(digits) > 1 and digits[0] == "0" else int(digits)


def _mentions_thread(view, node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("identifier", "field_identifier"):
            name = view.text(n)
            if name in ("threadIdx", "blockDim") or name.lower() in _THREAD_NAMES:
                return True
        stack.extend(n.children)
    return False


def callee(view: CppView, call: Node) -> str:
    """The called function as written (`__shfl_down_sync`, `cg::this_grid`)."""
    func = call.child_by_field_name("function")
    return view.text(func) if func is not None else ""


#: `threadIdx.x`, `threadIdx.x+16`, `threadIdx.x+s`: a slot per thread (casts, parentheses removed).
_THREAD_SLOT = re.compile(r"^threadIdx\.x([+-](\d+|[A-Za-z_]\w*))?$")
_CONSTANT_SLOT = re.compile(r"^\d+$")


class Rule(CppRule):
    def check(self) -> None:
        self.seen: set[int] = set()
        view = self.view
        logical = warp_constants.logical_widths(view)
        # Named for the warp, or used as its width whatever the name (`warp_constants`).
        roles = warp_constants.role_constants(view)

        def warp_named(name: str) -> bool:
            return (bool(_WARP_NAME.match(name)) or name in roles) and name not in logical

        def used_as(name: str) -> str:
            if name not in roles or _WARP_NAME.match(name):
                return ""
            return f" (used as the warp width: {roles[name]})"

        for node in view.defines:
            name = node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            if (
                name is not None
                and value is not None
                and warp_named(view.text(name))
                and view.text(value).strip() == "32"
            ):
                what = f"#define {view.text(name)} 32{used_as(view.text(name))}"
                self._flag(value, what, WARP)
        for node in view.declarations:
            for target, value in initializations(node):
                if not warp_named(view.text(target)):
                    continue
                if number(view, value) == 32:
                    self._flag(value, f"{view.text(target)} = 32{used_as(view.text(target))}", WARP)
            if any(
                c.type == "type_qualifier" and view.text(c) == "__shared__" for c in node.children
            ):
                self._shared_array(node)
        for node in view.numbers:
            parent = node.parent
            if parent is not None and parent.type == "binary_expression":
                self._arithmetic(parent, node)
        for loop in view.loops:
            self._loop(loop)
        for use in warp_constants.uses(view):
            self._constant_use(use)
        for ident in view.identifiers:
            if view.text(ident) == "C10_WARP_SIZE":
                self._c10_constant(ident)
        self._report_pending()

    # -- detections ----------------------------------------------------------------------------
    def _arithmetic(self, expr, literal) -> None:
        view = self.view
        if expr.child_by_field_name("right") != literal:
            return
        op = view.text(expr.child_by_field_name("operator"))
        value = number(view, literal)
        left = expr.child_by_field_name("left")
        device = view.in_device_code(expr)
        # `int lane = i % 32;`: the variable's name says it is a lane (or warp) of the hardware,
        # in device code or in host code that lays data out for the device's lanes.
        named = _assigned_name(view, expr)
        if not (device and _mentions_thread(view, left)) and not (
            named is not None and _LANE_NAME.match(named)
        ):
            if device and op == "*" and value == 32 and _WARP_INDEX.match(view.text(left)):
                self._flag(literal, f"`{view.text(expr)}`: first lane of a warp", WARP)
            elif device and op == "/" and value == 32 and _THREAD_COUNT.match(view.text(left)):
                self._flag(literal, f"warps per block `{view.text(expr)}`", WARP)
            return
        fixable = device  # host code cannot know the device's wavefront: report, do not fix
        if op == "&" and value == 31:
            self._flag(literal, "lane index `& 31`", f"({WARP} - 1)", fixable)
        elif op in ("%", "/") and value == 32:
            what = "lane index `% 32`" if op == "%" else "warp index `/ 32`"
            self._flag(literal, what, WARP, fixable)
        elif op == ">>" and value == 5:
            lhs = view.text(left) if left.type in _PRIMARY else f"({view.text(left)})"
            self._flag(expr, "warp index `>> 5`", f"{lhs} / {WARP}", fixable)

    def _shared_array(self, decl) -> None:
        for child in decl.children_by_field_name("declarator"):
            if child.type != "array_declarator" or child.child_by_field_name("declarator") is None:
                continue
            if child.child_by_field_name("declarator").type != "identifier":
                continue  # only one-dimensional arrays: [32][33] is a tile, not a warp
            size = child.child_by_field_name("size")
            name = self.view.text(child.child_by_field_name("declarator"))
            if number(self.view, size) == 32 and not self._per_thread(name, decl):
                self._flag(size, "per-warp `__shared__` array of 32", WARP)

    def _per_thread(self, name: str, decl) -> bool:
        """Every subscript of the array (in its function, on lines a HIP pass compiles) is
        `threadIdx.x` (+/- a constant) or a constant, through casts and parentheses, and one is
        `threadIdx.x`: one slot per thread of a 32-thread block (a tree reduction over the
        block, its result read at slot 0), not one per warp or per lane."""
        view = self.view
        scope = decl
        while scope is not None and scope.type != "function_definition":
            scope = scope.parent
        scope = scope or view.tree.root_node
        word = re.compile(rf"\b{re.escape(name)}\b")
        found = False
        for node in nodes_of_type(scope, "subscript_expression"):
            base = node.child_by_field_name("argument")
            if base is None or not word.search(view.text(base)) or hip_excluded(view, node):
                continue
            index = view.text(node.child_by_field_name("indices") or node).strip("[]")
            index = re.sub(r"\(\s*(?:unsigned\s+)?int\s*\)|[()\s]", "", index)
            if _CONSTANT_SLOT.match(index):
                continue  # the result slot (`buf[0]`) read after the reduction
            if not _THREAD_SLOT.match(index):
                return False
            found = True
        return found

    def _width(self, call) -> Node | None:
        """The explicit `width` argument of a shuffle, or None (the whole wavefront)."""
        args = call.child_by_field_name("arguments")
        named = [a for a in args.named_children if a.type != "comment"] if args else []
        width_at = 3 if callee(self.view, call).endswith("_sync") else 2
        return named[width_at] if len(named) > width_at else None

    def _loop(self, loop) -> None:
        view = self.view
        body = loop.child_by_field_name("body")
        if body is None or not view.in_device_code(loop):
            return
        inside = [c for c in self._shuffles() if loop.start_byte <= c.start_byte < loop.end_byte]
        if not inside:
            return
        # Only the shuffles a HIP pass compiles: a `#ifdef __HIP_PLATFORM_AMD__` branch that
        # passes width 32 while the CUDA `#else` relies on the 32-lane warp is consistent.
        hip = [c for c in inside if not hip_excluded(view, c)]
        if hip and all(self._width_is_32(c) for c in hip):
            return  # explicit width 32: self-consistent 32-lane groups, right on wave64 too
        init = loop.child_by_field_name("initializer")
        if init is not None:
            for n in _descendants(init):
                if number(view, n) == 16 and n.parent.type in (
                    "init_declarator",
                    "assignment_expression",
                ):
                    self._flag(n, "shuffle loop starting at offset 16", f"{WARP} / 2")
        cond = loop.child_by_field_name("condition")
        if cond is not None and cond.type == "binary_expression":
            right = cond.child_by_field_name("right")
            op = view.text(cond.child_by_field_name("operator"))
            if op in ("<", "!=") and number(view, right) == 32:
                self._flag(right, "shuffle loop bounded by 32", WARP)

    def _shuffles(self):
        if not hasattr(self, "_shuffle_calls"):
            self._shuffle_calls = [c for c in self.view.calls if callee(self.view, c) in SHUFFLES]
        return self._shuffle_calls

    def _constant_use(self, use: warp_constants.Use) -> None:
        name = f"`{use.name}`"
        if use.kind == "assert-32":
            what = f"{name} compared with 32 asserts a 32-lane warp"
        elif use.kind == "launch-bounds":
            what = (
                f"`__launch_bounds__` of {name} x {name}: once {name} follows the wavefront "
                "(64 on CDNA) the block is 4096 threads, over the 1024 limit"
            )
        elif use.kind == "host":
            host = "at::cuda::warp_size()" if self.view.torch_built else "hipDeviceProp_t::warpSize"
            what = (
                f"host code sizes a launch or buffer from {name}, a warp size fixed at compile "
                "time; the host cannot know the device's wavefront (64 on CDNA, 32 on RDNA): "
                f"query it at run time ({host})"
            )
        else:
            what = (
                f"{name} (defined in another file) splits threads into warps or sizes per-warp "
                "scratch; if it is 32, this is wrong on 64-lane CDNA wavefronts"
            )
        if use.kind != "host" and use.kind != "device":
            what += "; AMD CDNA GPUs (MI100-MI300) run 64-lane wavefronts"
        severity = Severity.WARNING
        if use.external and use.kind in ("host", "device"):
            # Defined in another file: a logical group of 32 (right on wave64 too) or the
            # hardware warp (wrong) cannot be told apart from here.
            what += (
                f" (`{use.name}` is defined in another file: if it is a logical group size "
                "used as an explicit shuffle width, this is fine)"
            )
            severity = Severity.INFO
        self.report((use.start, use.end), what, severity=severity)

    def _c10_constant(self, ident) -> None:
        """torch 2.13 on ROCm: host-pass `C10_WARP_SIZE` is a call, not a constant."""
        view = self.view
        if view.in_device_code(ident) or hip_excluded(view, ident):
            return
        needs = None
        for parent in ancestors(ident):
            if parent.type == "template_argument_list":
                needs = "a template argument"
            elif parent.type == "array_declarator":
                needs = "an array size"
            elif parent.type == "static_assert_declaration":
                needs = "a static_assert"
            elif parent.type in ("declaration", "field_declaration") and any(
                c.type == "type_qualifier" and view.text(c) == "constexpr" for c in parent.children
            ):
                needs = "a constexpr initializer"
            if needs or parent.type in ("function_definition", "compound_statement"):
                break
        if needs is None:
            return
        self.report(
            ident,
            f"`C10_WARP_SIZE` as {needs} in host code: on ROCm, torch 2.13's C10_WARP_SIZE is "
            "`at::cuda::warp_size()` in the host pass (ROCm 7 made `warpSize` non-constant), "
            "so this does not compile; use C10_WARP_SIZE_UPPER_BOUND (array sizes) or "
            "C10_WARP_SIZE_LOWER_BOUND, or query at::cuda::warp_size() at run time",
            data={"wavefront": "any"},  # a compile error on every GPU, not a lane count
        )

    # -- reporting -----------------------------------------------------------------------------
    def _logical_groups_of(self, function) -> bool:
        """`_logical_groups`, once per function (a file flags many nodes in one function)."""
        memo = self.__dict__.setdefault("_logical_memo", {})
        key = (function.start_byte, function.end_byte)
        if key not in memo:
            memo[key] = self._logical_groups(function)
        return memo[key]

    def _logical_groups(self, function) -> bool:
        """Every shuffle a HIP pass compiles in `function`, and in the functions of this file
        it calls, passes an explicit width of 32 (and none casts a ballot, vote or warp
        barrier): its lanes form logical 32-lane groups, which HIP's shuffles honour on a
        64-lane wavefront too (`__shfl_down(v, o, 32)` reads within the caller's half-wave),
        so `& 31`, `% 32`, `>> 5` and per-group arrays of 32 stay consistent there. Shuffles
        in the CUDA branch of `#ifdef __HIP_PLATFORM_AMD__` do not count (TransformerEngine's
        `__shfl_down(v, d, THREADS_PER_WARP)` under it, `__shfl_down_sync(m, v, d)` in the
        `#else`); callees are followed three levels (a block reduction that calls its warp
        reduction `warp_reduce<32>(v)`, which shuffles through the project's wrapper
        `shfl_xor(mask, v, o, 32)`), and a wrapper's width is read at its call sites."""
        view = self.view
        spans = self._reach(function)
        wrappers = self._wrappers()
        bodies = [
            (f.start_byte, f.end_byte)
            for f in view.functions
            if function_name(view, f) in wrappers and f.start_byte != function.start_byte
        ]

        def within(node, where) -> bool:
            return any(a <= node.start_byte < b for a, b in where)

        # A wrapper's own shuffles pass its width parameter: its call sites say the width.
        inside = [
            c
            for c in self._shuffles()
            if within(c, spans) and not within(c, bodies) and not hip_excluded(view, c)
        ]
        wrapped = [
            c
            for c in view.calls
            if within(c, spans)
            and not within(c, bodies)
            and _base(callee(view, c)) in wrappers
            and not hip_excluded(view, c)
        ]
        if not (inside or wrapped) or not all(self._width_is_32(c) for c in inside):
            return False
        if not all(self._wrapped_width_is_32(c, wrappers) for c in wrapped):
            return False
        return not any(
            within(c, spans) and _WAVE_WIDE.match(callee(view, c)) and not hip_excluded(view, c)
            for c in view.calls
        )

    def _reach(self, function, depth: int = 3) -> list[tuple[int, int]]:
        """Spans of `function` and of the functions of this file it calls, `depth` levels down
        (a block reduction, its warp reduction, the project's shuffle wrapper)."""
        view = self.view
        spans = [(function.start_byte, function.end_byte)]
        frontier = [function]
        for _ in range(depth):
            called = {_base(callee(view, c)) for f in frontier for c in self._calls_in(f)}
            frontier = [
                other
                for other in view.functions
                if function_name(view, other) in called
                and (other.start_byte, other.end_byte) not in spans
            ]
            spans.extend((f.start_byte, f.end_byte) for f in frontier)
            if not frontier:
                break
        return spans

    def _wrappers(self) -> dict[str, int]:
        """Functions of this file whose every HIP-compiled shuffle passes one of their own
        parameters as its width (`shfl_xor(mask, v, m, width)` around `__shfl_xor(v, m,
        width)`): name -> that parameter's position, so a call's argument there is the width."""
        if hasattr(self, "_wrapper_table"):
            return self._wrapper_table
        view = self.view
        table: dict[str, int] = {}
        for f in view.functions:
            name = function_name(view, f)
            shuffles = [
                c
                for c in self._shuffles()
                if f.start_byte <= c.start_byte < f.end_byte and not hip_excluded(view, c)
            ]
            if not name or not shuffles:
                continue
            params = _parameter_names(view, f)
            positions = set()
            for c in shuffles:
                width = self._width(c)
                text = view.text(width) if width is not None else ""
                positions.add(params.index(text) if text in params else -1)
            if len(positions) == 1 and -1 not in positions:
                table[name] = positions.pop()
        self._wrapper_table = table
        return table

    def _wrapped_width_is_32(self, call, wrappers: dict[str, int]) -> bool:
        """The argument a wrapper call passes as the shuffle width is a literal 32."""
        args = call.child_by_field_name("arguments")
        named = [a for a in args.named_children if a.type != "comment"] if args else []
        at = wrappers[_base(callee(self.view, call))]
        return len(named) > at and number(self.view, named[at]) == 32

    def _calls_in(self, function):
        a, b = function.start_byte, function.end_byte
        return [c for c in self.view.calls if a <= c.start_byte < b]

    def _width_is_32(self, call) -> bool:
        """The shuffle's explicit width is 32: a literal, or a constant this file defines only
        as a bare 32 (`constexpr uint32_t THREADS_PER_WARP = 32;`) and that no project header
        makes the wavefront. A name defined elsewhere, or any other way, is unknown."""
        view = self.view
        width = self._width(call)
        if number(view, width) == 32:
            return True
        if width is None or width.type != "identifier":
            return False
        name = view.text(width)
        if name in (getattr(view, "wavefront_constants", ()) or ()):
            return False
        values = _definitions_of(view, name)
        return bool(values) and all(v == "32" for v in values)

    def _flag(self, node, what: str, replacement: str, fixable: bool = True) -> None:
        if node.start_byte in self.seen or hip_excluded(self.view, node):
            return
        if in_wave32_branch(self.view, node):
            return
        function = enclosing_function(node)
        if function is not None and self._logical_groups_of(function):
            return
        if not fixable:
            self.seen.add(node.start_byte)
            self.report(
                node,
                f"{what} lays data out for 32-lane warps in host code; the device's wavefront "
                "is 64 lanes on CDNA and 32 on RDNA, known on the host only at run time "
                "(hipDeviceProp_t::warpSize)",
                severity=Severity.WARNING,
            )
            return
        self.seen.add(node.start_byte)
        self.__dict__.setdefault("pending", []).append((node, what, replacement))

    def _report_pending(self) -> None:
        """Fixes come per function, all or none: a function that still spells the warp size
        somewhere this rule does not rewrite (`kThreads / 32` sizing a per-warp array, a
        `(n + 31) >> 5` bitset index) would mix 64-lane and 32-lane arithmetic on ROCm (e.g.
        rows of a per-warp array never written), so its findings get no fix. Nor does a
        function that takes a warp or lane index as a parameter: its callers split the threads
        (TransformerEngine's `reduce_max(m, warpid)`, `warpid = threadIdx.x / 32` elsewhere),
        and a 64-lane leader test here would leave every odd warp's slot unwritten."""
        pending = self.__dict__.get("pending", [])
        if not pending:
            return
        flagged = [(n.start_byte, n.end_byte) for n, _, _ in pending]

        def unflagged(n) -> bool:
            return not any(a <= n.start_byte < b for a, b in flagged)

        shuffles = [c for c in self._shuffles() if not hip_excluded(self.view, c)]

        by_span = {(f.start_byte, f.end_byte): f for f in self.view.functions}

        def clean(function) -> bool:
            if _takes_warp_index(self.view, function):
                return False
            # A callee that takes the warp or lane index this function computes gets no fix
            # (above): rewriting the caller's split alone would hand it 64-lane indices for
            # the 32-lane slots it sizes (`sums[num_threads / 32]`, read at `lane_id`).
            own = (function.start_byte, function.end_byte)
            for span in self._reach(function):
                other = by_span.get(span)
                if span != own and other is not None and _takes_warp_index(self.view, other):
                    return False
            # The unit is the function and the functions of this file it calls: a warp
            # reduction it calls whose butterfly stays at five steps (`for (i = 4; i >= 0;
            # i--)` over `1 << i`) or at 32 would reduce half a 64-lane wavefront.
            for a, b in self._reach(function):
                node = self.view.tree.root_node.descendant_for_byte_range(a, b)
                nodes = list(_descendants(node)) if node is not None else []
                if any(number(self.view, n) in (31, 32) and unflagged(n) for n in nodes):
                    return False
                for loop in (n for n in nodes if n.type == "for_statement"):
                    if not any(loop.start_byte <= c.start_byte < loop.end_byte for c in shuffles):
                        continue
                    body = loop.child_by_field_name("body")
                    header = [
                        n
                        for n in _descendants(loop)
                        if body is None or not (body.start_byte <= n.start_byte < body.end_byte)
                    ]
                    if any(number(self.view, n) in (4, 5, 16) and unflagged(n) for n in header):
                        return False
            return True

        # Keyed by span: tree-sitter hands out a new Python object for each access to a node.
        def key(node) -> tuple[int, int]:
            return (node.start_byte, node.end_byte)

        every = {key(f): f for f in self.view.functions}
        cleaned: dict[tuple[int, int], bool] = {}  # only the functions asked about

        def clean_at(k: tuple[int, int]) -> bool:
            if k not in cleaned:
                cleaned[k] = clean(every[k])
            return cleaned[k]

        # A file-level constant (`#define WARP_SIZE 32`) and the functions that use it are one
        # computation: the constant is rewritten only when every function that names it is
        # rewritten too (an explicit width-32 shuffle there makes it a logical group size,
        # which must stay 32), and a function that names an unrewritten constant keeps its
        # own 32s.
        constants: dict[str, bool] = {}
        for node, _, _ in pending:
            name = _defined_name(self.view, node)
            if enclosing_function(node) is None and name is not None:
                users = [k for k, f in every.items() if name in _names(self.view, f)]
                constants[name] = all(clean_at(k) for k in users)

        def fixable_at(k: tuple[int, int]) -> bool:
            if k not in every or not clean_at(k):
                return False
            names = _names(self.view, every[k])
            return not any(not ok and name in names for name, ok in constants.items())

        # Lane arithmetic in a file that computes with tensor-core MMA fragments (CUTLASS,
        # CuTe, WMMA, `mma.sync` / `ldmatrix` PTX) follows the MMA's 32-thread layout
        # (`(tid % 32) / 4` is a row of an m16n8k16 fragment): it stays 32 on any wavefront.
        mma = _MMA.search(self.view.source.text) is not None
        # A header's warp arithmetic is one unit with what its includers define around it (a
        # `#define WARP_SIZE 32` after the include, per-warp sizes passed in as template
        # arguments): none of that is visible here, so a header gets no fix.
        header = self.view.source.path.lower().endswith(_HEADER_SUFFIXES)
        for node, what, replacement in pending:
            if mma:
                self._emit(node, what, None, _MMA_WHY)
                continue
            if header:
                self._emit(node, what, None, _HEADER_WHY)
                continue
            function = enclosing_function(node)
            if function is None:
                name = _defined_name(self.view, node)
                fixable = constants.get(name, False) if name is not None else False
            else:
                fixable = fixable_at(key(function))
            why = "this function spells 32 or 31 elsewhere too"
            if function is not None and _takes_warp_index(self.view, function):
                why = "this function takes a warp or lane index its callers compute"
            elif function is not None and any(
                span in by_span
                and span != (function.start_byte, function.end_byte)
                and _takes_warp_index(self.view, by_span[span])
                for span in self._reach(function)
            ):
                why = "a function it calls takes the warp or lane index it computes"
            self._emit(node, what, replacement if fixable else None, why)

    def _emit(self, node, what: str, replacement: str | None, why: str = "") -> None:
        hint = (
            "C10_WARP_SIZE (device) / at::cuda::warp_size() (host), or "
            if self.view.torch_built
            else ""
        )
        fix = None
        if replacement is not None:
            fix = self.fix(
                self.replace(node, replacement),
                self.view.compat_include_edit(self.ctx),
                description=f"use {WARP} from the compatibility header",
            )
        self.report(
            node,
            f"{what} assumes a 32-lane warp; AMD CDNA GPUs (MI100-MI300) run 64-lane wavefronts; "
            f"use {hint}{WARP}"
            + ("" if fix else f" (no automatic fix: {why or 'see the rule text'})"),
            fix,
        )


_HEADER_SUFFIXES = (".h", ".cuh", ".hpp", ".hxx", ".hh", ".inl", ".inc")
_HEADER_WHY = (
    "this is a header: the warp sizes its includers define or pass in are not seen here, so "
    "it is rewritten by hand, together with them"
)
_MMA = re.compile(r"\bcute::|\bcutlass::|\bwmma::|\bmma\.sync\b|\bldmatrix\b|<cute/|<cutlass/")
_MMA_WHY = (
    "this file computes with tensor-core MMA fragments (CUTLASS / CuTe / WMMA), whose "
    "lane layout is fixed at 32 threads: keep 32 there and port the MMA itself"
)


#: `#if __AMDGCN_WAVEFRONT_SIZE == 32` (or `32u`): hipcc defines the macro per offload target,
#: 32 for wave32 RDNA (gfx1030), 64 for CDNA (gfx90a) (`hipcc -dM -E`, HIP 5.2.3).
_WAVE32_TEST = re.compile(r"^\s*\(?\s*__AMDGCN_WAVEFRONT_SIZE\s*==\s*32[uU]?\s*\)?\s*$")


#: `#if defined(__GFX9__)`: clang defines `__GFX9__` for every gfx9 processor (gfx90a:
#: `__GFX9__` and `__AMDGCN_WAVEFRONT_SIZE 64`; gfx1030: `__GFX10__` and 32; `hipcc -dM -E`,
#: HIP 5.2.3). Its `#elif`/`#else` side is compiled for no gfx9 target, so never for CDNA.
_GFX9_TEST = re.compile(
    r"^\s*\(?\s*(?:defined\s*\(\s*__GFX9__\s*\)|defined\s+__GFX9__|__GFX9__)\s*\)?\s*$"
)


def in_wave32_branch(view: CppView, node) -> bool:
    """`node` is in the body of an `#if` that holds only on wave32 targets, where 32 is right:
    `__AMDGCN_WAVEFRONT_SIZE == 32`, or the alternative of a `__GFX9__` test (no CDNA target
    compiles it; the ROCm targets left, gfx10-12, are wave32)."""
    child = node
    parent = node.parent
    while parent is not None:
        if parent.type in ("preproc_if", "preproc_elif"):
            condition = parent.child_by_field_name("condition")
            text = view.text(condition) if condition is not None else ""
            alternative = child == parent.child_by_field_name("alternative")
            if not alternative and _WAVE32_TEST.match(text):
                return True
            if alternative and _GFX9_TEST.match(text):
                return True
        child, parent = parent, parent.parent
    return False


def _assigned_name(view: CppView, expr: Node) -> str | None:
    """`int lane = <expr>;` / `lane = <expr>;`: the name the value is stored in."""
    parent = expr.parent
    while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
        parent = parent.parent
    if parent is None:
        return None
    if parent.type == "init_declarator":
        target = parent.child_by_field_name("declarator")
    elif parent.type == "assignment_expression":
        target = parent.child_by_field_name("left")
    else:
        return None
    return view.text(target) if target is not None and target.type == "identifier" else None


def _defined_name(view: CppView, node) -> str | None:
    """`WARP_SIZE` for the value of `#define WARP_SIZE 32`, `kLanes` for the value of
    `constexpr int kLanes = 32;` (None elsewhere)."""
    for parent in ancestors(node):
        if parent.type == "preproc_def":
            name = parent.child_by_field_name("name")
            return view.text(name) if name is not None else None
        if parent.type == "init_declarator" and parent.child_by_field_name("value") == node:
            name = parent.child_by_field_name("declarator")
            return view.text(name) if name is not None and name.type == "identifier" else None
    return None


def _takes_warp_index(view: CppView, function) -> bool:
    """Whether a parameter of `function` is named as a warp or lane index (`int warpid`)."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    for param in params.named_children if params is not None else ():
        inner = param.child_by_field_name("declarator")
        while inner is not None and inner.type != "identifier":
            inner = inner.child_by_field_name("declarator")
        if inner is not None and _LANE_NAME.match(view.text(inner)):
            return True
    return False


def _names(view: CppView, function) -> set[str]:
    return {view.text(n) for n in identifiers(function)}


def _definitions_of(view: CppView, name: str) -> list[str]:
    """The values this file gives `name`: `#define NAME v`, `NAME = v` in a declaration (a
    `constexpr`), `enum { NAME = v }`, as written (`32u` -> "32"); a parameter or a
    definition without a value gives "?" (unknown)."""
    values: list[str] = []
    for node in view.defines:
        if view.text(node.child_by_field_name("name") or node) == name:
            value = node.child_by_field_name("value")
            text = view.text(value).strip().strip("()") if value is not None else "?"
            values.append(text.rstrip("uUlL") if node.type == "preproc_def" else "?")
    for ident in view.identifiers:
        if view.text(ident) != name or ident.parent is None:
            continue
        parent = ident.parent
        if (
            parent.type == "init_declarator" and parent.child_by_field_name("declarator") == ident
        ) or (parent.type == "enumerator" and parent.child_by_field_name("name") == ident):
            value = parent.child_by_field_name("value")
        elif parent.type in ("parameter_declaration", "optional_parameter_declaration") or (
            parent.type in ("declaration", "field_declaration")
        ):
            values.append("?")  # a parameter, or a declaration without a value
            continue
        else:
            continue
        text = view.text(value).strip("{}() ") if value is not None else "?"
        values.append(text.rstrip("uUlL"))
    return values


def _base(name: str) -> str:
    """`xor_lanes<T>` -> `xor_lanes`."""
    return name.split("<", 1)[0].strip()


def _parameter_names(view: CppView, function) -> list[str]:
    """The names of a function definition's parameters, in order ("" where unnamed)."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    names: list[str] = []
    for param in params.named_children if params is not None else []:
        if param.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        inner = param.child_by_field_name("declarator")
        while inner is not None and inner.type != "identifier":
            inner = inner.child_by_field_name("declarator")
        names.append(view.text(inner) if inner is not None else "")
    return names


def _descendants(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)
