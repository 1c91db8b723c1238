"""The project's own port: CUDA names its headers define, per file, in code a HIP pass compiles.

Ported projects keep a compatibility header that spells CUDA names in HIP terms under their
HIP switch (`#ifdef USE_ROCM` / `#define cudaStream_t hipStream_t`, `using cudaEvent_t =
hipEvent_t;`, `typedef`, `constexpr auto cudaSuccess = hipSuccess;`, an `inline` wrapper
named like the API, enumerators, `namespace cub = hipcub;`), or defines a CUDA-looking name of
its own (`#define CUBLAS_CHECK(x) ...`). In a file that includes such a header, a use of the
name is the project's: hipcc compiles it through the project's definition, so it is no port to
do. A file that does not include it gets no such fact, and keeps its finding.

A definition every HIP pass provably skips (`preprocessor`, with the project's macros: the
`#else` of `#ifdef __HIP_PLATFORM_AMD__`, a `-D` only CUDA builds pass) never counts. One that
spells the name in HIP terms (its text names a `hip*` / `HIP*` / `__hip*` / rocPRIM-family
identifier) counts where a HIP pass may compile it, unknown branches included: such a
definition does not compile under nvcc (no HIP headers there), so its branch is the project's
HIP branch, which the project's ROCm build takes. A project helper that names neither HIP nor
CUDA (`#define CUBLAS_CHECK(x) ...`) counts only where a HIP pass surely compiles it. One that
spells the name in CUDA's own terms (`using cudaStream_t = CUstream_st *;`) never counts: the
name keeps CUDA's meaning under hipcc, except in a file only ROCm compiles (`hip_only`: the
HIP side of the project's switch), where any definition counts: hipcc alone reads it. A forward
declaration (`struct CUmod_st;`, the tag of `typedef struct CUfunc_st *CUfunction;`) declares
CUDA's own opaque type, so it spells CUDA's terms. A CUDA word the same file defined above in
HIP terms is HIP's there (`#define cublasSetMathMode(h, m) CUBLAS_STATUS_SUCCESS` below
`#define CUBLAS_STATUS_SUCCESS HIPBLAS_STATUS_SUCCESS`: hipcc expands it to the HIP name).
Another vendor's mapping (`#define cudaStream_t musaStream_t`, in an unknown branch) does not
count either. Only declarations at file
scope count (a preprocessor branch or `extern "C" { }` keeps it there); one inside a namespace or
a function does not reach an unqualified use elsewhere.

Within one file (`own_names`), a definition's own name is never a use, whatever vendor it maps
the name to (`#define cudaMalloc acmeMalloc`, `typedef int cudaError_t;` in a CUDA-less stub),
and a use below a file-scope definition, under the same preprocessor conditions or below an
unconditional one (`preprocessor.branches`), is the file's own: hipcc compiles the use through
that definition whenever it compiles the use. The port, if any, is at the definition. The
spelling rules above reach the other uses below a definition, and every file that includes it.

A header also sees its includers (`include_context`): a name every unit that includes it has
defined before its include point (through headers it included first, or its own definitions
above the include), by a definition that counts, is the project's in the header too. Cython
files include headers through `cdef extern from` blocks (`cython_includes`).

Includes are followed as `project_macros` resolves them (`ProjectMacros._find`), through
project headers, transitively; an `#include` on a line every HIP pass skips is no edge (a
vendor header included only under its own build macro), one of unknown value is (the uses that
need it sit under the same condition in practice).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from cuda2rocm.context import include_context, preprocessor
from cuda2rocm.context.runtime_provided import include_lines

#: Files compiled only inside another one (`include_context`: they see their includers).
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc", ".pxi")
#: Declared names rules may read as CUDA names: the CUDA runtime/driver, libraries (cuBLAS,
#: cuDNN, ...), `__nv_*` types, the CUB / libcu++ namespaces, and the warp builtins.
#: CUDA's warp builtins (`__shfl_xor_sync`, `__ballot_sync`, `__activemask`, `__syncwarp`) and
#: nvcc's `__CUDA_ARCH__`: a port maps them too (`#define __shfl_xor_sync(mask, v, l, w)
#: __shfl_xor(v, l, w)`, `#define __CUDA_ARCH__ 1300` to take the CUDA code paths on ROCm).
_WARP_BUILTIN = (
    r"__(?:shfl(?:_up|_down|_xor)?|ballot|any|all|match_any|match_all|reduce_\w+)_sync\b"
    r"|__activemask\b|__syncwarp\b|__CUDA_ARCH__\b"
)
CUDA_LIKE = re.compile(rf"^(?:cu|CU|__nv|nv|NV|{_WARP_BUILTIN})")
#: Builtins only a macro maps (a function of the same name overloads, it does not replace).
_BUILTIN = re.compile(rf"^(?:{_WARP_BUILTIN})")
_MACROS = frozenset({"preproc_def", "preproc_function_def"})
#: An identifier of a HIP spelling: hipStream_t, HIPBLAS_OP_N, __hip_bfloat16, hipcub, rocprim.
_HIP_WORD = re.compile(r"(?<![A-Za-z0-9])_*(?:hip|HIP)\w|\broc(?:prim|thrust|blas|rand|fft)\b")
#: A cheap test before parsing: a file with none of these words declares no CUDA name.
_CANDIDATE = re.compile(rf"\b(?:(?:cu|CU|__nv|nv|NV)\w|{_WARP_BUILTIN})")
#: Nodes whose children are still at file scope.
_FILE_SCOPE = frozenset(
    {
        "translation_unit",
        "preproc_if",
        "preproc_ifdef",
        "preproc_elif",
        "preproc_elifdef",
        "preproc_else",
        "linkage_specification",
        "declaration_list",
    }
)

#: (name, line, spelling): "hip" when the definition names a HIP identifier, "cuda" when it
#: names only CUDA ones (the CUDA API declared again in CUDA's terms, `using cudaStream_t =
#: CUstream_st *;`), "other" when neither (a project helper: `#define CUBLAS_CHECK(x) ...`).
Definition = tuple[str, int, str]
_WORD = re.compile(r"[A-Za-z_]\w*")
_NEWLINE = re.compile("\n")
#: Tag specifiers: a forward declaration of one declares the name (`struct CUmod_st;`).
_TAGS = frozenset({"struct_specifier", "class_specifier", "union_specifier", "enum_specifier"})
_LIBRARY_WORD = re.compile(r"^(?:(?:cublas|cudnn|cusparse|curand|cufft)[A-Z]|(?:CUBLAS|CUDNN)_)")


def spelling(text: str, ported: frozenset[str] | set[str] = frozenset()) -> str:
    """ "hip", "cuda" or "other": what a definition's text (its name left out) spells.
    `ported`: names the same file defined above in HIP terms; a word among them is HIP's
    there (`#define cublasSetMathMode(h, m) CUBLAS_STATUS_SUCCESS` below `#define
    CUBLAS_STATUS_SUCCESS HIPBLAS_STATUS_SUCCESS`)."""
    if _HIP_WORD.search(text) is not None:
        return "hip"
    if ported and not ported.isdisjoint(_WORD.findall(text)):
        return "hip"
    from cuda2rocm import names

    for word in set(_WORD.findall(text)):
        if CUDA_LIKE.match(word) and (
            _LIBRARY_WORD.match(word) or names.api_name(word) is not None
        ):
            return "cuda"
    return "other"


def declarations(root, text_of: Callable) -> Iterable[tuple[object, object]]:
    """(definition node, name node) of every file-scope definition of a CUDA-like name under
    `root` (a tree-sitter node): macros, `using` aliases, typedefs, variables and constants,
    functions with a body, enums and their enumerators, namespace aliases, struct/class
    definitions. `text_of(node)` reads a node's text."""
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in _FILE_SCOPE:
            if kind == "declaration_list" and (
                node.parent is None or node.parent.type != "linkage_specification"
            ):
                continue  # a namespace body: not file scope
            stack.extend(reversed(node.named_children))
            continue
        for name in _names(node):
            if name is None or not CUDA_LIKE.match(text_of(name)):
                continue
            if kind not in _MACROS and _BUILTIN.match(text_of(name)):
                # An overload named like a builtin (`__shfl_up_sync(unsigned, at::Half, ...)`)
                # adds a signature; the builtin stays, and calls of it inside are its own.
                continue
            yield node, name


def _names(node) -> list:
    kind = node.type
    if kind in ("preproc_def", "preproc_function_def", "alias_declaration"):
        name = node.child_by_field_name("name")
        return [name] if name is not None else []
    if kind == "namespace_alias_definition":
        name = node.child_by_field_name("name") or (node.named_children or [None])[0]
        return [name] if name is not None else []
    if kind == "type_definition":
        out = [_innermost(d) for d in node.children_by_field_name("declarator")]
        spec = node.child_by_field_name("type")
        if spec is not None and spec.type in _TAGS:  # `typedef struct CUfunc_st *CUfunction;`
            tag = spec.child_by_field_name("name")
            out += [tag] if tag is not None else []
        return out
    if kind == "function_definition":
        found = node.child_by_field_name("declarator")
        while found is not None and found.type not in ("identifier", "type_identifier"):
            found = found.child_by_field_name("declarator")
        return [found] if found is not None and found.type == "identifier" else []
    if kind in ("enum_specifier", "struct_specifier", "class_specifier", "union_specifier"):
        out = []
        body = node.child_by_field_name("body")
        name = node.child_by_field_name("name")
        if name is not None and (body is not None or _forward(node)):
            out.append(name)
        if kind == "enum_specifier" and body is not None:
            out += [e.child_by_field_name("name") for e in body.named_children]
        return [n for n in out if n is not None]
    if kind == "declaration":
        out = []
        spec = node.child_by_field_name("type")
        if spec is not None:
            out += _names(spec)
        for d in node.children_by_field_name("declarator"):
            inner = _innermost(d)
            if inner is not None and inner.type == "identifier":
                out.append(inner)
        return out
    return []


def _forward(node) -> bool:
    """Whether `node` is a forward declaration at file scope (`struct CUmod_st;`): a tag
    specifier with no body standing alone, not the type of a declaration."""
    return (
        node.type in _TAGS
        and node.child_by_field_name("body") is None
        and node.parent is not None
        and node.parent.type in _FILE_SCOPE
    )


def _spelled(node, name, text_of: Callable, ported: set[str] | frozenset[str] = frozenset()) -> str:
    """`spelling` of a definition's text with its name cut out (`ported`: names the file
    mapped to HIP above it). A forward declaration spells CUDA's own terms: it declares the
    opaque type CUDA's headers declare."""
    if _forward(node):
        return "cuda"
    text = text_of(node)
    cut = name.start_byte - node.start_byte
    return spelling(text[:cut] + text[cut + (name.end_byte - name.start_byte) :], ported)


def _innermost(declarator):
    """The identifier a (possibly pointer / init / array) declarator declares."""
    node = declarator
    while node is not None and node.type not in ("identifier", "type_identifier"):
        node = node.child_by_field_name("declarator")
    return node


def definitions(
    root, text_of: Callable, data_start: Callable, seen: frozenset[str] = frozenset()
) -> tuple[Definition, ...]:
    """(name, line, spelled in HIP terms) of the file-scope CUDA-like definitions under
    `root`; `data_start(node)` gives a node's first line (1-based); `seen`: names already
    mapped to HIP where the file is compiled (its includes' port)."""
    out = []
    ported: set[str] = set(seen)
    for node, name in sorted(declarations(root, text_of), key=lambda d: d[0].start_byte):
        spelled = _spelled(node, name, text_of, ported)
        if spelled == "hip":
            ported.add(text_of(name))
        out.append((text_of(name), data_start(node), spelled))
    return tuple(out)


def counts(value, spelled: str, hip_only: bool = False) -> bool:
    """Whether a definition on a line of this value (True / None / False for some HIP pass
    compiles it / unknown / none does) and of this `spelling` ports its name for a ROCm
    build: a HIP spelling where a HIP pass may compile it; a project helper where one surely
    does; a CUDA spelling never (the name keeps CUDA's meaning). In a file only ROCm compiles
    (`hip_only`), any spelling where a HIP pass may compile it: hipcc alone reads it."""
    if spelled == "hip" or hip_only:
        return value is not False
    return spelled == "other" and value is True


def text_definitions(text: str, ported: frozenset[str] = frozenset()) -> tuple[Definition, ...]:
    """`definitions` of a file's text, parsed with the C++ front-end (only when a CUDA-like
    word occurs); `ported`: names the file sees mapped to HIP by the headers it includes."""
    if _CANDIDATE.search(text) is None:
        return ()
    from cuda2rocm.frontends import cpp
    from cuda2rocm.sources import SourceFile

    view = cpp.parse(SourceFile("<header>", "cuda", text))
    return definitions(view.tree.root_node, view.text, lambda n: n.start_point[0] + 1, ported)


def provided(
    texts: Mapping[str, str],
    find: Callable[[str, str], str | None],
    line_value: Callable[[str, int], object],
    defined: Callable[[str, str], tuple[Definition, ...]] = lambda p, t: text_definitions(t),
    includes: Callable[[str, str], tuple[tuple[str, int], ...]] = lambda p, t: include_lines(t),
    extra: Mapping[str, Sequence[tuple[str, int]]] | None = None,
    head_defined: Callable[[str, str], tuple[Definition, ...]] | None = None,
    is_header: Callable[[str], bool] = lambda p: p.endswith(HEADER_SUFFIXES),
    hip_only: Callable[[str], bool] = lambda p: False,
) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """(path -> {name: "header:line"} the project headers it includes provide, or, for a
    header, every one of its includers defines before including it (`include_context`),
    name -> the first "header:line" that provides it anywhere). `find(include, includer)`:
    the project file an `#include` names; `line_value(path, line)`: the line model's value
    there; `defined(path, text)` / `includes(path, text)`: `text_definitions` /
    `include_lines` (kept per file by the caller). `extra`: include edges (target, line) of
    files with no preprocessor (Cython's `cdef extern from`, `cython_includes`), every one
    taken. `head_defined(path, head)`: `text_definitions` of a file's text up to its last
    include (what an includer defines before an include; `defined` when not given).
    `hip_only(path)`: whether only ROCm compiles that file (`hip_only`: any spelling counts)."""
    edges: dict[str, list[tuple[str, int]]] = {}
    for path, text in texts.items():
        if "include" in text:
            found = [(find(name, path), line) for name, line in includes(path, text)]
            edges[path] = [(t, line) for t, line in found if t is not None and t != path]
    # Only headers some file includes can provide a name to another file.
    targets = {t for out in edges.values() for t, _ in out}
    targets |= {t for out in (extra or {}).values() for t, _ in out}
    own: dict[str, dict[str, str]] = {}
    sites: dict[str, list[tuple[str, int, str]]] = {}  # path -> (name, line, site) that count
    cuda_spelled: list[str] = []  # headers with a definition in CUDA terms
    for path in sorted(targets):
        if path not in texts:
            continue  # a Cython file: no C definitions
        names: dict[str, str] = {}
        for name, line, spelled in defined(path, texts[path]):
            if spelled == "cuda" and (not cuda_spelled or cuda_spelled[-1] != path):
                cuda_spelled.append(path)
            if counts(line_value(path, line), spelled, hip_only(path)):
                sites.setdefault(path, []).append((name, line, f"{path}:{line}"))
                names.setdefault(name, f"{path}:{line}")
        if names:
            own[path] = names
    for path, out in edges.items():  # an includer's definitions above its includes
        if path in targets or not out:
            continue
        head = "\n".join(texts[path].split("\n")[: max(line for _, line in out)])
        if _head_candidate(head):
            for name, line, spelled in (head_defined or defined)(path, head):
                if counts(line_value(path, line), spelled, hip_only(path)):
                    sites.setdefault(path, []).append((name, line, f"{path}:{line}"))
    if not sites:
        return {}, {}
    live_edges = {
        path: [(t, line) for t, line in out if line_value(path, line) is not False]
        for path, out in edges.items()
    }
    result = _own_includes(own, live_edges) if own else {}
    if _respell(cuda_spelled, texts, result, line_value, own, sites):
        result = _own_includes(own, live_edges)
    graph: dict[str, tuple[include_context.Event, ...]] = {}
    for path in set(live_edges) | set(extra or {}) | set(sites):
        out = [*live_edges.get(path, ()), *(extra or {}).get(path, ())]
        graph[path] = include_context.events(sites.get(path, ()), out)
    for path, names in include_context.names_before(graph, is_header).items():
        kept = result.setdefault(path, {})
        for name, site in names.items():
            kept.setdefault(name, site)
    anywhere: dict[str, str] = {}
    for path in sorted(own):
        for name, site in own[path].items():
            anywhere.setdefault(name, site)
    return result, anywhere


def _respell(
    paths: Sequence[str],
    texts: Mapping[str, str],
    seen: Mapping[str, Mapping[str, str]],
    line_value: Callable[[str, int], object],
    own: dict[str, dict[str, str]],
    sites: dict[str, list[tuple[str, int, str]]],
) -> bool:
    """Definitions in CUDA terms whose CUDA words the headers their file includes map to HIP
    (common.cuh's `#define X_CHECK(e) ... CUBLAS_STATUS_SUCCESS ...` after including the port
    header that maps `CUBLAS_STATUS_SUCCESS`): hipcc expands them to HIP names, so they count.
    Added to `own` / `sites`; whether any was."""
    added = False
    for path in paths:
        ported = frozenset(seen.get(path, ()))
        if not ported:
            continue
        for name, line, spelled in text_definitions(texts[path], ported):
            if spelled != "hip" or name in own.get(path, {}):
                continue
            if counts(line_value(path, line), spelled):
                sites.setdefault(path, []).append((name, line, f"{path}:{line}"))
                own.setdefault(path, {})[name] = f"{path}:{line}"
                added = True
    return added


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_INCLUDE_LINE = re.compile(r"^[ \t]*#[ \t]*include\b[^\n]*", re.M)


def _head_candidate(head: str) -> bool:
    """Whether a file's text above its last include may define a CUDA-like name (comments
    and `#include` lines left out): most sources hold nothing else there."""
    rest = _INCLUDE_LINE.sub("", _COMMENT.sub("", head))
    return _CANDIDATE.search(rest) is not None


def _own_includes(
    own: Mapping[str, Mapping[str, str]], live_edges: Mapping[str, list[tuple[str, int]]]
) -> dict[str, dict[str, str]]:
    """path -> the names the headers it includes (transitively) define (`own`)."""
    # Files that reach a provider (the edges' reverse closure), then each one's names.
    reach = set(own)
    changed = True
    while changed:
        changed = False
        for path, out in live_edges.items():
            if path not in reach and any(t in reach for t, _ in out):
                reach.add(path)
                changed = True
    live = {path: [t for t, _ in live_edges.get(path, ()) if t in reach] for path in reach}
    result: dict[str, dict[str, str]] = {}
    for start in sorted(reach):
        names: dict[str, str] = {}
        seen = {start}
        stack = list(reversed(live.get(start, [])))
        while stack:
            header = stack.pop()
            if header in seen:
                continue
            seen.add(header)
            for name, site in own.get(header, {}).items():
                names.setdefault(name, site)
            stack.extend(reversed(live.get(header, [])))
        if names:
            result[start] = names
    return result


@dataclass(frozen=True)
class FileNames:
    """The CUDA-like names one file defines itself (`own_names`): a use through one of them
    is the file's own name, no port to do; the definition's own name is never a use."""

    #: Start bytes of every definition's name node: that token is a definition, not a use.
    defining: frozenset[int]
    #: name -> (end character of the defined name, its line, counts for any later use).
    sites: Mapping[str, tuple[tuple[int, int, bool], ...]]
    branches: preprocessor.Branches | None
    newlines: tuple[int, ...]

    def covers(self, name: str, at: int, expanded: bool = False) -> bool:
        """Whether the use of `name` at character `at` goes through a definition in this
        file: one above it with no `#undef` in between (anywhere, for a use in a `#define`
        body, which is `expanded` where the macro is used, after the file) that `counts` for
        the whole file, or one under the same preprocessor conditions as the use (or none),
        which hipcc compiles whenever it compiles the use, whatever vendor it maps the name
        to."""
        found = self.sites.get(name)
        if not found:
            return False
        line = bisect.bisect_left(self.newlines, at) + 1
        for end, where, anywhere in found:
            if end > at and not expanded:
                break
            if end <= at and self._undone(name, where, line):
                continue
            if anywhere or self.branches is None or self.branches.encloses(where, line):
                return True
        return False

    def _undone(self, name: str, first: int, last: int) -> bool:
        return self.branches is not None and self.branches.undefined_between(name, first, last)


def own_names(view) -> FileNames:
    """The file-scope definitions of CUDA-like names in `view` (a CppView): every one reaches
    the uses below it under the same conditions; one that `counts` on its line (a HIP
    spelling a HIP pass may compile, a project helper one surely compiles) reaches every use
    below it."""
    kept = getattr(view, "_own_names", None)
    if kept is None:
        kept = view._own_names = _own_names(view)  # hip-stream and vendor-blas-dnn both ask
    return kept


def _own_names(view) -> FileNames:
    starts: set[int] = set()
    sites: dict[str, list[tuple[int, int, bool]]] = {}
    model = view.line_model
    hip_only = bool(getattr(view, "hip_only", False))
    ported: set[str] = set()
    found = sorted(declarations(view.tree.root_node, view.text), key=lambda d: d[0].start_byte)
    for node, name in found:
        if _forward(node) and not hip_only:
            # `struct CUstream_st;` outside the HIP side names CUDA's own opaque type: under
            # hipcc it is still CUDA's, not the project's port (a use to map, line and all).
            continue
        starts.add(name.start_byte)
        line = node.start_point[0] + 1
        value = True if model is None else model.value(line)
        spelled = _spelled(node, name, view.text, ported)
        if spelled == "hip":
            ported.add(view.text(name))
        anywhere = counts(value, spelled, hip_only)
        sites.setdefault(view.text(name), []).append((view.span(name)[1], line, anywhere))
    source = view.source.text
    return FileNames(
        frozenset(starts),
        {name: tuple(sorted(found)) for name, found in sites.items()},
        preprocessor.branches(source) if sites and "#" in source else None,
        tuple(m.start() for m in _NEWLINE.finditer(source)) if sites else (),
    )
