"""Running a lint over a tree: read and prefilter in one pass, consult the cache, parse in parallel.

The main process discovers, reads, hashes and prefilters every file (cheap, I/O bound); only the
files that need parsing go to a process pool, in chunks. Results are sorted, so a parallel run
prints exactly what a serial one does.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import gc
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from cuda2rocm import warm
from cuda2rocm.build_context import (
    clear_resolved,
    hipified_dirs,
    resolved_parent,
    resolved_path,
    torch_built_dirs,
)
from cuda2rocm.cache import Cache, content_hash, hashing, remember
from cuda2rocm.context.recipes import builds_for_rocm, nvidia_recipes
from cuda2rocm.discover import CONTEXT_ONLY, Found, Problem, discover
from cuda2rocm.engine import Linter, LintResult, Notice, _general, is_recovery_notice
from cuda2rocm.model import Safety, Severity

#: Below this many files to parse, a pool costs more than it saves.
MIN_PARALLEL = 24
CHUNK = 16

_worker_linter: Linter | None = None


def _init_worker(linter: Linter) -> None:
    global _worker_linter
    _worker_linter = linter
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    """A worker whose parent was killed (SIGKILL, OOM) would wait on its queue forever: leave.
    Workers never write files, so ending them at any moment loses nothing."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _run_chunk(task: tuple[Callable, list]) -> list:
    function, chunk = task
    assert _worker_linter is not None
    return [function(_worker_linter, item) for item in chunk]


def map_files(
    linter: Linter,
    function: Callable,
    work: list,
    jobs: int,
    done: Callable[[int], None] | None = None,
    weight: Callable[[object], int] | None = None,
) -> list:
    """`[function(linter, w) for w in work]`, in a process pool when the work is large enough.

    `function` must be a module-level function (it is sent to the workers by name); results
    come back in order. `done(n)` is called as results arrive, with the summed `weight` of
    the work they finish (default: one per item), so progress can count bytes parsed.
    """
    measure = weight or (lambda _: 1)
    if jobs <= 1 or len(work) < MIN_PARALLEL:
        results = []
        for w in work:
            results.append(function(linter, w))
            if done:
                done(measure(w))
        return results
    chunks = [work[k : k + CHUNK] for k in range(0, len(work), CHUNK)]
    results = []
    with _pool(linter, min(jobs, len(chunks))) as pool:
        for chunk, chunk_results in zip(
            chunks, pool.map(_run_chunk, [(function, c) for c in chunks]), strict=True
        ):
            results += chunk_results
            if done:
                done(sum(measure(w) for w in chunk))
    return results


def file_digest(linter: Linter, item: Found, data: bytes) -> str:
    """The cache key of one file's results: its content and what outside it changes them.
    `lint` and `fix` both use this one function, so context added here applies to both."""
    built = item.language == "cuda" and linter.torch_built_for(item.display)
    digest = content_hash(data) + ("+torch" if built else "") + linter.context_key
    if item.language == "cmake":
        digest += getattr(linter, "cmake_key", "")
    if item.language == "cuda" and linter.hipified_for(item.display):
        digest += "+hipified"
    if item.language == "cuda" and not built:
        note = linter.build_note_for(item.display)
        digest += f"+built:{note}" if note else ""
    if linter.project_macros is not None and (item.language == "cuda" or linter._may_embed(data)):
        digest += "+pp" + linter.project_macros.digest
    return digest


def nothing_to_fix(
    linter: Linter,
    cache: Cache | None,
    item: Found,
    data: bytes | None,
    unsafe: bool,
    digest: str | None = None,
) -> bool:
    """Whether the cache already shows that `fix` would change nothing in this file (its
    cached findings have no applicable fix): then `fix` need not parse it again. `digest`:
    the file's cache key when known (then `data` is not needed)."""
    if cache is None:
        return False
    if digest is None:
        assert data is not None
        digest = file_digest(linter, item, data)
    found = cache.get(item.display, digest)
    if found is None:
        return False
    return not fixable(found, unsafe)


def fixable(found: list, unsafe: bool) -> bool:
    """Whether `fix` would apply something among these findings (then it parses the file)."""
    return any(
        d.fix is not None
        and d.fix.edits
        and not d.guarded
        and (unsafe or d.fix.safety is not Safety.UNSAFE)
        for d in found
    )


def _lint_one(
    linter: Linter, work: tuple[int, Found, bytes, str | None, bool | None]
) -> tuple[list, dict | None]:
    """The file's findings and, when `fix` would change something (with `unsafe` the fifth
    element; None: not asked), the outcome `fix` computes from them, ready for its cache:
    `fix --check` after a lint then parses nothing. The same function as `fix` computes
    it with, from the same findings, so the outcome is the one `fix` would get."""
    _, item, data, _, unsafe = work
    found = linter.lint_data(item, data)
    if unsafe is None or not fixable(found, unsafe):
        return found, None
    from cuda2rocm import fixer
    from cuda2rocm.model import Diagnostic

    # The findings as `fix` reads them back from the cache, so its input is the same.
    cached = [Diagnostic.from_json(d.to_json()) for d in found]
    try:
        outcome, error = fixer._fix_one(linter, (item, data, unsafe, None, cached))
    except Exception:  # a failing fix never fails the lint: `fix` meets it again, and says so
        return found, None
    return found, (fixer._outcome_json(outcome) if outcome is not None and not error else None)


def _python_and_build_context(
    linter: Linter,
    items: list[Found],
    have: dict[int, bytes],
    memo: warm.FactsMemo,
    off: dict[str, str],
) -> str:
    """The project's Python flags and build membership, built once; the digest goes into every
    file's cache key, since it changes what is guarded. `off`: the run's NVIDIA-only CMake
    options (computed once in `prepare`)."""
    import hashlib

    from cuda2rocm.context import vendor_only
    from cuda2rocm.context.build import BUILDER_TOKENS, CallSites, membership
    from cuda2rocm.context.python_paths import ProjectIndex

    files = [
        (item.path, item.display, item.language, data)
        for item, data in _contents(items, have, lambda i: i.language in ("python", "cmake"))
    ]
    root = None
    if items:
        root = Path(os.path.commonpath([resolved_parent(str(i.path)) for i in items]))
    sources = [
        (item.path, data) for item, data in _contents(items, have, lambda i: i.language == "cuda")
    ]

    python = [(p, d) for p, _, lang, d in files if lang == "python"]

    def answer(callers: CallSites, question: tuple) -> list:
        """The files that answer a question asked of the Python files, as (path, hash)s."""
        return [(str(p), content_hash(d)) for p, d in callers.answer(tuple(question))]

    def members():
        callers = CallSites(python)
        found = membership(files, root, sources, off, linter.torch_built_for, callers, memo)
        return found, [(q, answer(callers, q)) for q in callers.asked]

    def same_answers(kept) -> bool:
        fresh = CallSites(python)
        return all(answer(fresh, q) == got for q, got in kept[1])

    def derive():
        index = ProjectIndex.build(python, memo=memo)
        # Membership reads the Python files other than build files only through questions
        # (who calls this helper, who names that module): kept while the answers hold.
        kept, _ = memo.call("membership", m_inputs, members, same_answers)
        found = copy.copy(kept)
        found.components = kept.components + vendor_only.components(files, root, memo)
        db = _compile_db(linter, items)
        if db is not None:
            found.unbuilt = _db_unbuilt(db, items)
            found.components = _db_components(db, found.components)
        return index, found

    inputs = [str(root), [(str(p), shown, lang, content_hash(d)) for p, shown, lang, d in files]]
    if linter.compile_db is not None:  # what the database answers is part of what is derived
        inputs.append(repr(sorted((str(p), e) for p, e in linter.compile_db.entries.items())))

    def builds(data: bytes) -> bool:
        return any(t in data for t in BUILDER_TOKENS)

    m_inputs = [
        str(root),
        sorted(off.items()),
        [
            (str(p), shown, lang, content_hash(d) if lang != "python" or builds(d) else None)
            for p, shown, lang, d in files
        ],
    ]
    if off:
        # membership then reads the C/C++ sources too (headers an NVIDIA-only option lists),
        # and every file's text (the macros those options define)
        inputs.append([(str(p), content_hash(d)) for p, d in sources])
        m_inputs = inputs
    linter.python_index, linter.build_membership = memo.call("python-and-build", inputs, derive)
    linter.build_membership = _with_vendor_split(
        linter, items, have, memo, files, root, linter.build_membership
    )
    built = linter.build_membership
    # What CMake findings' guards read run-wide (`Membership.cmake_reason`): the ROCm
    # configure's variables, NVIDIA-only options, every CMake file's uses, vendor selectors.
    # Only CMake files' keys hold it: an edit of one CMakeLists.txt re-lints the CMake files,
    # not every file of the run (whose guards read only the components and unbuilt sources).
    cmake = [sorted(built.companions.items()), sorted(built.off.items())]
    cmake.append(built.cmake_texts)
    if getattr(built, "flow", None) is not None:
        cmake.append(built.flow.digest())
    linter.cmake_key = "+cmake" + hashlib.blake2b(repr(cmake).encode(), digest_size=8).hexdigest()
    parts = [linter.python_index.digest]
    parts.append(sorted((str(p), why) for p, why in (built.unbuilt or {}).items()))
    parts += sorted(
        f"{c.root}|{c.reason}|{sorted(c.files)}|{sorted(c.helpers)}" for c in built.components
    )
    return "+ctx" + hashlib.blake2b(repr(parts).encode(), digest_size=8).hexdigest()


def _with_vendor_split(linter: Linter, items, have, memo, files, root, built):
    """`built` with the CUDA siblings of vendor-split pairs (context.vendor_split) added. They
    read the C/C++ sources' includes and the project's macros (which lines a HIP pass
    compiles), so they are kept under those too, not under the build files alone."""
    from cuda2rocm.context import vendor_split

    sources = [
        (item.path, item.display, data)
        for item, data in _contents(items, have, lambda i: i.language == "cuda")
    ]
    macros = linter.project_macros
    models: dict[str, object] = {}
    texts = {shown: data for _, shown, data in sources}

    def reachable(shown: str, line: int) -> bool:
        """Whether some HIP pass may compile that line, with the project's macros."""
        from cuda2rocm.context import preprocessor

        if macros is None or shown not in texts:
            return True
        if shown not in models:
            text = texts[shown].decode("utf-8", "replace")
            built = bool(linter.torch_built_for(shown))
            models[shown] = preprocessor.model(text, shown, built, macros)
        return not models[shown].reason(line)  # type: ignore[attr-defined]

    def compiled(path: Path) -> bool:
        """Compiled or hipified by a build the run reads (torch's cpp_extension, CMake,
        Cython): such a file is not picked per vendor at run time."""
        shown = str(path)
        return bool(linter.torch_built_for(shown)) or bool(linter.build_note_for(shown))

    inputs = [
        str(root),
        [(str(p), shown, lang, content_hash(d)) for p, shown, lang, d in files],
        [(shown, content_hash(d)) for _, shown, d in sources],
        sorted(str(d) for d in linter.torch_built_dirs),
        sorted(str(p) for p in linter.other_builds),
        getattr(macros, "digest", ""),
        sorted(f"{c.root}|{sorted(c.files)}" for c in built.components),
        repr(sorted(built.companions.items())),
        repr(sorted(built.off.items())),
    ]
    found = memo.call(
        "vendor-split",
        inputs,
        lambda: vendor_split.components(files, sources, root, built, reachable, compiled),
    )
    db = _compile_db(linter, items)
    if db is not None:
        found = _db_components(db, found)
    if not found:
        return built
    built = copy.copy(built)
    built.components = built.components + found
    return built


def _component_summaries(linter: Linter, guarded: list) -> list:
    """One cuda-only-component finding per component that holds guarded findings."""
    membership = linter.build_membership
    if membership is None or "cuda-only-component" not in linter.selected:
        return []
    counts: dict[int, tuple[int, set[str]]] = {}
    of: dict[str, object] = {}  # path -> its component (one lookup per file, not per finding)
    for d in guarded:
        component = None
        if d.guarded.endswith("cuda-only-component"):
            if d.path not in of:
                of[d.path] = membership.component(d.path)
            component = of[d.path]
        if component is not None:
            n, files = counts.get(id(component), (0, set()))
            files.add(d.path)
            counts[id(component)] = (n + 1, files)
    out = []
    decided = _rocm_build_exists(membership)
    for component in membership.components:
        if id(component) not in counts:
            continue
        n, files = counts[id(component)]
        message = (
            f"{component.label} is "
            + ("NVIDIA-only" if getattr(component, "dsl", False) else "compiled only for CUDA")
            + f": {component.why}; its {n} findings "
            f"in {len(files)} files are not reported (`--show-guarded` lists them). "
        )
        found = _general("cuda-only-component", component.build_file, "", component.line)
        if component.dependency:
            # An NVIDIA-only package, not a porting decision: a note, not an action.
            message = (
                f"{component.label} is compiled only for CUDA ({component.why}); its {n} "
                f"findings in {len(files)} files are not reported (`--show-guarded` lists them)"
            )
            found = dataclasses.replace(found, severity=Severity.INFO)
        elif decided:
            # The project's own ROCm build already leaves it out: the decision is taken, and
            # nothing here asks for a change (a note, not an action).
            message += (
                "The project's ROCm build already leaves it out: nothing to change unless "
                "ROCm should get it too"
            )
            found = dataclasses.replace(found, severity=Severity.INFO)
        else:
            message += (
                "Porting it to ROCm is a decision: keep it CUDA-only, or port it and add it "
                "to the ROCm build"
            )
        out.append(dataclasses.replace(found, message=message))
    return out


def _rocm_build_exists(membership) -> bool:
    """Whether the project's build has a ROCm path: a component it excludes by a test that is
    false on ROCm (a setup.py/op-builder/CMake branch), or a ROCm configure block. A component
    NVIDIA-only by design (sm_90a targets, CuTe DSL) in a project with no ROCm build is a
    decision still to take."""
    from cuda2rocm.context.vendor_only import VendorComponent

    if membership.companions:
        return True
    return any(not isinstance(c, VendorComponent) for c in membership.components)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _pool(linter: Linter, jobs: int):
    # fork shares the already imported front-ends; spawn elsewhere. Imported here: a run
    # small enough for one process (pre-commit, an editor) never pays for multiprocessing.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    return ProcessPoolExecutor(
        jobs, mp_context=context, initializer=_init_worker, initargs=(linter,)
    )


def _contents(
    items: list[Found], have: dict[int, bytes], keep: Callable[[Found], bool]
) -> Iterator[tuple[Found, bytes]]:
    """(item, bytes) of the run's files that `keep` selects. A file no selected rule read (a
    build script still says what the build compiles or hipifies) is read here, once: `have`
    keeps its bytes for the next pass."""
    for index, item in enumerate(items):
        if not keep(item):
            continue
        data = have.get(index)
        if data is None:
            try:
                data = have[index] = item.path.read_bytes()
            except OSError:
                continue
        yield item, data


def _root(items: list[Found]) -> Path:
    return Path(os.path.commonpath([resolved_parent(str(i.path)) for i in items]))


def _compile_db(linter: Linter, items: list[Found]):
    """The linter's ROCm compilation database when it compiles sources of this run, else None
    (a database of another tree says nothing about this one)."""
    db = linter.compile_db
    if db is None or not items or not db.covers(_root(items)):
        return None
    return db


def _db_unbuilt(db, items: list[Found]) -> dict[Path, str]:
    """The run's translation units the database never compiles (context.compile_db)."""
    return db.unbuilt(item.path for item in items if item.language == "cuda")


def _db_components(db, components: list) -> list:
    """CUDA-only components less the files the ROCm build compiles after all: the database
    is the exact answer, the static model only the fallback."""
    out = []
    for c in components:
        if c.files:
            kept = frozenset(f for f in c.files if db.entry(f) is None)
            if not kept:
                continue
            if kept != c.files:
                c = dataclasses.replace(c, files=kept)
        elif db.covers(c.root):
            continue  # a folder (or file) the ROCm build compiles from
        out.append(c)
    return out


def _is_build_file(item: Found) -> bool:
    name = item.path.name
    return name.endswith((".py", ".cmake")) or name == "CMakeLists.txt"


def _may_define(data: bytes) -> bool:
    """Whether a build file may define macros for the build (`build_defines.index` reads it)."""
    from cuda2rocm.context import build_defines

    return (
        any(t in data for t in build_defines.TOKENS)
        or b"definitions" in data
        or b"ROCM" in data.upper()
    )


def prepare(
    linter: Linter,
    items: list[Found],
    read: list[tuple[int, Found, bytes]],
    have: dict[int, bytes] | None = None,
    memo: warm.FactsMemo | None = None,
) -> str:
    """Facts about the whole tree that per-file linting needs, computed once per run in this
    process (lint and fix alike): the folders torch's extension build hipifies, the project's
    own macros (header #defines, build -D flags) for the preprocessor model, its Python flags
    and build membership. Returns the digest of the Python/build context for cache keys (the
    macros' digest is added to C++ files' keys only). `have` (index -> bytes), when given, is
    filled with every file read here; `memo` keeps the expensive parts across runs."""
    from cuda2rocm.context import build_defines, nvidia_options
    from cuda2rocm.context.builder_wrappers import project_wrapped_calls, wrapped_dirs
    from cuda2rocm.context.cmake_hipify import cmake_hipified
    from cuda2rocm.context.extension_calls import project_reach
    from cuda2rocm.context.other_builds import other_built
    from cuda2rocm.context.project_macros import ProjectMacros
    from cuda2rocm.context.python_hipify import python_hipified_dirs
    from cuda2rocm.context.text_sources import read_as_text
    from cuda2rocm.context.torch_floor import torch_floor
    from cuda2rocm.context.unbuilt import unbuilt_sources

    clear_resolved()  # paths resolved once per run (lint and fix alike)
    memo = memo or warm.FactsMemo()
    have = {} if have is None else have
    have.update({index: data for index, _, data in read})
    python = [(i.path, d) for i, d in _contents(items, have, lambda i: i.language == "python")]
    # Folders of extension sources, and the files torch's hipify reaches from them through
    # their includes (include_dirs / extra_include_paths as header_include_dirs).
    # Calls of the project's own wrappers of those builders count as the builder calls.
    wrapped = project_wrapped_calls(python, memo)
    reached, linter.torch_unhipified = project_reach(python, wrapped=wrapped)
    linter.torch_built_dirs = torch_built_dirs(python, memo) | reached | wrapped_dirs(wrapped)
    texts = {
        item.display: have[index].decode("utf-8", "replace")
        for index, item in enumerate(items)
        if item.language == "cuda" and index in have
    }
    scripts = list(_contents(items, have, lambda i: i.language in ("cmake", "shell")))
    linter.hipified_dirs = (
        hipified_dirs((i.path, i.language, d) for i, d in scripts)
        | python_hipified_dirs(python)
        | cmake_hipified(
            ((i.path, d) for i, d in scripts if i.language == "cmake"),
            {resolved_path(str(p)): d for p, d in python}
            | {resolved_path(str(i.path)): d for i, d in scripts if i.language == "shell"},
        )
    )
    linter.other_builds = other_built(
        (i.path, i.language, d)
        for i, d in _contents(items, have, lambda i: i.language in ("cmake", "cython"))
    )
    linter.torch_floor = torch_floor(
        d
        for i, d in _contents(
            items, have, lambda i: i.language == "requirements" or i.path.name == "setup.py"
        )
    )
    linter.text_read = read_as_text(
        ((resolved_path(str(p)), d) for p, d in python),
        (resolved_path(str(i.path)) for i in items if i.language == "cuda"),
    )
    builds = [
        (item.path, item.display, data)
        for item, data in _contents(items, have, _is_build_file)
        if memo.per_file("defines?", (content_hash(data),), lambda d=data: _may_define(d))
    ]
    cmake = [
        (item.path, item.display, data)
        for item, data in _contents(items, have, lambda i: i.language == "cmake")
    ]
    off = nvidia_options.options(cmake)
    embedded = [d.decode("utf-8", "replace") for _, d in python if b"#include" in d]
    # The macros read the build files only through the flags they define: keyed by those
    # (a comment added to setup.py does not derive the macros again).
    defines = build_defines.index(builds, off, memo, cmake=cmake)
    unbuilt = unbuilt_sources(cmake, linter.torch_built_for)
    db = _compile_db(linter, items)
    if db is not None:  # the ROCm build's own record replaces what was read from its files
        defines = db.defines(_root(items), defines)
        unbuilt = _db_unbuilt(db, items)
    hashes = {
        item.display: content_hash(have[index])
        for index, item in enumerate(items)
        if item.language == "cuda" and index in have
    }
    cython = {
        item.display: data.decode("utf-8", "replace")
        for item, data in _contents(items, have, lambda i: i.language == "cython")
    }
    inputs = [
        list(hashes.items()),
        repr((defines.facts(), sorted(defines.rocm.items()), sorted(defines.cuda_only.items()))),
        sorted(str(d) for d in linter.torch_built_dirs),
        [content_hash(t.encode()) for t in embedded],
        # sources no build compiles (read from the CMake files): their headers are unincluded
        sorted((str(p), why) for p, why in unbuilt.items()),
        sorted((p, content_hash(t.encode())) for p, t in cython.items()),
    ]
    linter.project_macros = memo.call(
        "project-macros",
        inputs,
        lambda: ProjectMacros.build(
            texts, defines, linter.torch_built_for, embedded, unbuilt, memo, hashes, cython
        ),
    )
    linter.extension_bindings = _extension_bindings(linter, have, python, items)
    linter.context_key = _python_and_build_context(linter, items, have, memo, off)
    linter.context_key += (
        "+ext"
        + hashlib.blake2b(linter.extension_bindings.digest.encode(), digest_size=8).hexdigest()
    )
    linter.context_key += f"+torch{linter.torch_floor}"  # safe fixes that need a newer torch
    if linter.text_read:  # files read as text get no compatibility header
        text_read = repr(sorted((str(p), w) for p, w in linter.text_read.items()))
        digest = hashlib.blake2b(text_read.encode(), digest_size=8).hexdigest()
        linter.context_key += "+txt" + digest
    return linter.context_key


def _extension_bindings(linter: Linter, have: dict, python: list, items: list[Found]):
    """Extension attributes the ROCm build never binds (context.extension_attrs). Every C++
    file is read (a run of Python rules alone still needs the bindings)."""
    from cuda2rocm.context import extension_attrs, preprocessor

    if not python:
        return extension_attrs.Bindings()
    cpp = {
        _norm(item.display): data.decode("utf-8", "replace")
        for item, data in _contents(items, have, lambda i: i.language == "cuda")
    }
    if not any("PYBIND11_MODULE" in t for t in cpp.values()):
        return extension_attrs.Bindings()
    models: dict[str, preprocessor.LineModel] = {}

    def skipped(path: str, line: int) -> str:
        if path not in models:
            built = bool(linter.torch_built_for(path))
            models[path] = preprocessor.model(cpp[path], path, built, linter.project_macros)
        return models[path].reason(line)

    shown = {item.path: item.display for item in items if item.language == "python"}
    modules = [
        (extension_attrs.module_name(shown.get(p, str(p))), d.decode("utf-8", "replace"))
        for p, d in python
    ]
    return extension_attrs.cuda_only_bindings(cpp, modules, skipped)


def _norm(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


def run(
    linter: Linter,
    paths: Iterable[str | Path],
    exclude: Iterable[str] = (),
    jobs: int = 1,
    cache: Cache | None = None,
    progress: Callable[[int, int], None] | None = None,
    items: list[Found] | None = None,
    fix_unsafe: bool | None = None,
    **discovery,
) -> LintResult:
    """Lint the files under `paths`; `items`, when given, are those files already discovered
    (the session's groups), and `paths` is not walked again. `fix_unsafe` (with a cache):
    also keep, for each file a `fix` would change, the outcome of `fix` with that setting
    (`fix`, `fix --check` and `fix --diff` after this lint parse nothing)."""
    problems: list[Problem] = []
    if items is None:
        items = list(discover(paths, exclude=exclude, problems=problems, **discovery))
    else:
        items = list(items)
    snapshot = warm.Snapshot(cache, items) if cache is not None else None
    result = None
    if snapshot is not None and snapshot.unchanged():
        result = snapshot.lint_result()  # an unchanged tree: nothing read, nothing derived
        if result is not None:
            assert cache is not None
            cache.hits += sum(1 for r in snapshot.previous.values() if r[3])  # files linted
            if progress:
                progress(0, 0)
    if result is None:
        with hashing(), fewer_collections():
            result = _run(linter, items, jobs, cache, progress, snapshot, fix_unsafe)
    for problem in problems:
        result.diagnostics.append(_general("read-error", problem.display, problem.message))
    result.diagnostics.sort(key=lambda d: d.sort_key)
    return result


def _phase(progress: Callable[[int, int], None] | None, name: str) -> None:
    """Name the run's phase to a progress display that shows phases (one with a `phase`
    method, cli's bar), so a long derivation of project facts never looks like 0% hung."""
    show = getattr(progress, "phase", None)
    if show is not None:
        show(name)


@contextlib.contextmanager
def fewer_collections(young: int = 10_000) -> Iterator[None]:
    """Python's cycle collector at a tenth of its default rate while files are linted. The
    syntax trees a lint allocates die young and are freed by reference counting; at the
    default (a collection every 700 allocations, a full one every 100) the collector scanned
    the growing live heap ~40 times, 4.6 of flash-attention's 24 CPU s (0.9 s here, peak
    memory 111 -> 133 MB). Pool workers forked inside inherit it."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], young), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _run(
    linter: Linter,
    items: list[Found],
    jobs: int,
    cache: Cache | None,
    progress: Callable[[int, int], None] | None,
    snapshot: warm.Snapshot | None,
    fix_unsafe: bool | None = None,
) -> LintResult:
    """The full run: read, derive the project facts, prefilter, lint what the cache lacks."""
    result = LintResult()
    result.files = sum(i.language not in CONTEXT_ONLY for i in items)  # Cython: facts only
    _phase(progress, "reading files")
    read: list[tuple[int, Found, bytes]] = []
    errors: set[int] = set()
    per_file: list[list] = [[] for _ in items]
    for index, item in enumerate(items):
        data, (early, notice) = linter.read(item)
        if data is None:
            per_file[index] = early
            if early:
                errors.add(index)
            if notice:
                result.notices.append(notice)
        else:
            read.append((index, item, data))
            kept = snapshot.known_hash(item, len(data)) if snapshot is not None else None
            if kept is not None:
                remember(data, kept)
    have: dict[int, bytes] = {}
    watch = warm.watching_reads() if snapshot is not None else contextlib.nullcontext(set())
    memo = warm.FactsMemo(snapshot) if snapshot is not None else None
    _phase(progress, "project facts")
    with watch as outside:
        prepare(linter, items, read, have, memo)
    _phase(progress, "linting files")
    pending: list[tuple[int, Found, bytes, str | None, bool | None]] = []
    if cache is None:
        fix_unsafe = None  # nowhere to keep fix outcomes
    verdicts: dict[int, tuple[bool, str | None]] = {}
    for index, item, data in read:
        wanted = snapshot.wants(item.display, data) if snapshot is not None else None
        if wanted is None:
            wanted = linter.wants(item.language, data)
        if not wanted:
            verdicts[index] = (False, None)
            continue
        digest = file_digest(linter, item, data) if cache is not None else None
        verdicts[index] = (True, digest)
        cached = cache.get(item.display, digest) if cache is not None else None
        if cached is not None:
            per_file[index] = cached
        else:
            pending.append((index, item, data, digest, fix_unsafe))
    # Progress counts the bytes parsed (files found, read or cached cost next to nothing).
    done, total = 0, sum(len(work[2]) for work in pending)
    if progress:
        progress(done, total)

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    outcomes: list[tuple[str, str, dict]] = []
    for work, (diagnostics, outcome) in zip(
        pending,
        map_files(linter, _lint_one, pending, jobs, advance, weight=lambda w: len(w[2])),
        strict=True,
    ):
        per_file[work[0]] = diagnostics
        if outcome is not None and work[3] is not None:
            outcomes.append((work[1].display, f"{work[3]}|{fix_unsafe}", outcome))
    if cache is not None:
        for index, item, _, digest, _ in pending:
            cache.put(item.display, digest, per_file[index])
        cache.save()
        if outcomes:  # where `fix` keeps them (fixer._fix_cache)
            kept = Cache(cache.directory, cache.key, kind="fixes")
            for display, key, outcome in outcomes:
                kept.put_raw(display, key, outcome)
            kept.save()
    for diagnostics in per_file:
        for d in diagnostics:
            if is_recovery_notice(d):
                if not d.guarded:  # no notice about code ROCm never compiles
                    result.notices.append(Notice(d.path, d.message, skipped=False))
            else:
                (result.guarded if d.guarded else result.diagnostics).append(d)
    result.diagnostics += _component_summaries(linter, result.guarded)
    recipes = {
        item.display: data.decode("utf-8", "replace")
        for _, item, data in read
        if item.language in ("dockerfile", "shell")
    }
    if recipes:
        rocm_build = (
            bool(getattr(linter, "hipified_dirs", None))
            or (linter.build_membership is not None and _rocm_build_exists(linter.build_membership))
            or any(builds_for_rocm(item.path.name, data) for _, item, data in read)
        )
        result.diagnostics = nvidia_recipes(result.diagnostics, recipes, rocm_build)
    result.diagnostics.sort(key=lambda d: d.sort_key)
    result.guarded.sort(key=lambda d: d.sort_key)
    if snapshot is not None:
        for index, item in enumerate(items):
            wanted, digest = verdicts.get(index, (None, None))
            snapshot.record(item, have.get(index), wanted, digest, error=index in errors)
        warm.save_facts(snapshot, linter, memo)
        snapshot.save(result, outside)
    return result
