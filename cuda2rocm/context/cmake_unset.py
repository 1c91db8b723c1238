"""Project variables a ROCm configure never sets: `if(<variable>)` is false there.

A ported CMake project often turns its vendor choice into flags of its own:

    if(GPU STREQUAL "CUDA")            # a branch a ROCm configure never takes
      set(HAVE_NV_GPU TRUE)
    elseif(GPU STREQUAL "ROCM")
      set(HAVE_AMD_GPU TRUE)
    endif()
    ...                                # another file, later
    if(HAVE_NV_GPU)
      add_subdirectory(ops/cuda)
    endif()

CMake's `if(<variable>)` is true only for a variable defined to a value that is not a false
constant; an undefined one is false (CMake docs, `if()`, "Basic Expressions"). So a variable
the project writes only with `set()` inside branches a ROCm configure never takes is
undefined on ROCm, and every `if(HAVE_NV_GPU)` is false there, in any file of the run.

Only when that is certain; the variable stays unknown when any of these holds:
- some `set()` of it may run on ROCm (a live or unknown branch);
- anything else names it as a plain word outside `if()`/`elseif()`/`while()` conditions: an
  `option()` or `CACHE` entry (the user may pass `-D`), `list()`/`string()`/`math()`/`file()`
  and other commands that write their result into a variable, a function's parameter;
- a Python file of the run spells `-D<variable>` (a build script that passes it);
- it is CMake's own (`CMAKE_*`) or a name a module sets (`*_FOUND`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

#: Conditions read variables; they never define one.
_READERS = frozenset({"if", "elseif", "while", "else", "endif", "endwhile"})
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def rocm_unset(
    cmake_texts: Iterable[str],
    rocm_pass: Callable[[str], list[tuple[str, list[str], int, str | None]]],
    python: Iterable[bytes] = (),
) -> dict[str, str]:
    """Variable -> why it is undefined on a ROCm configure. `cmake_texts`: the run's CMake
    files, comments stripped; `rocm_pass(text)`: its commands as (command, words, line, why
    dead on ROCm or None), as `build._cmake_pass` gives them; `python`: the run's Python files'
    bytes (a `-D<name>` there may pass it)."""
    dead_sets: dict[str, str] = {}
    spoiled: set[str] = set()
    for text in cmake_texts:
        if "set" not in text:
            continue
        for command, words, line, dead in rocm_pass(text):
            if command in _READERS or not words:
                continue
            if command == "set" and _NAME.match(words[0]) and "CACHE" not in words:
                if dead is None:
                    spoiled.add(words[0])
                else:
                    dead_sets.setdefault(words[0], f"set only {_under(dead)} (line {line})")
                continue
            spoiled.update(w for w in words if _NAME.match(w))
    python = list(python)
    out = {}
    for name, why in dead_sets.items():
        if name in spoiled or name.startswith("CMAKE_") or name.endswith("_FOUND"):
            continue
        if any(f"-D{name}".encode() in data for data in python):
            continue
        out[name] = why
    return out


def _under(dead: str) -> str:
    """`dead` (a branch's reason) as the place a set() sits."""
    return dead if dead.startswith(("after ", "under ")) else f"under {dead}"
