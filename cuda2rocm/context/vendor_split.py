"""Vendor-split siblings: a CUDA backend kept beside its ROCm twin, which the ROCm build uses.

A project that supports both vendors often keeps each backend in its own folder or file, named
alike but for a vendor word (data/vendor_words.toml): `ops/cuda/` beside `ops/rocm/`,
`backend/cuda/` beside `backend/hip/`, `cuda_operations.cc` beside `hip_operations.cc`,
`X_cuda.cu` beside `X_hip.cpp`. The ROCm build compiles the twin *in place of* the CUDA one,
so the CUDA sibling's findings are no port to do there: they are guarded (one
`cuda-only-component` note), with a reason naming the twin and the build line that decides.

The CUDA sibling is guarded only when all of these hold (anything unknown keeps it reported):

- its ROCm twin exists and holds sources, and the ROCm build reaches it: a CMake line a ROCm
  configure may run lists it (`add_subdirectory`, a source list, a glob), or a source includes
  it on a line some HIP pass compiles (`#ifdef USE_ROCM` / `#include "hip_compat.h"`);
- nothing the ROCm build runs reaches the CUDA sibling: every CMake line naming it (resolved, or
  a path word that names it) sits in code a ROCm configure never runs (`build._cmake_pass`:
  ROCm switches, `cuda_siblings` such as `if(X_ENABLE_CUDA)` beside `if(X_ENABLE_HIP)`, a vendor
  chain's HIP branch, vendor selectors), no Python build file names it, and no HIP target
  compiles its files (`hip_listings`: a HIP CMakeLists globbing `../foo-cuda/*.cu` compiles the
  CUDA folder through a vendor header, so it is the ROCm build's source too);
- no file of the twin includes one of it on a line a HIP pass compiles (then the ROCm build
  compiles it). A file outside both that includes one of its files that way keeps that file,
  and what it includes in turn from the sibling, reported.

Or, the run-time case: no build reaches either sibling (no CMake line, Python build file or
include from outside the pair names them, and neither torch's cpp_extension, CMake nor Cython
compiles a file of them). Then the project picks one per vendor when it runs (a code
generator's per-target templates, sources handed to a run-time compiler), and a ROCm run takes
the twin: the CUDA sibling is guarded the same way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath

import tomllib

from cuda2rocm.context.build import ROCM, SOURCE_SUFFIXES, Component, Membership, _cmake_pass
from cuda2rocm.context.hip_listings import HipListing, strip_comments
from cuda2rocm.context.hip_listings import listings as hip_listings

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
_SPLIT = re.compile(r"[-_.]")
_GLOB = re.compile(r"[*?\[]")
_BUILDER_TOKENS = (b"cpp_extension", b"def is_compatible", b"setup(")
_MAX_HELD = 20000
_COMPILED = (".cu", ".cpp", ".cc", ".cxx", ".c", ".hip")
_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc")


@functools.cache
def vendor_words() -> tuple[frozenset[str], frozenset[str]]:
    """(CUDA words, ROCm words), lower case."""
    text = resources.files("cuda2rocm.data").joinpath("vendor_words.toml").read_text()
    data = tomllib.loads(text)
    return frozenset(w.lower() for w in data["cuda"]), frozenset(w.lower() for w in data["rocm"])


def _words(path: Path) -> list[str]:
    name = path.name
    if path.suffix in SOURCE_SUFFIXES:
        name = name[: -len(path.suffix)]
    return [w.lower() for w in _SPLIT.split(name) if w]


def twin_of(path: Path, siblings: Iterable[Path]) -> Path | None:
    """The sibling whose name differs from `path`'s only by a ROCm word where `path` has a
    CUDA word (both folders, or both source files), if any."""
    cuda, rocm = vendor_words()
    words = _words(path)
    spots = [i for i, w in enumerate(words) if w in cuda]
    if not spots:
        return None
    is_file = path.suffix in SOURCE_SUFFIXES
    for other in sorted(siblings):
        if other == path or (other.suffix in SOURCE_SUFFIXES) != is_file:
            continue
        theirs = _words(other)
        if len(theirs) != len(words):
            continue
        differ = [i for i, (a, b) in enumerate(zip(words, theirs, strict=True)) if a != b]
        if len(differ) == 1 and differ[0] in spots and theirs[differ[0]] in rocm:
            return other
    return None


def pairs(paths: Iterable[Path], root: Path) -> list[tuple[Path, Path]]:
    """(CUDA sibling, ROCm twin) among the folders and source files of the run under `root`
    (resolved paths), outermost first."""
    children: dict[Path, set[Path]] = {}
    seen: set[Path] = set()
    for path in paths:
        if not path.is_relative_to(root) or path == root:
            continue
        node, is_file = path, True
        while node != root and node not in seen:
            seen.add(node)
            if not is_file or node.suffix in SOURCE_SUFFIXES:
                children.setdefault(node.parent, set()).add(node)
            node, is_file = node.parent, False
    out = []
    for parent in sorted(children, key=lambda p: (len(p.parts), p)):
        for child in sorted(children[parent]):
            twin = twin_of(child, children[parent])
            if twin is not None:
                out.append((child, twin))
    return out


@dataclass
class SplitComponent(Component):
    """The CUDA sibling of a vendor-split pair: the ROCm build compiles its twin instead."""

    twin: str = ""

    @property
    def reason(self) -> str:
        return (
            f"in {self.label}, the CUDA sibling of {self.twin} ({self.why}); "
            "reported once as cuda-only-component"
        )


@dataclass
class _Ref:
    """A build line or `#include` that names a path."""

    display: str
    origin: Path  # the resolved file holding it
    line: int
    targets: frozenset[Path]  # resolved paths it names (empty: a path word naming the sibling)
    dead: str | None  # why a ROCm configure / every HIP pass never runs it (None: it may)
    word: str = ""
    #: (chain, branch) of each CMake `if()` chain around it, outermost first.
    arms: tuple[tuple[str, int], ...] = ()


def _hits(ref: _Ref, path: Path) -> bool:
    return any(t == path or t.is_relative_to(path) for t in ref.targets)


def _reaches(ref: _Ref, path: Path) -> bool:
    """It names a file of `path`, or (unresolved) a path word that names `path`."""
    return _hits(ref, path) or (not ref.targets and _names(ref.word, path))


def _resolve(base: Path, word: str, root: Path, recurse: bool) -> frozenset[Path]:
    from cuda2rocm.context.cmake_flow import glob_files

    for name in ("${CMAKE_CURRENT_SOURCE_DIR}", "${CMAKE_CURRENT_LIST_DIR}"):
        word = word.replace(name, str(base))
    if word.startswith("${"):
        # `${PROJECT_SOURCE_DIR}/src/cuda/x.cu`: the rest, from each folder up to the root.
        rest = word.split("}", 1)[1].lstrip("/")
        if "${" in rest or not rest:
            return frozenset()
        folder = base
        while folder.is_relative_to(root):
            found = _resolve(folder, rest, root, recurse)
            if found:
                return found
            if folder == root:
                break
            folder = folder.parent
        return frozenset()
    if "${" in word or "$<" in word:
        return frozenset()
    if _GLOB.search(word):
        return frozenset(glob_files(base, word, recurse) or ())
    try:
        path = (base / word).resolve()
    except (OSError, ValueError):
        return frozenset()
    return frozenset({path}) if path != base and path.exists() else frozenset()


def _compiled(paths: frozenset[Path]) -> frozenset[Path]:
    return frozenset(p for p in paths if p.suffix in _COMPILED or p.is_dir())


def _names(word: str, path: Path) -> bool:
    """Whether a build word names `path` as a path component (`src/cuda/x.cu`, `cuda/`,
    `${ROOT}/cuda_operations.cc`): a computed path that may reach it."""
    parts = [p for p in re.split(r"[/\\]", word.strip("\"'")) if p]
    if path.suffix in SOURCE_SUFFIXES:
        return bool(parts) and parts[-1] == path.name
    return len(parts) > 1 and path.name in parts


def _cmake_refs(
    files: list[tuple[Path, str, bytes]],
    root: Path,
    names: set[str],
    membership: Membership | None,
) -> list[_Ref]:
    refs: list[_Ref] = []
    companions = membership.companions if membership else None
    off = membership.off if membership else None
    flow = membership.flow if membership else None
    for path, display, data in files:
        if not any(n.encode() in data for n in names) and b"GLOB" not in data.upper():
            continue
        text = strip_comments(data.decode("utf-8", "replace"))
        try:
            commands = _cmake_pass(text, ROCM, companions, off=off, flow=flow)[0]
        except RecursionError:
            continue
        base = path.resolve().parent
        stack: list[tuple[int, int]] = []
        for number, (command, words, line, dead) in enumerate(commands):
            if command == "if":
                stack.append((number, 0))
            elif command in ("elseif", "else") and stack:
                stack[-1] = (stack[-1][0], stack[-1][1] + 1)
            elif command == "endif" and stack:
                stack.pop()
            if command in ("if", "elseif", "else", "endif") or not words:
                continue
            recurse = command == "file" and words[0].upper() == "GLOB_RECURSE"
            for word in words:
                # A glob may reach a sibling without naming it (`${ROOT}/src/*.cu` recursed).
                if not any(n in word for n in names) and not _GLOB.search(word):
                    continue
                if command == "add_subdirectory" and word == words[0]:
                    found = _resolve(base, word, root, False)
                elif "/" in word or word.endswith(SOURCE_SUFFIXES):
                    found = _resolve(base, word, root, recurse)
                else:
                    continue
                # A header is compiled by its includers, never by being named in CMake (a
                # header list, an install glob): only folders and compiled sources count.
                if word.endswith(_HEADERS):
                    continue
                if found:
                    found = _compiled(found)
                    if not found:
                        continue
                arms = tuple((f"{display}:{c}", b) for c, b in stack)
                refs.append(_Ref(display, path.resolve(), line, found, dead, word, arms))
    return refs


def _python_mentions(files: list[tuple[Path, str, bytes]], names: set[str]) -> list[_Ref]:
    """Python build files that spell a sibling's name as a path part: what they build is not
    read here, so the sibling may be built for ROCm."""
    out = []
    for path, display, data in files:
        if not any(t in data for t in _BUILDER_TOKENS):
            continue
        for name in names:
            pattern = re.escape(name.encode())
            hit = re.search(rb"[\"'/\\]" + pattern + rb"(?:[\"'/\\]|$)", data, re.M)
            if hit:
                line = data.count(b"\n", 0, hit.start()) + 1
                word = f"/{name}/"
                out.append(_Ref(display, path.resolve(), line, frozenset(), None, word))
    return out


def _include_refs(
    sources: list[tuple[Path, str, bytes]],
    targets: list[Path],
    reachable: Callable[[str, int], bool] | None,
) -> list[_Ref]:
    """`#include`s (from any source) of files inside `targets`, resolved beside the includer,
    else by a path that ends with the include (one candidate only)."""
    by_name: dict[str, list[Path]] = {}
    for path, _, _ in sources:
        by_name.setdefault(path.name, []).append(path)
    wanted = [t for t in targets]
    out = []
    for path, display, data in sources:
        if b"include" not in data:
            continue
        text = data.decode("utf-8", "replace")
        for m in _INCLUDE.finditer(text):
            name = m.group(1).strip()
            beside = Path(os.path.normpath(path.parent / name))
            if beside.is_file():
                found: Path | None = beside
            else:
                suffix = "/" + PurePosixPath(name).as_posix().lstrip("./")
                named = by_name.get(PurePosixPath(name).name, ())
                hits = [p for p in named if p.as_posix().endswith(suffix)]
                found = hits[0] if len(hits) == 1 else None
            if found is None or not any(found == t or found.is_relative_to(t) for t in wanted):
                continue
            line = text.count("\n", 0, m.start()) + 1
            live = reachable is None or reachable(display, line)
            dead = None if live else "in code every HIP pass skips"
            out.append(_Ref(display, path, line, frozenset({found}), dead, name))
    return out


def _run_time_pair(
    cuda: Path,
    rocm: Path,
    refs: list[_Ref],
    mentions: list[_Ref],
    includes: list[_Ref],
    compiled: Callable[[Path], bool],
) -> bool:
    """Neither sibling is named by a build line or a Python build file, included from outside
    the pair, or compiled by a build the run reads."""
    pair = (cuda, rocm)
    if any(_reaches(r, p) for r in refs for p in pair):
        return False
    if any(m.word.strip("/") in (cuda.name, rocm.name) for m in mentions):
        return False
    if any(
        _hits(r, p) and not any(_inside(r.origin, q) for q in pair) for r in includes for p in pair
    ):
        return False
    for side in pair:
        members = list(side.rglob("*"))[:_MAX_HELD] if side.is_dir() else [side]
        if any(m.suffix in SOURCE_SUFFIXES and compiled(m) for m in members):
            return False
    return True


def _in_place_of(ref: _Ref, twin_refs: list[_Ref]) -> str | None:
    """Why a ROCm configure never runs `ref`, a CUDA sibling's listing, when every CMake line
    listing the twin sits in another branch of one `if()` chain around it: CMake runs one
    branch of a chain (`if()` documentation), and the ROCm build, which compiles the twin,
    takes the twin's one. None when that is not so."""
    cmake = [t for t in twin_refs if _is_cmake(t.origin)]
    if not cmake:
        return None
    for chain, branch in ref.arms:
        others = [next((b for c, b in t.arms if c == chain), None) for t in cmake]
        if all(b is not None and b != branch for b in others):
            first = cmake[0]
            return (
                f"a branch of an `if()` chain whose other branch lists the twin instead "
                f"(`{first.display}:{first.line}`)"
            )
    return None


def _is_cmake(path: Path) -> bool:
    return path.name == "CMakeLists.txt" or path.suffix == ".cmake"


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _held_files(cuda: Path) -> frozenset[Path]:
    if cuda.is_file():
        return frozenset({cuda})
    from cuda2rocm.context.vendor_only import _held

    return _held(cuda)


def _label(path: Path, root: Path) -> str:
    shown = path.relative_to(root).as_posix()
    return f"`{shown}/`" if path.is_dir() else f"`{shown}`"


def components(
    files: Iterable[tuple[Path, str, str, bytes]],
    sources: Iterable[tuple[Path, str, bytes]],
    root: Path | None,
    membership: Membership | None = None,
    reachable: Callable[[str, int], bool] | None = None,
    compiled: Callable[[Path], bool] | None = None,
) -> list[Component]:
    """CUDA siblings of vendor-split pairs the ROCm build leaves out (module docstring).
    `files`: (path, display, language, bytes) of the run's Python and CMake files; `sources`:
    (path, display, bytes) of its C/C++ files; `membership`: the run's other build facts (its
    components are not looked at again; its CMake variables decide branches); `reachable(
    display, line)`: whether some HIP pass may compile that line (None: every line may);
    `compiled(path)`: whether a build the run reads (torch's cpp_extension, CMake, Cython)
    compiles or hipifies a file (None: unknown, so a pair no build reaches stays reported)."""
    if root is None:
        return []
    root = root.resolve()
    files = list(files)
    sources = [(Path(os.path.abspath(p)), d, b) for p, d, b in sources]
    paths = [p.resolve() for p, *_ in files] + [p for p, _, _ in sources]
    found_pairs = pairs(paths, root)
    known = list(membership.components) if membership else []
    found_pairs = [
        (c, r)
        for c, r in found_pairs
        if not any(k.holds(c) or (not k.files and _inside(c, k.root)) for k in known)
    ]
    if not found_pairs:
        return []
    # The twin's own files the run does not lint (`.hip` sources): their includes count too.
    have = {p for p, _, _ in sources}
    for _, rocm in found_pairs:
        members = list(rocm.rglob("*"))[:_MAX_HELD] if rocm.is_dir() else [rocm]
        for member in members:
            if member.suffix in SOURCE_SUFFIXES and member not in have and member.is_file():
                with contextlib.suppress(OSError):
                    sources.append((member, str(member), member.read_bytes()))
                    have.add(member)
    cmake = [(p, d, b) for p, d, lang, b in files if lang == "cmake"]
    names = {p.name for pair in found_pairs for p in pair}
    refs = _cmake_refs(cmake, root, names, membership)
    mentions = _python_mentions([(p, d, b) for p, d, lang, b in files if lang == "python"], names)
    includes = _include_refs(sources, [p for pair in found_pairs for p in pair], reachable)
    listed: list[HipListing] = hip_listings(cmake)
    out: list[Component] = []
    for cuda, rocm in found_pairs:
        if any(_inside(cuda, o.root) for o in out):
            continue  # inside a sibling already guarded: the same decision
        made = _decide(cuda, rocm, root, refs, mentions, includes, listed, known, compiled)
        if made is not None:
            out.append(made)
    return out


def _decide(
    cuda: Path,
    rocm: Path,
    root: Path,
    refs: list[_Ref],
    mentions: list[_Ref],
    includes: list[_Ref],
    listed: list[HipListing],
    known: list[Component],
    compiled: Callable[[Path], bool] | None = None,
) -> Component | None:
    if rocm.is_dir():
        if not any(
            p.is_file() and p.suffix in SOURCE_SUFFIXES for p in list(rocm.rglob("*"))[:_MAX_HELD]
        ):
            return None
    elif not rocm.is_file():
        return None
    # The twin, as the ROCm build reaches it.
    twin_refs = [
        r
        for r in [*refs, *includes]
        if r.dead is None and not _inside(r.origin, rocm) and _reaches(r, rocm)
    ]
    run_time = False
    if not twin_refs:
        # No build reaches the twin. Where no build reaches either sibling at all (nothing
        # the run's CMake, Python build files or compiled sources name, nothing torch's
        # cpp_extension, CMake or Cython compiles), the project picks one per vendor when it
        # runs (a code generator's per-target templates, sources handed to a run-time
        # compiler): a ROCm run takes the twin. Anything short of that says nothing.
        run_time = compiled is not None and _run_time_pair(
            cuda, rocm, refs, mentions, includes, compiled
        )
        if not run_time:
            return None  # how the twin is built is not known: the pair says nothing
    # The CUDA sibling: anything the ROCm build runs that may reach it keeps it reported.
    if any(_inside(f, cuda) for h in listed for f in h.files):
        return None  # a HIP target compiles its files
    mine = [r for r in refs if not _inside(r.origin, cuda) and _reaches(r, cuda)]
    listed_twin = [r for r in twin_refs if r.arms or r in refs]
    for i, r in enumerate(mine):
        if r.dead is None:
            place = _in_place_of(r, listed_twin)
            if place is None:
                return None
            mine[i] = dataclasses.replace(r, dead=place)
    if any(m.word.strip("/") == cuda.name for m in mentions):
        return None
    included = [r for r in includes if _hits(r, cuda) and not _inside(r.origin, cuda)]
    live = [r for r in included if r.dead is None]
    if any(_inside(r.origin, rocm) for r in live):
        return None  # the twin compiles it
    held = set(_held_files(cuda))
    # A live include from elsewhere (not a CUDA-only file already) keeps that file reported,
    # and what it includes from the sibling in turn.
    keep = [t for r in live if not any(k.holds(r.origin) for k in known) for t in r.targets]
    inner: dict[Path, set[Path]] = {}
    for r in includes:
        if r.dead is None and _inside(r.origin, cuda):
            inner.setdefault(r.origin, set()).update(r.targets)
    while keep:
        f = keep.pop()
        if f in held:
            held.discard(f)
            keep += list(inner.get(f, ()))
    if not held:
        return None
    twin_label = _label(rocm, root)
    if run_time:
        first = min(held)
        why = (
            f"no build the run reads compiles it or {twin_label}: the project picks one per "
            f"vendor when it runs, and a ROCm run takes {twin_label}"
        )
        shown_at = _label(first, root).strip("`")
        return SplitComponent(
            cuda, shown_at, 1, why, _label(cuda, root), frozenset(held), twin=twin_label
        )
    twin = twin_refs[0]
    dead = next((r for r in mine if r.dead), None) or next((r for r in included if r.dead), None)
    if dead is not None and dead in mine:
        why = f"`{dead.display}:{dead.line}` names it only under {dead.dead}"
    elif dead is not None:
        why = f"its includes (`{dead.display}:{dead.line}`) sit in code every HIP pass skips"
    else:
        why = "nothing the build lists or includes names it"
    why += f"; the ROCm build compiles {twin_label} in its place (`{twin.display}:{twin.line}`)"
    shown = dead or twin
    return SplitComponent(
        cuda,
        shown.display,
        shown.line,
        why,
        _label(cuda, root),
        frozenset(held),
        twin=twin_label,
    )
