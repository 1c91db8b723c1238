"""C/C++ files a build other than torch's cpp_extension compiles: CMake targets and Cython
modules. A finding there must not point at cpp_extension (its hipify plays no part); the
message says which build compiles the file instead.

- CMake: a source word of any command (`add_library(x a.cu)`, `set(SRCS b.cu)`,
  `target_sources`, ...) that names an existing file, relative to the CMake file's folder
  (`${CMAKE_CURRENT_SOURCE_DIR}/` and `${CMAKE_CURRENT_LIST_DIR}/` read as that folder), and
  the files a `file(GLOB|GLOB_RECURSE var <patterns>)` there matches.
- Cython: the headers a `.pyx`/`.pxd`/`.pxi` names in `cdef extern from "x.h"` (Cython emits
  `#include "x.h"`; read beside the Cython file), and the `.pyx` sources' C/C++ companions.
- Then the headers those files include by a quoted path that exists beside the includer,
  followed through quoted includes (the compiler looks there first).

What is listed only says that such a build compiles the file; torch's cpp_extension may build
it too (the caller asks that first).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from cuda2rocm.context.cmake_flow import _match
from cuda2rocm.context.cython_includes import includes as cython_includes
from cuda2rocm.context.unbuilt import _commands, _strip

_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hip", ".inl")
_HERE = ("${CMAKE_CURRENT_SOURCE_DIR}/", "${CMAKE_CURRENT_LIST_DIR}/")
_QUOTED = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
_MAX = 20000


def _cmake_files(path: Path, data: bytes) -> set[Path]:
    here = path.resolve().parent
    found: set[Path] = set()
    text = _strip(data.decode("utf-8", "replace"))
    for command, words in _commands(text):
        if command.lower() == "file" and len(words) > 2 and words[0] in ("GLOB", "GLOB_RECURSE"):
            for word in words[2:]:
                for prefix in _HERE:
                    word = word.replace(prefix, "")
                if "${" in word or word.isupper():
                    continue
                found.update(_match(here, word, words[0] == "GLOB_RECURSE") or [])
            continue
        for word in words:
            for prefix in _HERE:
                word = word.replace(prefix, "")
            if "${" in word or not word.endswith(_SUFFIXES):
                continue
            candidate = here / word
            if candidate.is_file():
                found.add(candidate.resolve())
    return {f.resolve() for f in found if f.name.endswith(_SUFFIXES)}


def _cython_files(path: Path, data: bytes) -> set[Path]:
    here = path.resolve().parent
    found = set()
    for kind, name, _ in cython_includes(data.decode("utf-8", "replace")):
        candidate = here / name
        if kind == "extern" and candidate.is_file():
            found.add(candidate.resolve())
    return found


def _closure(start: Iterable[Path]) -> set[Path]:
    """`start` and the headers reached from it through quoted includes found beside."""
    seen = set(start)
    todo = list(seen)
    while todo and len(seen) < _MAX:
        path = todo.pop()
        try:
            text = path.read_text("utf-8", "replace")
        except OSError:
            continue
        for name in _QUOTED.findall(text):
            candidate = Path(os.path.normpath(path.parent / name))
            if candidate not in seen and candidate.is_file():
                seen.add(candidate)
                todo.append(candidate)
    return seen


def other_built(files: Iterable[tuple[Path, str, bytes]]) -> dict[Path, str]:
    """Resolved path -> "CMake" or "Cython" for what those builds compile, from the run's
    (path, language, bytes) of CMake and Cython files."""
    by: dict[str, set[Path]] = {"CMake": set(), "Cython": set()}
    for path, language, data in files:
        if language == "cmake":
            by["CMake"] |= _cmake_files(path, data)
        elif language == "cython":
            by["Cython"] |= _cython_files(path, data)
    out: dict[Path, str] = {}
    for kind in ("Cython", "CMake"):  # CMake wins a file both name
        out.update(dict.fromkeys(_closure(by[kind]), kind))
    return out
