"""warp-mask-32bit: lane masks held in 32 bits, and the CUDA `*_sync` warp builtins.

Also reported without a fix: `__syncwarp()` (hipcc 5.2: undeclared identifier), and 32-bit mask
parameters of device functions that wrap warp builtins (the fix retypes the parameter).

On AMD GPUs every lane mask is 64-bit: `__ballot` returns `unsigned long long`, and HIP's
`*_sync` builtins (ROCm 6.2+, opt-in via HIP_ENABLE_WARP_SYNC_BUILTINS) static_assert a 64-bit
mask; older HIP (checked: 5.2) has no `*_sync` builtins at all. The fix is spelled through the
compatibility header: `cuda2rocm_shfl_down_sync` & co. call the CUDA builtin under nvcc and the
HIP one under hipcc, `cuda2rocm_lane_mask_t` is `unsigned` for CUDA and 64-bit for HIP, and
`CUDA2ROCM_FULL_MASK` is every lane of either. On CUDA nothing changes, so the fix is safe.
"""

from __future__ import annotations

import re

from cuda2rocm import facts
from cuda2rocm.frontends.cpp import CppRule, enclosing_function, hip_excluded, nodes_of_type

SYNC = {
    "__shfl_sync": "cuda2rocm_shfl_sync",
    "__shfl_up_sync": "cuda2rocm_shfl_up_sync",
    "__shfl_down_sync": "cuda2rocm_shfl_down_sync",
    "__shfl_xor_sync": "cuda2rocm_shfl_xor_sync",
    "__ballot_sync": "cuda2rocm_ballot_sync",
    "__any_sync": "cuda2rocm_any_sync",
    "__all_sync": "cuda2rocm_all_sync",
    "__activemask": "cuda2rocm_activemask",
}
#: Bit counts of a mask: 32-bit on CUDA, must be the 64-bit variant on HIP.
BITS = {"__popc": "cuda2rocm_popc_mask", "__ffs": "cuda2rocm_ffs_mask"}
MASK_SOURCES = frozenset(
    {"__ballot_sync", "__activemask", "cuda2rocm_ballot_sync", "cuda2rocm_activemask"}
)
FULL = "CUDA2ROCM_FULL_MASK"
#: Votes over the whole wavefront (ballot, any/all, the active mask): in a function built on
#: 32-lane warps the two halves of a 64-lane wavefront are two warps, and a wavefront-wide vote
#: mixes them (gsplat's merge-path search: two warps, one per diagonal, each counting its 32
#: probes with `__popc(ballot)` and testing `n_true == 32`).
_WAVE_VOTES = MASK_SOURCES | {"__any_sync", "__all_sync"}
_HALVES = (
    "votes over a warp, and AMD masks are 64-bit; no automatic fix: this function treats warps "
    "as 32 lanes (`& 31`, `>> 5`, `== 32`), and on a 64-lane wavefront one vote spans two of "
    "them (a 64-bit mask mixes their lanes, a 32-bit one gives the upper warp the lower one's): "
    "port by hand, e.g. shift the wavefront's mask by `threadIdx.x & 32`"
)
#: Shuffles that move values between lanes by index or distance (xor stays within its group).
_LANE_MOVES = frozenset({"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync"})
MASK_TYPE = "cuda2rocm_lane_mask_t"
_FULL_LITERAL = re.compile(r"^(0xffffffff[ul]*|~0[ul]*|-1)$", re.I)
_THIRTY_TWO_BIT = re.compile(r"^(unsigned( int)?|uint32_t|int|int32_t|unsigned long)$")
_MASK_NAME = re.compile(r"mask", re.I)
_WIDE_TYPES = frozenset({"auto", "unsigned long long", "uint64_t", "unsigned long long int"})


def _callee(view, call) -> str:
    func = call.child_by_field_name("function")
    return view.text(func) if func is not None else ""


def _args(call) -> list:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args else []


def _is_full(view, node) -> bool:
    return node is not None and _FULL_LITERAL.match(view.text(node).replace(" ", "")) is not None


class Rule(CppRule):
    def _lanes(self) -> bool:
        """Some target runs 64-lane wavefronts (data/facts.toml lane-mask-64): a 32-bit mask
        can drop lanes. On wave32-only targets a mask's upper half is always zero, so storing
        or counting it in 32 bits loses nothing; HIP's `*_sync` builtins still static_assert
        a 64-bit mask type, so a 32-bit mask argument stays an error there."""
        return facts.verdict("lane-mask-64", self.ctx.targets) is not None

    def _no_sync(self) -> str:
        """What the targets' HIP lacks of the `*_sync` builtins (data/facts.toml)."""
        before = facts.verdict("warp-sync-builtins", self.ctx.targets)
        if before is None:
            return "HIP's `*_sync` builtins static_assert a 64-bit integer mask"
        return (
            "HIP before ROCm 7.0 has no `*_sync` builtins unless the build defines "
            "HIP_ENABLE_WARP_SYNC_BUILTINS (ROCm 6.2 to 6.4), and they static_assert a 64-bit mask"
        )

    def check(self) -> None:
        view = self.view
        self.masks: set[str] = set()
        for node in view.declarations:
            self._declaration(node)
        for call in view.calls:
            name = _callee(view, call)
            if name in SYNC:
                self._sync(call, name)
            elif name in BITS:
                self._bits(call, name)
            elif name == "__syncwarp" and not hip_excluded(view, call):
                missing = facts.verdict("syncwarp", self.ctx.targets)
                if missing is None and not _args(call):
                    continue  # HIP declares `__syncwarp()` from ROCm 7.0
                self._report(
                    call,
                    (
                        "`__syncwarp` is not declared by HIP before ROCm 7.0 (hipcc: use of "
                        "undeclared identifier), and from 7.0 its mask must be 64-bit"
                        if missing is not None
                        else "`__syncwarp(mask)` static_asserts a 64-bit mask on ROCm"
                    )
                    + ": on ROCm use `__builtin_amdgcn_wave_barrier()` (a wavefront "
                    "barrier) under `#ifdef __HIP_PLATFORM_AMD__`",
                )
        for function in view.functions:
            self._mask_parameters(function)
        for node in view.defines:
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if node.type != "preproc_def" or name is None or value is None:
                continue
            if (
                _MASK_NAME.search(view.text(name))
                and _is_full(view, value)
                and not self._only_dropped(view.text(name), node)
            ):
                self._report(
                    value,
                    f"`#define {view.text(name)} {view.text(value).strip()}` is a 32-lane mask; "
                    f"a 64-lane wavefront needs 64 bits: use {FULL}",
                    self.replace(value, FULL),
                )

    def _ported(self, call, name: str) -> bool:
        """The project's own port maps the builtin where this call is compiled (a header it
        includes, or a definition above it: `#define __shfl_xor_sync(mask, v, l, w)
        __shfl_xor(v, l, w)` under its HIP switch, context.project_port): hipcc compiles the
        call through that definition, not HIP's builtin."""
        view = self.view
        if name in view.project_names:
            return True
        from cuda2rocm.context import project_port

        return project_port.own_names(view).covers(name, call.start_byte)

    def _sync(self, call, name: str) -> None:
        view = self.view
        if self._ported(call, name):
            return
        func = call.child_by_field_name("function")
        declared = facts.verdict("activemask", self.ctx.targets) is None
        if name == "__activemask" and declared and not self._lanes():
            return  # declared, 64-bit, and its upper half is zero on wave32 targets
        if name in _WAVE_VOTES and self._lanes() and self._thirty_two_lane_warps(call):
            self.report(call, f"`{name}` {_HALVES}")
            return
        if name in MASK_SOURCES and self._lanes() and not self._mask_kept_whole(call):
            self.report(
                call,
                f"`{name}` returns a 32-bit lane mask here, and AMD masks are 64-bit; where the "
                "result goes (a comparison with `~0u`, a 32-bit variable, `&` with another "
                "mask) needs a 64-bit mask too, so this is not rewritten automatically",
            )
            return
        args = _args(call)
        if args and name != "__activemask" and self._wide_on_rocm(call, args[0]):
            return  # the project's own 64-bit mask type on ROCm: ported for HIP's *_sync
        lane_moves = name in _LANE_MOVES and len(args) == 3 and self._lanes()
        if lane_moves and self._thirty_two_lane_warps(call):
            self.report(
                call,
                f"`{name}` takes a 32-bit lane mask and {self._no_sync()}; no automatic fix: "
                "this function treats warps as 32 lanes (`& 31`, "
                "`>> 5`, `/ 32`), and on a 64-lane wavefront the shuffle's default width spans "
                "two of them (lane 32 would read lane 0): pass width 32 or port by hand",
            )
            return
        edits = [self.replace(func, SYNC[name])]
        if args and name != "__activemask" and _is_full(view, args[0]):
            edits.append(self.replace(args[0], FULL))
        self._report(
            call,
            f"`{name}` takes or returns a 32-bit lane mask; on AMD GPUs masks are 64-bit and "
            f"{self._no_sync()}: use `{SYNC[name]}` (compatibility header)",
            *edits,
        )

    def _wide_on_rocm(self, call, mask) -> bool:
        """The mask argument is a variable or parameter declared with a type the project makes
        64-bit on ROCm (`using warp_mask_t = unsigned long long;` under `#ifdef USE_ROCM`,
        context.warp_masks)."""
        view = self.view
        if mask.type != "identifier" or not view.wide_mask_types:
            return False
        name = view.text(mask)
        function = enclosing_function(call)
        if function is None:
            return False
        stack = [function]
        while stack:
            node = stack.pop()
            if node.start_byte >= call.start_byte:
                continue
            stack.extend(node.children)
            if node.type not in ("parameter_declaration", "declaration"):
                continue
            type_node = node.child_by_field_name("type")
            declared = [
                d
                for d in node.children_by_field_name("declarator")
                if view.text(d).split("=", 1)[0].strip().lstrip("&*") == name
            ]
            if declared and type_node is not None:
                spelled = view.text(type_node).replace("const", "").strip()
                return spelled in view.wide_mask_types
        return False

    def _only_dropped(self, name: str, define) -> bool:
        """`#define FULL_MASK 0xffffffff` used only as the mask argument of a macro that the
        project's ROCm code defines without using it (`SHFL_DOWN_SYNC(mask, v, d)` ->
        `__shfl_down(v, d)` under `#ifdef USE_ROCM`, context.warp_masks), or not at all in
        this file's code a HIP pass compiles: on ROCm it is never a lane mask."""
        view = self.view
        if not view.mask_free_macros:
            return False
        uses = [
            n
            for n in view.identifiers
            if view.text(n) == name and not (define.start_byte <= n.start_byte < define.end_byte)
        ]
        if any(t.name == name for t in view.macro_tokens):
            return False  # passed on through another macro: not followed
        live = [u for u in uses if not hip_excluded(view, u)]
        if not live:
            return False  # nothing here says where it goes: keep the finding
        for use in live:
            args = use.parent
            call = args.parent if args is not None and args.type == "argument_list" else None
            if call is None or call.type != "call_expression":
                return False
            arguments = _args(call)
            if not arguments or arguments[0] != use:
                return False
            if _callee(view, call) not in view.mask_free_macros:
                return False
        return True

    def _thirty_two_lane_warps(self, call) -> bool:
        """Whether the function around `call` spells 32-lane warps (a literal 31 or 32, or
        `>> 5`). Its broadcasts and up/down shuffles then mean "within my 32 lanes"; with
        HIP's default width (the wavefront, 64 on CDNA) the upper half reads the lower one
        (gsplat: `queue_idx = __shfl_sync(~0u, queue_idx, 0)` after lane `tid & 31 == 0`
        took it), so renaming alone would compile to wrong results."""
        function = enclosing_function(call)
        if function is None:
            return False
        for node in nodes_of_type(function, "number_literal"):
            value = self.view.text(node).rstrip("uUlL")
            if value in ("31", "32", "0x1f", "0x1F", "0x20"):
                return True
            parent = node.parent
            if value == "5" and parent is not None and parent.type == "binary_expression":
                op = parent.child_by_field_name("operator")
                if op is not None and self.view.text(op) == ">>":
                    return True
        return False

    def _mask_kept_whole(self, call) -> bool:
        """Whether the mask a ballot returns lands only where this rule makes it 64-bit too:
        the initializer of a declaration whose type it rewrites (or already 64-bit), the
        argument of `__popc`/`__ffs` (rewritten to the mask variants), or nowhere. Anything
        else (`== ~0u`, `& other`, `x = ...`, `return`) would truncate or mis-compare the
        64-bit mask on ROCm while the CUDA code stays the same: the fix would not be right
        on ROCm, so there is none."""
        view = self.view
        node, parent = call, call.parent
        while parent is not None and parent.type == "parenthesized_expression":
            node, parent = parent, parent.parent
        if parent is None or parent.type == "expression_statement":
            return True
        if parent.type == "init_declarator" and parent.child_by_field_name("value") == node:
            type_node = parent.parent.child_by_field_name("type") if parent.parent else None
            spelled = view.text(type_node) if type_node is not None else ""
            target = parent.child_by_field_name("declarator")
            return (
                bool(_THIRTY_TWO_BIT.match(spelled)) or spelled in _WIDE_TYPES
            ) and self._uses_stay_masks(target)
        if parent.type == "argument_list" and parent.parent is not None:
            return _callee(view, parent.parent) in BITS and len(_args(parent.parent)) == 1
        return False

    def _uses_stay_masks(self, target) -> bool:
        """Whether every later use of the variable declared at `target` (in its function) is
        one this rule keeps 64-bit: the argument of `__popc`/`__ffs`, or the mask argument of a
        `*_sync` call. A store into a 32-bit bitset word (`visible[i] = ballot`), a comparison
        or arithmetic would silently drop the upper 32 lanes on ROCm."""
        view = self.view
        if target is None or target.type != "identifier":
            return False
        name = view.text(target)
        scope = target.parent
        while scope is not None and scope.type not in ("compound_statement", "translation_unit"):
            scope = scope.parent
        if scope is None:
            return False
        for use in view.identifiers:
            if not (target.end_byte <= use.start_byte < scope.end_byte) or view.text(use) != name:
                continue
            args = use.parent
            call = args.parent if args is not None and args.type == "argument_list" else None
            if call is None or call.type != "call_expression":
                return False
            callee, arguments = _callee(view, call), _args(call)
            if callee in BITS and len(arguments) == 1:
                continue
            if callee in SYNC and arguments and arguments[0] == use:
                continue
            return False
        return True

    def _bits(self, call, name: str) -> None:
        view = self.view
        args = _args(call)
        if len(args) != 1:
            return
        arg = args[0]
        is_mask = (arg.type == "identifier" and view.text(arg) in self.masks) or (
            arg.type == "call_expression" and _callee(view, arg) in MASK_SOURCES
        )
        if not is_mask or not self._lanes():
            return
        if self._thirty_two_lane_warps(call):
            self.report(call, f"`{name}` of a lane mask {_HALVES}")
            return
        self._report(
            call,
            f"`{name}` of a lane mask counts only 32 lanes; a 64-lane mask needs the 64-bit "
            f"variant: use `{BITS[name]}` (compatibility header)",
            self.replace(call.child_by_field_name("function"), BITS[name]),
        )

    def _declaration(self, node) -> None:
        view = self.view
        decls = node.children_by_field_name("declarator")
        type_node = node.child_by_field_name("type")
        if len(decls) != 1 or decls[0].type != "init_declarator" or type_node is None:
            return
        target = decls[0].child_by_field_name("declarator")
        value = decls[0].child_by_field_name("value")
        if target is None or value is None or target.type != "identifier":
            return
        name = view.text(target)
        from_ballot = value.type == "call_expression" and _callee(view, value) in MASK_SOURCES
        full = _MASK_NAME.search(name) is not None and _is_full(view, value)
        if not (from_ballot or full):
            return
        self.masks.add(name)
        type_text = view.text(type_node)
        if not _THIRTY_TWO_BIT.match(type_text):
            return
        if not full and not self._lanes():
            return  # a ballot's upper half is zero on wave32-only targets
        if from_ballot and self._thirty_two_lane_warps(node):
            self.report(type_node, f"`{type_text} {name}` holds a mask that {_HALVES}")
            return
        if from_ballot and not self._uses_stay_masks(target):
            self.report(
                type_node,
                f"`{type_text} {name}` holds a lane mask in 32 bits, and AMD masks are 64-bit; "
                "it is used where a 64-bit mask would change the result (stored, compared or "
                "combined), so this is not rewritten automatically",
            )
            return
        edits = [self.replace(type_node, MASK_TYPE)]
        if full:
            edits.append(self.replace(value, FULL))
        self._report(
            type_node,
            f"`{type_text} {name}` holds a lane mask in 32 bits; AMD wavefronts have 64 lanes: "
            f"use `{MASK_TYPE}` (compatibility header)",
            *edits,
        )

    def _mask_parameters(self, function) -> None:
        """`__device__ T my_shfl(unsigned mask, T v, ...)` wrapping a warp builtin: the wrapper's
        32-bit mask parameter truncates every 64-lane mask passed through it."""
        view = self.view
        body = function.child_by_field_name("body")
        declarator = function.child_by_field_name("declarator")
        if body is None or declarator is None or not view.in_device_code(body):
            return
        # The parameter must reach a warp builtin as its mask (the first argument): CUDA's own
        # `laneMask` is the xor offset of `__shfl_xor_sync`, not a lane mask. A call that no HIP
        # pass compiles does not count: a wrapper whose `#ifdef __HIP_PLATFORM_AMD__` branch
        # ignores the mask passes nothing through it on ROCm.
        passed = {
            view.text(args[0])
            for c in view.calls
            if body.start_byte <= c.start_byte < body.end_byte
            and _callee(view, c) in SYNC
            and not hip_excluded(view, c)
            and (args := _args(c))
            and args[0].type == "identifier"
        }
        if not passed:
            return
        inside = [c for c in view.calls if body.start_byte <= c.start_byte < body.end_byte]
        # `__shfl_xor(v, laneMask)`: a name passed after the value of a shuffle is a lane index
        # or XOR offset (< 64, fine in an int), not a lane mask, unless it is also a mask argument.
        masks = {view.text(a[0]) for c in inside if _callee(view, c) in SYNC and (a := _args(c))}
        lanes = {view.text(a) for c in inside if "shfl" in _callee(view, c) for a in _args(c)[1:]}
        params = declarator.child_by_field_name("parameters")
        while params is None and declarator is not None:
            declarator = declarator.child_by_field_name("declarator")
            params = declarator.child_by_field_name("parameters") if declarator else None
        for param in params.named_children if params is not None else ():
            type_node, name = (
                param.child_by_field_name("type"),
                param.child_by_field_name("declarator"),
            )
            target = name
            while target is not None and target.type != "identifier":
                target = target.child_by_field_name("declarator")
            if type_node is None or target is None or view.text(target) not in passed:
                continue
            if view.text(name) in lanes and view.text(name) not in masks:
                continue
            if _THIRTY_TWO_BIT.match(view.text(type_node)) and not hip_excluded(view, param):
                self._report(
                    param,
                    f"lane-mask parameter `{view.text(param)}` of a warp-function wrapper is 32 "
                    f"bits; AMD wavefronts have 64 lanes: use `{MASK_TYPE}` (compatibility "
                    "header)",
                    self.replace(type_node, MASK_TYPE),
                )

    def _report(self, node, message: str, *edits) -> None:
        if not edits:
            self.report(node, message)
            return
        fix = self.fix(*edits, self.view.compat_include_edit(self.ctx), description=message)
        self.report(node, message, fix)
