"""Running a lint over a tree: read and prefilter in one pass, consult the cache, parse in parallel.

The main process discovers, reads, hashes and prefilters every file (cheap, I/O bound); only the
files that need parsing go to a process pool, in chunks. Results are sorted, so a parallel run
prints exactly what a serial one does.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from cuda2rocm.build_context import python_sources, torch_built_dirs
from cuda2rocm.cache import Cache, content_hash
from cuda2rocm.discover import Found, Problem, discover
from cuda2rocm.engine import Linter, LintResult, _general
from cuda2rocm.model import Safety

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
    return content_hash(data) + ("+torch" if built else "")


def nothing_to_fix(
    linter: Linter, cache: Cache | None, item: Found, data: bytes, unsafe: bool
) -> bool:
    """Whether the cache already shows that `fix` would change nothing in this file (its
    cached findings have no applicable fix): then `fix` need not parse it again."""
    if cache is None:
        return False
    found = cache.get(item.display, file_digest(linter, item, data))
    if found is None:
        return False
    return not any(
        d.fix is not None
        and d.fix.edits
        and not d.guarded
        and (unsafe or d.fix.safety is not Safety.UNSAFE)
        for d in found
    )


def _lint_one(linter: Linter, work: tuple[int, Found, bytes, str | None]) -> list:
    _, item, data, _ = work
    return linter.lint_data(item, data)


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


def run(
    linter: Linter,
    paths: Iterable[str | Path],
    exclude: Iterable[str] = (),
    jobs: int = 1,
    cache: Cache | None = None,
    progress: Callable[[int, int], None] | None = None,
    **discovery,
) -> LintResult:
    result = LintResult()
    problems: list[Problem] = []
    items = list(discover(paths, exclude=exclude, problems=problems, **discovery))
    result.files = len(items)
    read: list[tuple[int, Found, bytes]] = []
    per_file: list[list] = [[] for _ in items]
    for index, item in enumerate(items):
        data, (early, notice) = linter.read(item)
        if data is None:
            per_file[index] = early
            if notice:
                result.notices.append(notice)
        else:
            read.append((index, item, data))
    linter.torch_built_dirs = torch_built_dirs(python_sources(items, read))
    pending: list[tuple[int, Found, bytes, str | None]] = []
    for index, item, data in read:
        if not linter.wants(item.language, data):
            continue
        digest = file_digest(linter, item, data) if cache is not None else None
        cached = cache.get(item.display, digest) if cache is not None else None
        if cached is not None:
            per_file[index] = cached
        else:
            pending.append((index, item, data, digest))
    # Progress counts the bytes parsed (files found, read or cached cost next to nothing).
    done, total = 0, sum(len(work[2]) for work in pending)
    if progress:
        progress(done, total)

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    for work, diagnostics in zip(
        pending,
        map_files(linter, _lint_one, pending, jobs, advance, weight=lambda w: len(w[2])),
        strict=True,
    ):
        per_file[work[0]] = diagnostics
    if cache is not None:
        for index, item, _, digest in pending:
            cache.put(item.display, digest, per_file[index])
        cache.save()
    for diagnostics in per_file:
        for d in diagnostics:
            (result.guarded if d.guarded else result.diagnostics).append(d)
    for problem in problems:
        result.diagnostics.append(_general("read-error", problem.display, problem.message))
    result.diagnostics.sort(key=lambda d: d.sort_key)
    result.guarded.sort(key=lambda d: d.sort_key)
    return result
