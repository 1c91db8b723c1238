"""Sources no build of the run compiles: those a CMake file lists that the project never adds.

A project vendors upstream code with its upstream build file: FBGEMM copies CUTLASS's
`examples/77_blackwell_fmha` (its `CMakeLists.txt` calls `cutlass_example_add_executable`,
which only CUTLASS's own build defines) into `gen_ai/src/attention/cuda/cutlass_blackwell_fmha`
and compiles only the folder's `blackwell_*.cu` (a glob in `gen_ai/CMakeLists.txt`). The
example programs `77_blackwell_*.cu` are compiled by nothing the project builds, for ROCm or
for CUDA: findings in them are not on the ROCm path, and a header they include is compiled
only through its other includers (`project_macros.unincluded_headers`).

A source counts as unbuilt only when all of this is read from the run's files:

- the CMake file that lists it is a `CMakeLists.txt` with no `project()` of its own (a
  sub-directory file, not a project one configures alone);
- an enclosing folder of the run holds the project's `CMakeLists.txt` (one with `project()`):
  the build the user came to port is in the run;
- no CMake file of the run adds its folder: no `add_subdirectory()`, `include(<dir>/
  CMakeLists.txt)` or `SOURCE_DIR` (ExternalProject_Add, FetchContent_Declare) names it, and
  every such argument that is computed (`${ASMJIT_SRC_DIR}`) reads a variable the run `set()`s,
  only to paths that end in another folder's name (a variable the run never sets, `-D` from
  outside, keeps everything unknown);
- nothing else builds it: no glob or source list of another CMake file matches it (read
  widest: GLOB_RECURSE where the glob's kind is unknown), and torch's cpp_extension does not
  build its folder (`torch_built`, the run's `torch_built_dirs`, which reads setup.py globs).

Anything short of that keeps the file reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from cuda2rocm.context.cmake_flow import _match

_COMPILED = (".cu", ".cpp", ".cc", ".cxx", ".c", ".hip")
_WORD = re.compile(r'"([^"]*)"|([^\s"]+)')
_VAR = re.compile(r"\$\{(\w+)\}")


def _strip(text: str) -> str:
    return re.sub(r"#[^\n]*", "", text)


def _commands(text: str) -> Iterable[tuple[str, list[str]]]:
    from cuda2rocm.context.build import _commands as commands

    for name, argument, _ in commands(text, every=True):
        yield (
            name,
            [
                m.group(1) if m.group(1) is not None else m.group(2)
                for m in _WORD.finditer(argument)
            ],
        )


_FUNCTION = re.compile(
    r"^[ \t]*(?:function|macro)[ \t]*\([ \t]*(\w+)(.*?)^[ \t]*end(?:function|macro)\b",
    re.M | re.S | re.I,
)


def _recursive_globs(texts: Iterable[str]) -> dict[str, bool]:
    """Command -> whether the patterns it takes may be globbed recursively: `file(GLOB)` no,
    `file(GLOB_RECURSE)` yes, a function of the run as the commands its body calls (FBGEMM's
    `glob_files_nohip` -> `glob_files` -> `file(GLOB)`); any other command: yes (unknown)."""
    bodies = {m.group(1).lower(): m.group(2) for t in texts for m in _FUNCTION.finditer(t)}
    out: dict[str, bool] = {}

    def recursive(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in out:
            return out[name]
        body = bodies.get(name)
        if body is None or name in seen:
            return True
        if "GLOB_RECURSE" in body:
            out[name] = True
            return True
        called = {n for n, _ in _commands(body) if n in bodies}
        out[name] = any(recursive(c, seen | {name}) for c in called)
        return out[name]

    for name in bodies:
        recursive(name)
    return out


def _sets(texts: Iterable[str]) -> dict[str, list[str]]:
    """Variable -> the first words of every `set(VAR ...)` in the run."""
    out: dict[str, list[str]] = {}
    for text in texts:
        for name, words in _commands(text):
            if name == "set" and len(words) > 1:
                out.setdefault(words[0], []).append(words[1])
    return out


def _computed_may_reach(word: str, folder: Path, sets: dict[str, list[str]]) -> bool:
    """Whether a computed `add_subdirectory`/`include` argument may name `folder`."""
    tail = _VAR.sub("", word).strip("/")
    if tail.endswith("CMakeLists.txt"):  # include(<dir>/CMakeLists.txt)
        tail = str(PurePosixPath(tail).parent).strip("./")
    if tail:
        return PurePosixPath(tail).name == folder.name
    for name in _VAR.findall(word):
        values = sets.get(name)
        if not values:
            return True  # set outside the run: any folder
        for value in values:
            rest = _VAR.sub("", value).strip("/")
            if not rest or PurePosixPath(rest).name == folder.name:
                return True
    return False


def unbuilt_sources(
    cmake_files: Iterable[tuple[Path, str, bytes]],
    torch_built: Callable[[str], bool] | None = None,
) -> dict[Path, str]:
    """Resolved path -> why no build of the run compiles it. `cmake_files`: (path, display,
    bytes) of the run's CMake files; `torch_built(path)`: whether torch's cpp_extension builds
    the file (such a file is not unbuilt)."""
    files = [
        (p.resolve(), shown, _strip(d.decode("utf-8", "replace"))) for p, shown, d in cmake_files
    ]
    projects = {
        p.parent for p, _, text in files if p.name == "CMakeLists.txt" and _has(text, "project")
    }
    sets = _sets(text for _, _, text in files)
    added: set[Path] = set()
    computed: list[str] = []
    for path, _, text in files:
        for name, words in _commands(text):
            # ExternalProject_Add / FetchContent_Declare(... SOURCE_DIR <dir> ...) configure
            # <dir> as a project of its own.
            for i, word in enumerate(words[:-1]):
                if word == "SOURCE_DIR":
                    target = words[i + 1]
                    if "${" in target or "$<" in target:
                        computed.append(target)
                    else:
                        added.add((path.parent / target).resolve())
            if name in ("add_subdirectory", "include") and words:
                word = words[0]
                if "${" in word or "$<" in word:
                    computed.append(word)
                elif name == "add_subdirectory":
                    added.add((path.parent / word).resolve())
                elif word.endswith("CMakeLists.txt"):
                    added.add((path.parent / word).resolve().parent)
    globs = _recursive_globs(text for _, _, text in files)
    seen: dict = {}
    out: dict[Path, str] = {}
    for path, shown, text in files:
        folder = path.parent
        if (
            path.name != "CMakeLists.txt"
            or folder in projects
            or folder in added
            or not any(folder.is_relative_to(p) and folder != p for p in projects)
            or any(_computed_may_reach(w, folder, sets) for w in computed)
        ):
            continue
        for _, words in _commands(text):
            for word in words:
                if not word.endswith(_COMPILED) or "${" in word or "*" in word:
                    continue
                found = (folder / word).resolve()
                if not found.is_file() or found in out:
                    continue
                if (torch_built is not None and torch_built(str(found))) or _listed_elsewhere(
                    found, path, files, globs, seen
                ):
                    continue
                out[found] = (
                    f"no build of the run compiles this file: only {shown} lists it, and no "
                    "CMake file of the project adds that folder (add_subdirectory), nor does "
                    "any other build take it"
                )
    return out


def _has(text: str, command: str) -> bool:
    return any(name == command for name, _ in _commands(text))


def _listed_elsewhere(
    found: Path,
    own: Path,
    files: list[tuple[Path, str, str]],
    globs: dict[str, bool],
    _seen: dict | None = None,
) -> bool:
    """Whether another CMake file's glob or source word may name `found` (unknown: yes).
    `_seen` memoises globs across the files of one run."""
    _seen = {} if _seen is None else _seen
    for path, _, text in files:
        if path == own or (found.name not in text and "*" not in text and "?" not in text):
            continue
        for name, words in _commands(text):
            recurse = (
                (len(words) > 0 and words[0] == "GLOB_RECURSE")
                if name == "file"
                else globs.get(name, True)
            )
            for word in words:
                if not any(c in word for c in "*?[") and not word.endswith(found.name):
                    continue
                key = (path.parent, word, recurse)
                if key not in _seen:
                    _seen[key] = _match(path.parent, word, recurse)
                matched = _seen[key]
                if matched is None:
                    tail = _VAR.sub("", word).rsplit("/", 1)[-1]
                    if tail and PurePosixPath(found.name).match(tail or "*"):
                        return True
                    continue
                if found in matched:
                    return True
    return False
