"""The C/C++ headers a Cython file includes, in order, and the `.pxi` files it includes.

Cython turns each `cdef extern from "x.h":` block into `#include "x.h"` in the C/C++ file it
generates, in the order the blocks come in the module, and `include "y.pxi"` inserts y's text
in place, so y's blocks are included there. These are include edges like an `#include`
(`include_context`): a header a `.pyx` includes after the project's compatibility header sees
that header's names. A block `from *` (verbatim C code) includes nothing.
"""

from __future__ import annotations

import re

#: `cdef extern from "x.h":`, `cdef extern from "x.h" nogil:`, `... namespace "ns":`.
_EXTERN = re.compile(r"""^[ \t]*(?:cdef[ \t]+)?extern[ \t]+from[ \t]+(["'])([^"'\n]+)\1""", re.M)
#: `include "y.pxi"` (a Cython statement at the start of a line).
_INCLUDE = re.compile(r"""^[ \t]*include[ \t]+(["'])([^"'\n]+)\1""", re.M)
SUFFIXES = (".pyx", ".pxd", ".pxi")


def includes(text: str) -> tuple[tuple[str, str, int], ...]:
    """(kind, name, line) of a Cython file's includes in order: kind "extern" for a header a
    `cdef extern from` block names, "include" for a file an `include` statement inserts."""
    found = [(m.start(), "extern", m.group(2).strip()) for m in _EXTERN.finditer(text)]
    found += [(m.start(), "include", m.group(2).strip()) for m in _INCLUDE.finditer(text)]
    found.sort()
    return tuple((kind, name, text.count("\n", 0, at) + 1) for at, kind, name in found)
