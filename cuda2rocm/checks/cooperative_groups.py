"""cooperative-groups: cooperative-groups APIs HIP 5.2 lacks, and tiles that differ on ROCm.

Cooperative groups are supported by HIP (`hip/hip_cooperative_groups.h`), but:

- HIP 5.2 lacks part of CUDA's API (each checked with hipcc for gfx90a: "no member named
  'ballot' in 'cooperative_groups::thread_block_tile<32, ...>'", "no member named
  'labeled_partition' in namespace 'cooperative_groups'"): the vote/match members of tiles
  and coalesced groups, `num_threads`, `dim_threads`/`group_dim`, `meta_group_rank/size`, the
  grid's block accessors, labeled/binary partitions, and the `cooperative_groups/*.h`
  algorithm headers (reduce, scan, memcpy_async). Error, with the HIP alternative.
- tiles larger than a wavefront do not compile: > 64 on every AMD GPU, 64 on wave32 (RDNA)
  targets ("Tiled partition with size > wavefront size. Currently not supported"). Error /
  warning.
- a grid group's `sync()` needs a cooperative launch, and a 32-thread tile is half a 64-lane
  wavefront on CDNA (info, review).

`cg::reduce` has a fix (portable target): `<cooperative_groups/reduce.h>` is kept for nvcc
only and the compatibility header provides `reduce` and its operators for HIP before ROCm 7.13
(compat_header.CG_REDUCE); the `hip` target writes that block in place of the include. A
file fixed so (its include skipped by HIP passes, the HIP side covered) is not reported again.
"""

from __future__ import annotations

import re

from cuda2rocm import facts
from cuda2rocm.checks.warp_size_32 import number
from cuda2rocm.compat_header import CG_REDUCE, HIP_CONDITION, POLYFILLS, TILE_SHFL_PREFIX
from cuda2rocm.context.preprocessor import blank_comments
from cuda2rocm.frontends.cpp import CppRule, Include, hip_excluded
from cuda2rocm.model import Edit, Severity
from cuda2rocm.targets import show

GRID = frozenset({"this_grid", "this_multi_grid"})
TILES = frozenset({"tiled_partition", "thread_block_tile"})
NAMESPACES = frozenset({"cooperative_groups", "cg"})
#: Group members CUDA has and HIP lacks (some until a release: SINCE), with what to use.
MISSING_MEMBERS = {
    "ballot": "`__ballot(pred)` (a 64-bit mask on AMD)",
    "any": "`__any(pred)`",
    "all": "`__all(pred)`",
    "match_any": "a shuffle loop",
    "match_all": "a shuffle loop",
    "num_threads": "`size()`, which both CUDA and HIP provide",
    "dim_threads": "`blockDim`",
    "group_dim": "`blockDim` / `gridDim`",
    "meta_group_rank": "`block.thread_rank() / tile.size()`",
    "meta_group_size": "`(block.size() + tile.size() - 1) / tile.size()`",
    "block_rank": "the linear index of `blockIdx`",
    "block_index": "`blockIdx`",
    "num_blocks": "the product of `gridDim`",
    "dim_blocks": "`gridDim`",
}
#: Namespace functions CUDA has and HIP lacks (some until a release: SINCE).
MISSING_FUNCTIONS = {
    "labeled_partition": "ballots: partition by hand",
    "binary_partition": "ballots: partition by hand",
    "reduce": "hipCUB's WarpReduce/BlockReduce or a shuffle loop",
    "inclusive_scan": "hipCUB's WarpScan/BlockScan",
    "exclusive_scan": "hipCUB's WarpScan/BlockScan",
    "memcpy_async": "plain loads into shared memory followed by `block.sync()`",
    "wait": "`block.sync()` (with plain loads instead of memcpy_async)",
    "wait_prior": "`block.sync()` (with plain loads instead of memcpy_async)",
    "invoke_one": "`if (g.thread_rank() == 0)`",
}
#: Members and functions HIP has from some ROCm release on (data/facts.toml): reported only
#: while `rocm-version` reaches below that release. The others are missing through ROCm 7.2.
SINCE = {
    "ballot": "cg-tile-votes",
    "any": "cg-tile-votes",
    "all": "cg-tile-votes",
    "match_any": "cg-tile-votes",
    "match_all": "cg-tile-votes",
    "num_threads": "cg-num-threads",
    "group_dim": "cg-group-dim",
    "meta_group_rank": "cg-meta-group",
    "meta_group_size": "cg-meta-group",
    "binary_partition": "cg-binary-partition",
    "reduce": "cg-reduce",
}
#: The newest release whose headers were read (data/facts.toml).
CHECKED = "checked through ROCm 7.2"
MISSING_HEADERS = ("cooperative_groups/",)
POLYFILL_OF_REDUCE = "cooperative_groups/reduce.h"
#: meta_group_* of a tile of the thread block, from members HIP 5.2 has.
META_GROUP = {
    "meta_group_rank": "({block}.thread_rank() / {tile}.size())",
    "meta_group_size": "(({block}.size() + {tile}.size() - 1) / {tile}.size())",
}
#: `tile = cg::tiled_partition<32>(parent)`: the tile's name, then the parent expression.
_TILE_OF = re.compile(
    r"\b(\w+)\s*=\s*(?:\w+\s*::\s*)*tiled_partition\s*<\s*\d+\s*>\s*\(\s*"
    r"((?:\w+\s*::\s*)*\w+\s*(?:\(\s*\))?)\s*\)"
)
#: Declarations whose text says the declared names are cooperative groups.
_GROUP_TYPES = (
    "thread_block",
    "grid_group",
    "coalesced_group",
    "thread_group",
    "tiled_partition",
    "coalesced_threads",
    "this_grid",
)
#: Tile shuffle members, which HIP's thread_block_tile restricts to arithmetic values.
TILE_SHUFFLES = frozenset({"shfl", "shfl_up", "shfl_down", "shfl_xor"})
#: Declarations of a tile with a size known at compile time (`thread_block_tile<32> t`,
#: `auto t = cg::tiled_partition<32>(block)`).
_STATIC_TILE = re.compile(r"\b(?:thread_block_tile|tiled_partition)\s*<")
#: Type words of values HIP's tile shuffles accept (std::is_integral / is_floating_point; not
#: `__half`, a class in HIP).
_ARITHMETIC_WORDS = frozenset(
    [
        "unsigned",
        "signed",
        "int",
        "long",
        "short",
        "char",
        "float",
        "double",
        "bool",
        "size_t",
        "ptrdiff_t",
        "int8_t",
        "int16_t",
        "int32_t",
        "int64_t",
        "uint8_t",
        "uint16_t",
        "uint32_t",
        "uint64_t",
    ]
)
_QUALIFIERS = frozenset(
    ["const", "volatile", "static", "register", "__shared__", "__device__", "constexpr"]
)
_NOT_TYPES = frozenset(
    ["return", "else", "case", "do", "goto", "throw", "new", "delete", "sizeof", "typedef", "using"]
)
_TEMPLATE_DECL = re.compile(
    r"^\s*(?:\w+\s*::\s*)*thread_block_tile\s*<[^<>;]*>\s*[&*]?\s*(\w+)\s*="
)


class Rule(CppRule):
    def _missing(self, name: str) -> str | None:
        """Which of the targets lack `name`: None (none: not reported), "" (all), or the
        words that say which releases (data/facts.toml)."""
        if name not in SINCE:
            return ""
        return facts.verdict(SINCE[name], self.ctx.targets)

    def _hip(self, name: str) -> str:
        """How a message names the HIP releases that lack `name`."""
        if name in SINCE:
            return f"HIP before ROCm {show(facts.fact(SINCE[name]).since)}"
        return f"HIP ({CHECKED})"

    def check(self) -> None:
        view = self.view
        provided = self._provided()
        for inc in view.includes:
            if inc.name.startswith(MISSING_HEADERS) and inc.name not in provided:
                fixable = inc.name in POLYFILLS
                self.report(
                    (inc.start, inc.end),
                    f"`<{inc.name}>` does not exist in HIP ({CHECKED}; only "
                    "hip/hip_cooperative_groups.h): "
                    + (
                        "the fix keeps it for nvcc and gives HIP a shuffle-based "
                        "`cooperative_groups::reduce` (HIP has its own from ROCm 7.13)"
                        if fixable
                        else "use hipCUB's warp/block primitives"
                    ),
                    self._polyfill_fix(inc) if fixable else None,
                )
        groups: set[str] | None = None
        tiles: set[str] | None = None
        shuffles: list = []
        for node in view.identifiers:
            name = view.text(node)
            if name in GRID and _called(node):
                self.report(
                    node,
                    f"`{name}()`: grid-wide synchronisation needs a cooperative launch "
                    "(hipLaunchCooperativeKernel on ROCm) and device support; check how this "
                    "kernel is launched",
                    severity=Severity.INFO,
                )
            elif name in TILES and node.parent is not None:
                self._tile(node, name)
            elif name == "reduce" and POLYFILL_OF_REDUCE in provided:
                continue
            elif name == "block_tile_memory" and _in_cg_scope(view, node):
                self.report(
                    node.parent,
                    "`cooperative_groups::block_tile_memory` (CUDA's scratch for tiles larger "
                    f'than 32 threads) does not exist in HIP ({CHECKED}; hipcc: "no template named '
                    "'block_tile_memory' in namespace 'cooperative_groups'\"), and HIP tiles "
                    "cannot be larger than a wavefront: reduce over the thread block (shared "
                    "memory, hipCUB's BlockReduce) instead",
                )
            elif name in MISSING_FUNCTIONS and self._missing(name) is None:
                continue
            elif name in MISSING_FUNCTIONS and _in_cg_namespace(view, node):
                self.report(
                    node.parent,
                    f'`cooperative_groups::{name}` does not exist in {self._hip(name)} (hipcc: "no '
                    f"member named '{name}' in namespace 'cooperative_groups'\"); use "
                    f"{MISSING_FUNCTIONS[name]}",
                )
            elif name in TILE_SHUFFLES and node.type == "field_identifier":
                if tiles is None:
                    tiles = _static_tiles(view)
                receiver = _receiver(view, node)
                if receiver in tiles and (call := self._other_type_shuffle(node, name)):
                    shuffles.append((node, name, receiver, call))
            elif name in MISSING_MEMBERS and node.type == "field_identifier":
                if self._missing(name) is None:
                    continue
                if groups is None:
                    groups = _group_variables(view)
                receiver = _receiver(view, node)
                if receiver in groups:
                    self.report(
                        node,
                        f"`{receiver}.{name}()` is not provided by the cooperative groups of "
                        f"{self._hip(name)} "
                        f"(hipcc: \"no member named '{name}'\"); use {MISSING_MEMBERS[name]}",
                        self._meta_group_fix(node, name, receiver),
                    )

        if shuffles:
            self._report_shuffles(shuffles)

    def _other_type_shuffle(self, node, name: str):
        """The call `tile.NAME(value, n)` when `value`'s declared type is neither integral nor
        floating point (HIP's member static_asserts one of those); None when it is, or unknown
        (`auto`, a template parameter, not declared in the file before the call)."""
        call = node.parent.parent if node.parent is not None else None
        if call is None or call.type != "call_expression":
            return None
        args = call.child_by_field_name("arguments")
        values = args.named_children if args is not None else []
        if len(values) != 2:
            return None
        before = self.view.source.text[: call.start_byte]
        kind = _declared_type(self.view.text(values[0]), before)
        return call if kind == "other" else None

    def _report_shuffles(self, shuffles) -> None:
        """One finding for the file's tile shuffles of other types; the fix calls the
        compatibility header's `cuda2rocm_tile_*` for each (both targets include it)."""
        view = self.view
        first, name, receiver, _ = shuffles[0]
        edits = []
        for _, member, tile, call in shuffles:
            args = view.text(call.child_by_field_name("arguments"))[1:-1]
            edits.append(
                self.replace(call, f"{TILE_SHFL_PREFIX.replace('shfl', member)}({tile}, {args})")
            )
        fix = None
        if not (view.torch_built or view.hipified):
            compat = view.compat_include_edit(self.ctx)
            if compat is not None or view.includes_header(self.ctx.compat_header):
                fix = self.fix(
                    compat,
                    *edits,
                    description="shuffle through the compatibility header's cuda2rocm_tile_*",
                )
        times = f" ({len(shuffles)} calls)" if len(shuffles) > 1 else ""
        self.report(
            first.parent,
            f"`{receiver}.{name}(...)` shuffles a value that is neither an integer nor a "
            f"floating-point type{times}: HIP's thread_block_tile shuffles static_assert one of "
            'those ("Neither an integer or float type.", HIP 5.2 and later), CUDA\'s take any '
            "trivially copyable type; shuffle it as 32-bit words",
            fix,
            severity=Severity.WARNING,
        )

    def _provided(self) -> set[str]:
        """Algorithm headers whose API this file already gets for HIP: its include is skipped by
        every HIP pass and the file includes the compatibility header (portable fix), or the file
        holds the polyfill itself (hip fix)."""
        view = self.view
        if "CUDA2ROCM_CG_REDUCE" in view.source.text:  # the hip fix's block
            return {POLYFILL_OF_REDUCE}
        if not view.includes_header(self.ctx.compat_header):
            return set()
        return {
            inc.name
            for inc in view.includes
            if inc.name in POLYFILLS and hip_excluded(view, inc.node)
        }

    def _polyfill_fix(self, inc: Include):
        view = self.view
        if view.torch_built or view.hipified or hip_excluded(view, inc.node):
            return None
        directive = view.source.text[inc.start : inc.end]
        if self.ctx.target == "hip":
            return self.fix(
                Edit(inc.start, inc.end, CG_REDUCE.rstrip("\n"), directive),
                description="cooperative_groups::reduce for HIP, in place",
            )
        compat = view.compat_include_edit(self.ctx)
        if compat is None and not view.includes_header(self.ctx.compat_header):
            return None  # a file the header may not go into
        block = f"#if !({HIP_CONDITION})\n{directive}\n#endif"
        return self.fix(
            compat,
            Edit(inc.start, inc.end, block, directive),
            description=f"<{inc.name}> for nvcc only; {self.ctx.compat_header} covers HIP",
        )

    def _meta_group_fix(self, node, name: str, tile: str):
        """`tile.meta_group_rank()` / `meta_group_size()` of a tile partitioned from the thread
        block: the same number from members both HIP 5.2 and CUDA have (CUDA: the tile's rank
        among the tiles of its parent; a thread block's rank is linear)."""
        if name not in META_GROUP:
            return None
        view = self.view
        call = node.parent.parent  # field_expression -> call_expression
        # comments blanked: "warps in a block, and" is not a declaration of `block`
        before = blank_comments(view.source.text[: call.start_byte])
        parents = [m[2] for m in _TILE_OF.finditer(before) if m[1] == tile]
        if not parents or not _is_thread_block(parents[-1], before):
            return None
        parent = parents[-1].strip()
        new = META_GROUP[name].format(block=parent, tile=tile)
        return self.fix(self.replace(call, new), description=f"compute {name} from the block")

    def _tile(self, node, name: str) -> None:
        view = self.view
        args = node.parent.child_by_field_name("arguments")
        if args is None or node.parent.type not in ("template_function", "template_type"):
            return
        sizes = [number(view, a) for a in args.named_children]
        size = next((s for s in sizes if s is not None), None)
        targets = self.ctx.targets
        if size == 32:
            half = facts.verdict("warp-size-64", targets)
            if half is None:
                return  # every target runs 32-lane wavefronts: the tile is the whole wave
            self.report(
                node.parent,
                f"`{name}<32>` is a full warp on NVIDIA but half a 64-lane wavefront on "
                f"AMD CDNA GPUs{facts.said(half)}; check code that treats the tile as the "
                "whole warp",
                severity=Severity.INFO,
            )
        elif size is not None and size > 32:
            wave32 = size == 64
            where = facts.verdict("tile-wider-than-wave", targets) if wave32 else ""
            if where is None:
                return  # no wave32 target: a 64-thread tile is one wavefront everywhere
            self.report(
                node.parent,
                f"`{name}<{size}>` is larger than a wavefront "
                + (
                    f"on wave32 (RDNA) AMD GPUs{facts.said(where)}"
                    if wave32
                    else "on every AMD GPU"
                )
                + ': HIP fails with "Tiled partition with size > wavefront size. '
                'Currently not supported"; use the thread block or tiles of at most 32',
                severity=Severity.WARNING if wave32 else None,
            )


def _is_thread_block(parent: str, before: str) -> bool:
    """Whether `parent` (a tile's parent expression) is the thread block: `this_thread_block()`
    itself, or a variable last declared as a `thread_block` before the use."""
    parent = parent.strip()
    if re.fullmatch(r"(?:\w+\s*::\s*)*this_thread_block\s*\(\s*\)", parent):
        return True
    if not re.fullmatch(r"\w+", parent):
        return False
    declared = re.findall(
        rf"((?:\w+\s*::\s*)*\w+)\s*(?:const\s*)?&?\s*\b{parent}\b\s*[=;,)]", before
    )
    return (
        bool(declared)
        and re.sub(r"\s", "", declared[-1]).split("::")[-1]
        in (
            "thread_block",
            "auto",
        )
        and _auto_is_block(parent, before, declared[-1])
    )


def _auto_is_block(parent: str, before: str, kind: str) -> bool:
    if kind.strip() != "auto":
        return True
    init = re.findall(rf"\b{parent}\s*=\s*([^;]*);", before)
    return bool(init) and "this_thread_block" in init[-1]


def _called(node) -> bool:
    current = node
    while current.parent is not None and current.parent.type == "qualified_identifier":
        current = current.parent
    parent = current.parent
    return parent is not None and parent.type == "call_expression"


def _in_cg_namespace(view, node) -> bool:
    parent = node.parent
    if parent is None or parent.type != "qualified_identifier":
        return False
    scope = parent.child_by_field_name("scope")
    return scope is not None and view.text(scope) in NAMESPACES and _called(node)


def _in_cg_scope(view, node) -> bool:
    """`cg::name` / `cooperative_groups::name`, called or not (a type)."""
    parent = node.parent
    while parent is not None and parent.type != "qualified_identifier":
        parent = parent.parent if parent.type in ("template_type",) else None
    if parent is None:
        return False
    scope = parent.child_by_field_name("scope")
    return scope is not None and view.text(scope) in NAMESPACES


def _receiver(view, node) -> str | None:
    """`tile` in `tile.ballot(...)` (a call of a member of a plain variable)."""
    field = node.parent
    if field is None or field.type != "field_expression":
        return None
    if field.parent is None or field.parent.type != "call_expression":
        return None
    obj = field.child_by_field_name("argument")
    return view.text(obj) if obj is not None and obj.type == "identifier" else None


def _group_variables(view) -> set[str]:
    """Variables and parameters declared as (or initialised from) cooperative groups."""
    return _declared_where(view, lambda text: any(t in text for t in _GROUP_TYPES))


def _declared_where(view, matches) -> set[str]:
    """Names declared by declarations and parameters whose text `matches`, and by
    `cg::thread_block_tile<32> warp = ...` statements (parsed as comparisons in a body)."""
    names: set[str] = set()
    stack = [view.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("comment", "string_literal", "raw_string_literal", "char_literal"):
            continue
        if node.type in ("declaration", "parameter_declaration"):
            if matches(view.text(node)):
                names.update(_declared(view, node))
        elif node.type == "expression_statement":
            names.update(_TEMPLATE_DECL.findall(view.text(node)))
        stack.extend(node.children)
    return names


def _declared(view, node) -> list[str]:
    found = []
    for decl in node.children_by_field_name("declarator"):
        while decl is not None and decl.type != "identifier":
            decl = decl.child_by_field_name("declarator")
        if decl is not None:
            found.append(view.text(decl))
    return found


def _static_tiles(view) -> set[str]:
    """Variables and parameters declared as tiles of a compile-time size."""
    return _declared_where(view, lambda text: _STATIC_TILE.search(text) is not None)


def _declared_type(value: str, before: str) -> str:
    """ "arithmetic", "other" or "unknown": the type of the variable `value` starts with, from
    its last declaration in `before` (a literal number is arithmetic)."""
    value = value.strip()
    if re.fullmatch(r"[-+]?[\d.]+(?:[eE][-+]?\d+)?[uUlLfF]*", value):
        return "arithmetic"
    root = re.match(r"\w+", value)
    if root is None:
        return "unknown"
    declarations = re.findall(
        rf"((?:\b[A-Za-z_][\w:]*(?:\s*<[^<>;()]*>)?\s+)+)[&*\s]*\b{root[0]}\b\s*(?=[=;,)\[{{(])",
        before,
    )
    for declaration in reversed(declarations):
        words = [w for w in re.findall(r"[\w:]+(?:\s*<[^<>;()]*>)?", declaration) if w]
        words = [w for w in words if w not in _QUALIFIERS]
        if not words or words[-1] in _NOT_TYPES or words[0] in _NOT_TYPES:
            continue
        if all(w in _ARITHMETIC_WORDS for w in words):
            return "arithmetic"
        kind = words[-1].split("<")[0].split("::")[-1]
        if kind == "auto" or re.search(
            rf"template\s*<[^>]*\b(?:typename|class)\s+{kind}\b", before
        ):
            return "unknown"
        return "other"
    return "unknown"
