"""The project's own macros, read once per run: header `#define`s and build `-D` flags.

Two kinds of facts feed the preprocessor model (`preprocessor.py`):

- **Headers.** Every C/C++ file of the run is scanned per ROCm pass (with the compiler facts and
  the build's flags, never with these project facts, so there is no circularity). A macro whose
  every `#define` sits in code the HIP pass skips (`#ifndef __HIP_PLATFORM_AMD__` /
  `#define PTX_AVAILABLE`) is undefined on ROCm; one with a `#define` that may be compiled is
  unknown, unless the file includes the defining header, in which case the header's end state
  (`#ifdef __HIP_PLATFORM_AMD__ / #define WARP 64`) applies from the `#include` on.
- **Build flags** (`build_defines.py`): `-DX` / `define_macros` that setup.py or CMake passes only
  for ROCm (defined), only for CUDA (not defined by the build), or always.

The facts are a pure function of the files' bytes, so `digest` (part of every C++ file's cache
key) changes exactly when a header or a build file changes what the model would say.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from cuda2rocm.context import (
    build_defines,
    cython_includes,
    device_functions,
    hip_only,
    library_users,
    preprocessor,
    project_port,
    runtime_provided,
    vendor_switches,
    warp_masks,
)
from cuda2rocm.context.preprocessor import PASSES, UNKNOWN, Val

#: An include chain deeper than this is treated as unknown (and cycles are cut).
MAX_DEPTH = 40


def _norm(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


@dataclass
class ProjectMacros:
    #: path -> text of every C/C++ file of the run (dropped after `build`).
    texts: dict[str, str] = field(default_factory=dict)
    torch_built: Callable[[str], bool] | None = None
    defines: build_defines.BuildDefines = field(default_factory=build_defines.BuildDefines)
    #: pass -> macro -> (may some #define of it be compiled, first site "path:line").
    sites: dict[str, dict[str, tuple[bool, str]]] = field(default_factory=dict)
    #: (path, pass) -> the macro state at the end of that header.
    states: dict[tuple[str, str], dict[str, Val]] = field(default_factory=dict)
    #: basename -> paths, for includes not found beside the includer.
    by_name: dict[str, list[str]] = field(default_factory=dict)
    paths: frozenset[str] = frozenset()
    #: Warp-size constants (`kWarpSize`) whose every definition a ROCm build may compile is
    #: the wavefront, not a bare 32 (`wavefront_constants`): name -> the first such site.
    wavefronts: dict[str, str] = field(default_factory=dict)
    #: Ported lane masks (`warp_masks`): macros that drop their mask argument on ROCm, and
    #: mask types that are 64-bit there: name -> the first such site.
    mask_free_macros: dict[str, str] = field(default_factory=dict)
    wide_mask_types: dict[str, str] = field(default_factory=dict)
    #: CUDA device intrinsics HIP lacks that the project defines for HIP builds
    #: (`device_functions.provided`): name -> the first such site.
    device_functions: dict[str, str] = field(default_factory=dict)
    #: Headers every include site of which comes after the HIP runtime header
    #: (context.runtime_provided).
    runtime_first: frozenset[str] = frozenset()
    #: Files whose own project includes bring the HIP runtime in (context.runtime_provided).
    runtime_included: frozenset[str] = frozenset()
    #: Files that need CUTLASS / CuTe (`library_users`): path -> why their findings follow one
    #: decision; and the files (-> line) whose library include stays reported.
    library_users: dict[str, str] = field(default_factory=dict)
    library_kept: dict[str, int] = field(default_factory=dict)
    #: Headers no ROCm compile includes (`unincluded_headers`): path -> why.
    unincluded: dict[str, str] = field(default_factory=dict)
    #: Feature macros (`FAISS_USE_FULL_FLOAT16`) defined under a `__CUDA_ARCH__` test, every
    #: other mention of which in the run is a test with an `#else` (`fallback_features`).
    fallback_features: frozenset[str] = frozenset()
    #: The project's own port (context.project_port): path -> CUDA-like names the project
    #: headers it includes define in code a HIP pass may compile -> the defining "header:line";
    #: and every such name of the run -> its first site.
    ported: dict[str, dict[str, str]] = field(default_factory=dict)
    port_sites: dict[str, str] = field(default_factory=dict)
    #: Files only a ROCm build compiles (context.hip_only): the HIP side of a vendor switch.
    hip_only: frozenset[str] = frozenset()
    digest: str = ""

    # -- building ------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        texts: Mapping[str, str],
        defines: build_defines.BuildDefines,
        torch_built: Callable[[str], bool] | None = None,
        others: Iterable[str] = (),
        unbuilt: Mapping[Path, str] | None = None,
        memo=None,
        hashes: Mapping[str, str] | None = None,
        cython: Mapping[str, str] | None = None,
    ) -> ProjectMacros:
        """`others`: texts of the run's other files (Python) that may hold C++ with
        `#include` lines (`load_inline` sources): a header they name is never `unincluded`.
        `unbuilt`: sources no build of the run compiles (`context.unbuilt`), resolved path ->
        why: an `#include` in one of them reaches no ROCm compile. `memo` (warm.FactsMemo)
        with `hashes` (path -> content hash of its text): what each file holds on its own
        (warp-size definitions, feature macros) is kept per file, so one changed file is the
        only one searched again. `cython`: path -> text of the run's Cython files, whose
        `cdef extern from` blocks include headers (`cython_includes`)."""
        kept = {_norm(p): t for p, t in texts.items() if "#" in t}
        self = cls(texts=kept, torch_built=torch_built)
        self.paths = frozenset(self.texts)
        for path in self.texts:
            self.by_name.setdefault(PurePosixPath(path).name, []).append(path)
        switches = vendor_switches.judge(kept, self._find, torch_built)
        self.defines = defines.with_cuda_only(switches.cuda_only, switches.rocm, switches.valued)
        own = self._own = _PerFile(memo, {_norm(p): h for p, h in (hashes or {}).items()})
        self._scan_key = (self._defines_key(),)
        # A header with no directive can still define the warp constant (`wavefront_constants`).
        plain = {_norm(p): t for p, t in texts.items() if "#" not in t and _mentions_warp(t)}
        self.sites = {p: {} for p in PASSES}
        self._in_progress: set[tuple[str, str]] = set()
        for path, text in self.texts.items():
            if "define" not in text:
                continue
            built = bool(torch_built and torch_built(path))
            for p in preprocessor.passes_for(path, built):
                scan = self._scan(path, p)
                for name, line, live in scan.defines:
                    may, where = self.sites[p].get(name, (False, ""))
                    if not where or (live is not False and not may):
                        where = f"{path}:{line}"
                    self.sites[p][name] = (may or live is not False, where)
        reachable = self._hip_reachable()
        self.wavefronts = wavefront_constants(self, plain, reachable, own.warp_definitions)
        self.mask_free_macros = warp_masks.mask_free_macros(self.texts, reachable, own.mask_macros)
        self.wide_mask_types = warp_masks.wide_mask_types(self.texts, reachable, own.mask_types)
        self.device_functions = device_functions.provided(
            self.texts, reachable, own.device_definitions
        )
        self.runtime_first = runtime_provided.runtime_first(self.texts, self._find, own.includes)
        self.runtime_included = runtime_provided.runtime_included(
            self.texts, self._find, own.include_lines, self._line_value()
        )
        sites = [sorted(self.sites[p].items()) for p in PASSES]
        self._model_key = (*self._scan_key, hashlib.blake2b(repr(sites).encode()).hexdigest())
        extra = self._cython_edges({_norm(p): t for p, t in (cython or {}).items()})
        # A header a Cython file includes is included (as if an `#include` named it).
        named = [f'#include "{PurePosixPath(t).name}"' for out in extra.values() for t, _ in out]
        self.unincluded = unincluded_headers(self, [*others, *named], unbuilt or {})
        self.fallback_features = fallback_features({**self.texts, **plain}, own)
        line_value = self._line_value()  # one set of line models for both
        self.library_users, self.library_kept = library_users.users(
            self.texts, self._find, own.include_lines, line_value
        )
        self.hip_only = hip_only.files(self.texts, self._find, own.include_lines, line_value, extra)
        self.ported, self.port_sites = project_port.provided(
            self.texts,
            self._find,
            line_value,
            own.definitions,
            own.include_lines,
            extra,
            own.head_definitions,
            hip_only=self.hip_only.__contains__,
        )
        del self._in_progress, self._own, self._scan_key, self._model_key  # not facts
        self.texts = {}
        self.torch_built = None
        self.digest = self._digest()
        return self

    def _line_value(self) -> Callable[[str, int], preprocessor.Tri]:
        """(path, line) -> the line model's value there (with the project's facts)."""
        models: dict[str, preprocessor.LineModel] = {}

        def value(path: str, line: int) -> preprocessor.Tri:
            if path not in models:
                models[path] = self.line_model(path)
            return models[path].value(line)

        return value

    def _hip_reachable(self) -> Callable[[str, int], bool]:
        """(path, line) -> whether some HIP pass may compile that line of a project file."""
        models: dict[str, preprocessor.LineModel] = {}

        def reachable(path: str, line: int) -> bool:
            if path not in models:
                built = bool(self.torch_built and self.torch_built(path))
                passes = [p for p in preprocessor.passes_for(path, built) if p != "cxx"]
                models[path] = preprocessor.combine(self._scan(path, p) for p in passes)
            return models[path].value(line) is not False

        return reachable

    def _scan(self, path: str, pass_name: str) -> preprocessor.Scan:
        """One pass over a project file, kept per file (`_PerFile.scan`) with the header
        states its includes resolved to: kept while each include still resolves to the
        same state."""
        built = bool(self.torch_built and self.torch_built(path))

        def compute() -> tuple[preprocessor.Scan, tuple]:
            seen: list[tuple[str, str, str, Mapping[str, Val] | None]] = []

            def resolve(include: str, includer: str, pass_: str) -> Mapping[str, Val] | None:
                state = self._resolve_building(include, includer, pass_)
                seen.append((include, includer, pass_, state))
                return state

            lookup = self._build_lookup(pass_name, preprocessor.base_lookup(pass_name, built))
            scan = preprocessor.scan(
                self.texts[path],
                lookup,
                path,
                resolve,
                pass_name,
                preprocessor.hipify_renames(built),
            )
            return scan, tuple(seen)

        def valid(kept: tuple) -> bool:
            return all(self._resolve_building(i, r, p) == state for i, r, p, state in kept[1])

        own = getattr(self, "_own", None) or _PerFile()
        key = (pass_name, built, *getattr(self, "_scan_key", (self._defines_key(),)))
        scan = own.scan(path, key, compute, valid)[0]
        self.states[(path, pass_name)] = scan.state
        return scan

    def line_model(self, path: str) -> preprocessor.LineModel:
        """`preprocessor.model` of a project file with these facts, kept per file (content,
        torch-built, build flags, macro sites) while its includes resolve to the same
        states (during `build`; directly otherwise)."""
        built = bool(self.torch_built and self.torch_built(path))

        def compute() -> tuple[preprocessor.LineModel, tuple]:
            seen = _Recording(self)
            return preprocessor.model(self.texts[path], path, built, seen), tuple(seen.seen)

        def valid(kept: tuple) -> bool:
            return all(self.resolve(i, r, p) == state for i, r, p, state in kept[1])

        own, key = getattr(self, "_own", None), getattr(self, "_model_key", None)
        if own is None or key is None:
            return compute()[0]
        return own.model(path, (built, *key), compute, valid)[0]

    def _defines_key(self) -> str:
        """What the build's flags say, as `_build_lookup` reads them (part of a scan's key)."""
        d = self.defines
        facts = (sorted(d.rocm.items()), sorted(d.unknown), sorted(d.cuda_only.items()))
        return hashlib.blake2b(repr(facts).encode(), digest_size=12).hexdigest()

    def _resolve_building(self, include: str, includer: str, pass_name: str):
        target = self._find(include, includer)
        if target is None:
            return None
        key = (target, pass_name)
        if key in self.states:
            return self.states[key]
        if key in self._in_progress or len(self._in_progress) > MAX_DEPTH:
            return None
        self._in_progress.add(key)
        try:
            return self._scan(target, pass_name).state
        finally:
            self._in_progress.discard(key)

    def _cython_edges(self, cython: Mapping[str, str]) -> dict[str, list[tuple[str, int]]]:
        """path -> (project file, line) of each include of a Cython file, in order: the header
        a `cdef extern from` block names, the `.pxi` an `include` inserts (beside the file,
        else the one Cython file of the run whose path ends with the name)."""
        edges: dict[str, list[tuple[str, int]]] = {}
        for path, text in cython.items():
            out = []
            for kind, name, line in cython_includes.includes(text):
                if kind == "extern":
                    target = self._find(name, path)
                else:
                    target = _find_among(name, path, cython)
                if target is not None and target != path:
                    out.append((target, line))
            if out:
                edges[path] = out
        return edges

    def _find(self, include: str, includer: str) -> str | None:
        """The project file an `#include` names: beside the includer, else the one file of the
        run whose path ends with it (several candidates: unknown). Asked once per include
        and folder (the run's files are fixed once `build` has listed them)."""
        folder = os.path.dirname(includer)
        found = self.__dict__.setdefault("_found", {})
        key = (include, folder)
        if key not in found:
            found[key] = self._find_in(include, folder)
        return found[key]

    def _find_in(self, include: str, folder: str) -> str | None:
        beside = _norm(os.path.join(folder, include))
        if beside in self.paths:
            return beside
        suffix = "/" + _norm(include).lstrip("./")
        candidates = [
            p
            for p in self.by_name.get(PurePosixPath(include).name, ())
            if ("/" + p).endswith(suffix)
        ]
        return candidates[0] if len(candidates) == 1 else None

    def _digest(self) -> str:
        h = hashlib.sha256()
        h.update(repr(self.defines.facts()).encode())
        h.update(repr(sorted(self.wavefronts.items())).encode())
        h.update(repr(sorted(self.mask_free_macros.items())).encode())
        h.update(repr(sorted(self.wide_mask_types.items())).encode())
        h.update(repr(sorted(self.device_functions.items())).encode())
        h.update(repr(sorted(self.runtime_first)).encode())
        h.update(repr(sorted(self.runtime_included)).encode())
        h.update(repr(sorted(self.library_users.items())).encode())
        h.update(repr(sorted(self.library_kept.items())).encode())
        h.update(repr(sorted(self.unincluded.items())).encode())
        h.update(repr(sorted(self.fallback_features)).encode())
        h.update(repr(sorted((p, sorted(n.items())) for p, n in self.ported.items())).encode())
        h.update(repr(sorted(self.port_sites.items())).encode())
        h.update(repr(sorted(self.hip_only)).encode())
        for p in PASSES:
            h.update(repr(sorted(self.sites[p].items())).encode())
        for key in sorted(self.states):
            h.update(repr((key, sorted(self.states[key].items()))).encode())
        return h.hexdigest()[:16]

    # -- use -----------------------------------------------------------------------------------
    def resolve(self, include: str, includer: str, pass_name: str) -> Mapping[str, Val] | None:
        target = self._find(include, _norm(includer))
        return None if target is None else self.states.get((target, pass_name))

    def lookup(self, pass_name: str, below: Callable[[str], Val]) -> Callable[[str], Val]:
        """Facts for one pass: build flags, then project headers, then `below` (compiler)."""
        sites = self.sites.get(pass_name, {})
        defined = self.defines

        def fact(name: str) -> Val:
            if below(name).defined is True:
                return below(name)  # the compiler or torch defines it: a project #define or
                # -D of the same name does not undefine it
            if name in defined.rocm:
                return defined.rocm[name]
            if name in defined.unknown:
                return UNKNOWN
            site = sites.get(name)
            if site is not None and site[0]:
                return UNKNOWN
            base = self._build_lookup(pass_name, below)(name)
            if site is not None and base.defined is None:
                return Val(False, 0, 0, f"`{name}` is defined only where ROCm skips it, {site[1]}")
            return base

        return fact

    def _build_lookup(self, pass_name: str, below: Callable[[str], Val]) -> Callable[[str], Val]:
        defined = self.defines

        def fact(name: str) -> Val:
            base = below(name)
            if base.defined is True:
                return base  # a compiler/torch fact: no need to cite the build
            flag = defined.rocm.get(name)
            if flag is not None:
                return flag
            if name in defined.unknown:
                return UNKNOWN
            if name in defined.cuda_only and base.defined is None:
                return Val(False, 0, 0, defined.cuda_only[name])
            return base

        return fact


def _find_among(include: str, includer: str, paths: Mapping[str, str]) -> str | None:
    """The file of `paths` an include names: beside the includer, else the one whose path
    ends with it (several, or none: None)."""
    beside = _norm(os.path.join(os.path.dirname(includer), include))
    if beside in paths:
        return beside
    suffix = "/" + _norm(include).lstrip("./")
    found = [p for p in paths if ("/" + p).endswith(suffix)]
    return found[0] if len(found) == 1 else None


# -- feature macros of an architecture test ---------------------------------------------------
_ARCH_GROUP = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif|define)\b([^\n]*)", re.M)


def _groups(text: str):
    """(directive, rest, offset, group id, the group has an #else/#elif) for every
    conditional directive and #define of a file; group ids count `#if`s."""
    found = []
    stack: list[int] = []
    has_other: dict[int, bool] = {}
    count = 0
    for m in _ARCH_GROUP.finditer(text):
        word = m.group(1)
        if word in ("if", "ifdef", "ifndef"):
            count += 1
            stack.append(count)
            has_other[count] = False
        elif word in ("elif", "else") and stack:
            has_other[stack[-1]] = True
        group = stack[-1] if stack else 0
        found.append((word, m.group(2), m.start(), group))
        if word == "endif" and stack:
            stack.pop()
    return [(w, r, o, g, has_other.get(g, False)) for w, r, o, g in found]


class _Recording:
    """The project's facts as `preprocessor.model` reads them, noting each include's state."""

    def __init__(self, project: ProjectMacros) -> None:
        self.project = project
        self.seen: list[tuple[str, str, str, Mapping[str, Val] | None]] = []

    def lookup(self, pass_name: str, below: Callable[[str], Val]) -> Callable[[str], Val]:
        return self.project.lookup(pass_name, below)

    def resolve(self, include: str, includer: str, pass_name: str) -> Mapping[str, Val] | None:
        state = self.project.resolve(include, includer, pass_name)
        self.seen.append((include, includer, pass_name, state))
        return state


class _PerFile:
    """What one file's text says on its own, kept per file in `memo` (warm.FactsMemo) under
    its content hash; computed directly for a file with no hash or without a memo."""

    def __init__(self, memo=None, hashes: Mapping[str, str] | None = None) -> None:
        self.memo = memo
        self.hashes = hashes or {}

    def _kept(self, kind: str, path: str, extra: tuple, compute):
        digest = self.hashes.get(path)
        if self.memo is None or digest is None:
            return compute()
        return self.memo.per_file(kind, (digest, *extra), compute)

    def warp_definitions(self, path: str, text: str) -> tuple:
        return self._kept("pm-warp", path, (), lambda: _warp_definitions(text))

    def scan(self, path: str, extra: tuple, compute, valid) -> tuple:
        """A preprocessor pass over the file (`ProjectMacros._scan`), checked by `valid` on
        every call: two calls in one run may see different include states (a cycle)."""
        digest = self.hashes.get(path)
        if self.memo is None or digest is None:
            return compute()
        key = (digest, path, *extra)
        return self.memo.per_file("pm-scan", key, compute, valid, again=True)

    def model(self, path: str, extra: tuple, compute, valid) -> tuple:
        """A file's line model with the project's facts (`ProjectMacros.line_model`)."""
        digest = self.hashes.get(path)
        if self.memo is None or digest is None:
            return compute()
        return self.memo.per_file("pm-model", (digest, path, *extra), compute, valid)

    def mask_macros(self, path: str, text: str) -> tuple:
        return self._kept(
            "pm-mask-macros", path, (), lambda: warp_masks.mask_macro_definitions(text)
        )

    def device_definitions(self, path: str, text: str) -> tuple:
        return self._kept("pm-device-fns", path, (), lambda: device_functions.definitions(text))

    def mask_types(self, path: str, text: str) -> tuple:
        return self._kept("pm-mask-types", path, (), lambda: warp_masks.mask_type_definitions(text))

    def include_lines(self, path: str, text: str) -> tuple[tuple[str, int], ...]:
        lines = runtime_provided.include_lines
        return self._kept("pm-include-lines", path, (), lambda: lines(text))

    def definitions(self, path: str, text: str) -> tuple:
        return self._kept("pm-port", path, (), lambda: project_port.text_definitions(text))

    def head_definitions(self, path: str, head: str) -> tuple:
        """`project_port.text_definitions` of a file's text up to its last include."""
        extra = (head.count("\n"),)
        return self._kept("pm-port-head", path, extra, lambda: project_port.text_definitions(head))

    def includes(self, path: str, text: str) -> tuple[str, ...]:
        return self._kept("pm-includes", path, (), lambda: runtime_provided.included_names(text))

    def arch_features(self, path: str, text: str) -> frozenset[str]:
        return self._kept("pm-arch", path, (), lambda: _arch_features(text))

    def misused(self, path: str, text: str, candidates: frozenset[str]) -> frozenset[str]:
        key = (tuple(sorted(candidates)),)
        return self._kept("pm-misused", path, key, lambda: _misused(text, candidates))


def _arch_features(text: str) -> frozenset[str]:
    """Macros `#define`d directly in the first branch of an `#if` on `__CUDA_ARCH__`."""
    if "__CUDA_ARCH__" not in text:
        return frozenset()
    candidates: set[str] = set()
    arch_groups: set[int] = set()
    in_first: set[int] = set()
    for word, rest, _, group, _ in _groups(text):
        if word in ("if", "ifdef") and "__CUDA_ARCH__" in rest:
            arch_groups.add(group)
            in_first.add(group)
        elif word in ("elif", "else"):
            in_first.discard(group)
        elif word == "define" and group in arch_groups and group in in_first:
            m = re.match(r"\s+([A-Za-z_]\w*)\b(?!\()", rest)
            if m:
                candidates.add(m.group(1))
    return frozenset(candidates)


def _misused(raw: str, candidates: frozenset[str]) -> frozenset[str]:
    """Those of `candidates` that `raw` mentions outside a test with an `#else` (or its own
    `#define`/`#undef` name): a use that a fallback does not cover."""
    if not any(c in raw for c in candidates):
        return frozenset()  # a mention holds the name itself
    words = re.compile(r"\b(" + "|".join(sorted(map(re.escape, candidates))) + r")\b")
    if not words.search(raw):
        return frozenset()
    bad: set[str] = set()
    text = preprocessor.blank_comments(raw)  # `#endif // FEATURE` is no use
    allowed: list[tuple[int, int]] = []  # spans of directives where a mention is fine
    for word, rest, offset, _, other in _groups(text):
        line_end = text.find("\n", offset)
        end = len(text) if line_end < 0 else line_end
        if word == "ifndef" or (word in ("if", "ifdef", "elif") and other):
            allowed.append((offset, end))  # ROCm compiles the side without the feature
        elif word == "define":
            m = re.match(r"\s+([A-Za-z_]\w*)", rest)
            if m and m.group(1) in candidates:  # its own name, not its body
                allowed.append((offset, offset + len(word) + 1 + m.end()))
    for m in words.finditer(text):
        if not any(a <= m.start() < b for a, b in allowed):
            bad.add(m.group(1))
    return frozenset(bad)


def fallback_features(texts: Mapping[str, str], own: _PerFile | None = None) -> frozenset[str]:
    """Macros `#define`d (object-like) directly in the first branch of an `#if` on
    `__CUDA_ARCH__` (faiss's `#if __CUDA_ARCH__ >= 530` / `#define FAISS_USE_FULL_FLOAT16 1`)
    and mentioned anywhere else in the run only in the condition of an `#if`/`#ifdef`/`#elif`
    whose group has an `#else`/`#elif` (or in another `#define`/`#undef` of it). On ROCm the
    macro stays undefined, so each such test compiles its other side: a fallback, not a gap.
    A use in code, in a macro body, or in a test with nothing on the other side disqualifies."""
    own = own or _PerFile()
    candidates: frozenset[str] = frozenset().union(
        *(own.arch_features(path, text) for path, text in texts.items())
    )
    if not candidates:
        return frozenset()
    bad: frozenset[str] = frozenset().union(
        *(own.misused(path, text, candidates) for path, text in texts.items())
    )
    return frozenset(candidates - bad)


# -- warp-size constants ------------------------------------------------------------------------
_WARP_NAME = (
    r"(?!c10_)(?:\w*?(?:warp_?size|warp_?width|threads_?per_?warp)"
    r"|(?:k_?)?(?:warp_?threads|lanes_?per_?warp))"
)
#: `#define WARP_SIZE 32`, `constexpr int kWarpSize = 64;`, `enum { kWarpSize = 32 }`.
_WARP_DEFINITION = re.compile(
    rf"^[ \t]*#[ \t]*define[ \t]+(?P<macro>{_WARP_NAME})[ \t]+(?P<mvalue>[^\n]+)"
    rf"|\b(?:int|unsigned|size_t|auto|uint32_t|int32_t|uint)\b[^;=(){{}}\n]*?\b(?P<name>{_WARP_NAME})"
    r"\s*=\s*(?P<value>[^;,}\n]+)",
    re.I | re.M,
)
_WARP_HINT = re.compile(_WARP_NAME, re.I)


def _mentions_warp(text: str) -> bool:
    """`_WARP_HINT.search(text)`, quickly: every name it matches holds "warp" (re.I matches
    only ASCII letters to w, a, r, p), so a text without it is not searched."""
    return "warp" in text.lower() and _WARP_HINT.search(text) is not None


_WAVE_TEST = re.compile(r"__AMDGCN_WAVEFRONT_SIZE|__GFX1[0-2]__|__gfx1[0-2]\w*__")
_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)", re.M)


def _is_32(value: str) -> bool:
    return value.strip().strip("{}() ").rstrip("uUlL") == "32"


_WAVEFRONT_VALUE = re.compile(
    r"\bwarpSize\b|wavefront|__AMDGCN_WAVEFRONT_SIZE|\bC10_WARP_SIZE\b", re.I
)


def _follows_wavefront(value: str) -> bool:
    """64, or an expression of the hardware's wavefront (`warpSize`,
    `rocprim::arch::wavefront::max_size()`, `__AMDGCN_WAVEFRONT_SIZE`). Another name (`WARP_SIZE`,
    which may be 32) is not known to."""
    bare = value.strip().strip("{}() ").rstrip("uUlL")
    return bare == "64" or bool(_WAVEFRONT_VALUE.search(value))


def _wave_tested(text: str, offset: int) -> bool:
    """The innermost `#if`/`#elif` chain around `offset` tests the AMD wavefront size (a 32 for
    wave32 targets, gfx10-12, is that target's wavefront)."""
    stack: list[str] = []
    for m in _CONDITIONAL.finditer(text, 0, offset):
        word = m.group(1)
        if word in ("if", "ifdef", "ifndef"):
            stack.append(m.group(2))
        elif word == "endif" and stack:
            stack.pop()
        elif stack:
            stack[-1] += " " + m.group(2)
    return bool(stack) and bool(_WAVE_TEST.search(stack[-1]))


def _warp_definitions(text: str) -> tuple[tuple[str, int, bool], ...]:
    """(name, line, follows the wavefront) of every warp-size definition in one text."""
    if not _mentions_warp(text):
        return ()
    out = []
    for m in _WARP_DEFINITION.finditer(text):
        name = m.group("macro") or m.group("name")
        value = m.group("mvalue") if m.group("macro") else m.group("value")
        line = text.count("\n", 0, m.start()) + 1
        fine = _follows_wavefront(value) or (_is_32(value) and _wave_tested(text, m.start()))
        out.append((name, line, fine))
    return tuple(out)


def wavefront_constants(
    project: ProjectMacros,
    plain: Mapping[str, str],
    reachable: Callable[[str, int], bool],
    definitions: Callable[[str, str], Iterable[tuple[str, int, bool]]] | None = None,
) -> dict[str, str]:
    """Warp-size constants that follow the wavefront in a ROCm build: every definition of the
    name in the run that some HIP pass may compile follows the wavefront (`64`,
    `rocprim::arch::wavefront::max_size()`, `warpSize`) or is a 32 under a wavefront-size test
    (faiss's `#ifdef USE_AMD_ROCM` / `#if __AMDGCN_WAVEFRONT_SIZE == 32u`), and at least one is
    compiled. Definitions in code every HIP pass skips (the CUDA `#else`) do not count; any
    ROCm-reachable bare 32 keeps the name reported. `plain`: files with no directive (every
    line compiled); `reachable(path, line)`: whether a HIP pass may compile a line of the others.
    `definitions(path, text)`: `_warp_definitions(text)` (kept per file by the caller)."""
    sites: dict[str, list[tuple[bool, str]]] = {}
    for path, text in [*project.texts.items(), *plain.items()]:
        directives = path in project.texts
        found = definitions(path, text) if definitions else _warp_definitions(text)
        for name, line, fine in found:
            if directives and not reachable(path, line):
                continue  # only the CUDA build compiles it
            sites.setdefault(name, []).append((fine, f"{path}:{line}"))
    return {
        name: found[0][1]
        for name, found in sites.items()
        if found and all(fine for fine, _ in found)
    }


# -- headers only CUDA includes -------------------------------------------------------------------
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc")
_INCLUDE_LINE = re.compile(r"^[ \t]*#[ \t]*include\b[ \t]*([^\n]*)", re.M)
_INCLUDE_NAME = re.compile(r"[<\"]([^>\"]+)[>\"]")


def unincluded_headers(
    project: ProjectMacros, others: Iterable[str] = (), unbuilt: Mapping[Path, str] | None = None
) -> dict[str, str]:
    """Headers of the run that no ROCm compile includes: every `#include` of the header in
    the run sits on a line the HIP passes skip (TransformerEngine's pybind.cpp includes
    comm_gemm_overlap.h only under `#ifndef USE_ROCM`, which torch's ROCm build defines), in
    a source no build of the run compiles (`unbuilt`: FBGEMM's vendored CUTLASS example
    programs), or in another such header. A header is not compiled on its own, so nothing of
    it reaches ROCm. Unknown stays reported: a header with no include site in the run, one under an
    `include/` folder (a public header code outside the run may include), one whose name an
    include the run cannot resolve to one file may mean, one an `#include` in another file
    (a Python string) names, and every header when the run has a computed `#include MACRO`."""
    texts = project.texts
    sites: dict[str, list[tuple[str, int]]] = {}
    unresolved: set[str] = set()
    for other in others:
        for m in _INCLUDE_LINE.finditer(other):
            found = _INCLUDE_NAME.match(m.group(1).strip())
            if found is not None:
                unresolved.add(PurePosixPath(found.group(1)).name)
    for path, text in texts.items():
        if "include" not in text:
            continue
        for m in _INCLUDE_LINE.finditer(text):
            found = _INCLUDE_NAME.match(m.group(1).strip())
            if found is None:
                return {}  # `#include MACRO`: any header may be meant
            target = project._find(found.group(1), path)
            if target is None:
                unresolved.add(PurePosixPath(found.group(1)).name)
                continue
            line = text.count("\n", 0, m.start()) + 1
            sites.setdefault(target, []).append((path, line))
    candidates = {
        h: s
        for h, s in sites.items()
        if h.endswith(HEADER_SUFFIXES)
        and "include" not in PurePosixPath(h).parts[:-1]
        and PurePosixPath(h).name not in unresolved
    }
    models: dict[str, preprocessor.LineModel] = {}

    unbuilt = unbuilt or {}

    def skipped(path: str, line: int) -> str:
        if unbuilt and Path(path).resolve() in unbuilt:
            return "no build of the run compiles that file"
        if path not in models:
            models[path] = project.line_model(path)
        return models[path].reason(line)

    out: dict[str, str] = {}
    changed = True
    while changed:  # least fixpoint: a header included only from unincluded headers
        changed = False
        for header, where in candidates.items():
            if header in out:
                continue
            reasons = []
            for path, line in where:
                if path == header:
                    break
                why = out.get(path) and f"in `{path}`, itself never included by ROCm"
                why = why or skipped(path, line)
                if not why:
                    break
                reasons.append(f"`{path}:{line}` ({why})")
            else:
                more = f"; {len(reasons) - 3} more" if len(reasons) > 3 else ""
                out[header] = (
                    "the HIP pass never includes this header: every include site skips it: "
                    + "; ".join(reasons[:3])
                    + more
                )
                changed = True
    return out
