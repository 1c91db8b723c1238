"""The clause a finding uses to say why nothing renames a file's CUDA names for ROCm.

Which build compiles a file decides the words: "not hipified by torch's cpp_extension" only
where the model knows a torch extension reaches the file and its hipify does not; a file a
CMake or Cython build compiles is not told about cpp_extension at all. The phrases are data
(data/build_notes.toml).
"""

from __future__ import annotations

import functools
import sys
from importlib import resources

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@functools.cache
def _clauses() -> dict[str, str]:
    text = resources.files("cuda2rocm.data").joinpath("build_notes.toml").read_text("utf-8")
    return tomllib.loads(text)["clauses"]


def not_hipified(note: str, would: str = "hipify it") -> str:
    """The clause for a file with build note `note` (CppView.build_note; "" unknown)."""
    clauses = _clauses()
    return clauses.get(note or "unknown", clauses["unknown"]).format(would=would)
