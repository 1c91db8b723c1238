"""C/C++ files the project's Python code reads as text: what compiles them is not a build file.

A project hands some kernel sources to a compiler at run time or through a generator: the
Python side builds a path to the file by name (`os.path.join(here, "kernels", "scan.cuh")`),
reads it and passes the text to NVRTC / hiprtc (`RawModule(code=...)`), pastes it into a
generated translation unit, or copies it into a temporary build folder. For such a file no
include path of any build is known, so a fix must not make it include the compatibility
header: the run-time compiler would not find it (and the header includes the runtime headers,
which NVRTC and hiprtc do not accept), and the package need not ship it.

A file counts as read as text when a string literal of a Python file of the run spells its
file name (alone or as the end of a path) and it sits in that Python file's folder tree (its
folder or its parent's): the project names it from its own code. The caller leaves out files
a build compiles (torch's cpp_extension, CMake, Cython): those the build's include paths
reach. Findings in the file stay reported; only the compatibility header is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

_SUFFIXES = ("cuh", "cu", "h", "hpp", "hxx", "cpp", "cc", "cxx", "inl", "hip")
_LITERAL = re.compile(
    (r"[\"']([\w./\\-]*?([\w.-]+\.(?:" + "|".join(_SUFFIXES) + r")))[\"']").encode()
)


def read_as_text(python: Iterable[tuple[Path, bytes]], sources: Iterable[Path]) -> dict[Path, str]:
    """Resolved C/C++ path -> "python_file:line" of the literal that names it, for the files
    of `sources` a Python file of `python` names (module docstring)."""
    by_name: dict[str, list[Path]] = {}
    for path in sources:
        by_name.setdefault(path.name, []).append(path.resolve())
    if not by_name:
        return {}
    found: dict[Path, str] = {}
    for py_path, data in python:
        if not any(s.encode() in data for s in (".cu", ".h", ".cpp", ".cc", ".inl", ".hip")):
            continue
        tree = py_path.resolve().parent
        tree = tree.parent if tree.parent != tree else tree
        for match in _LITERAL.finditer(data):
            name = match.group(2).decode("utf-8", "replace")
            for candidate in by_name.get(name, ()):
                if candidate in found or not candidate.is_relative_to(tree):
                    continue
                line = data.count(b"\n", 0, match.start()) + 1
                found[candidate] = f"{py_path.name}:{line}"
    return found
