"""Which files torch's cpp_extension hipify rewrites: the walk of `hipify_python.hipify`.

On ROCm, `CUDAExtension(...)` calls (torch 2.13 torch/utils/cpp_extension.py, CUDAExtension)
`hipify(project_directory=build_dir, output_directory=build_dir, header_include_dirs=
include_dirs, includes=[build_dir/*], extra_files=<sources>, is_pytorch_extension=True,
hipify_extra_files_only=True)` with `build_dir = os.getcwd()` (the setup.py folder), and
`load()` / `load_inline()` (`_jit_compile`, when a source is CUDA) call it on their build
directory with `header_include_dirs=extra_include_paths`, `ignores=[ROCM_HOME/*, torch/*]`
and every file processed. What the walk reaches (torch/utils/hipify/hipify_python.py):

- `all_files`: the files under the output directory with one of `EXTENSIONS` (top-level
  `.git`, `build` and `third_party` skipped, `third_party/nvfuser` walked; no symlinked
  folder entered), passing the `includes`/`ignores` fnmatch patterns; the sources; and every
  file with a `HEADER_EXTENSIONS` suffix under each header include dir (relative ones joined
  to the output directory), through the same patterns.
- Processed: the sources (`hipify_extra_files_only`) or all of `all_files`; then, from each
  processed file, every `#include "x"` (looked up beside the file first, then in the include
  dirs), `#include <x>` (the include dirs only) and `#define THC_GENERIC_FILE "x"`, spelled
  exactly as hipify's regular expressions have it (textual: `#if` does not matter), where the
  last include dir holding `x` wins (its loop does not stop at the first). A file found that
  way is rewritten only when it is in `all_files`; otherwise hipify marks it "ignored" and
  does not follow its includes.

The model is read from the tree, never run; tests/test_hipify_reach.py compares it with
torch's own `hipify()` on fixtures.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

#: hipify()'s default `extensions` and `header_extensions` (torch 2.13).
EXTENSIONS = (".cu", ".cuh", ".c", ".cc", ".cpp", ".h", ".in", ".hpp")
HEADER_EXTENSIONS = (".cuh", ".h", ".hpp")
#: hipify_python's RE_QUOTE_HEADER, RE_ANGLE_HEADER and RE_THC_GENERIC_FILE.
_QUOTE = re.compile(r'#include "([^"]+)"')
_ANGLE = re.compile(r"#include <([^>]+)>")
_THC_GENERIC = re.compile(r'#define THC_GENERIC_FILE "([^"]+)"')
#: Includes mk_repl renames by prefix without looking for the file.
_RENAMED = (
    "ATen/cuda",
    "ATen/native/cuda",
    "ATen/native/nested/cuda",
    "ATen/native/quantized/cuda",
    "ATen/native/sparse/cuda",
    "ATen/native/transformers/cuda",
    "THC/",
)
#: Top-level folders matched_files_iter does not enter (and the one it adds back).
_SKIPPED_TOP = frozenset({".git", "build", "third_party"})
_WALKED_BACK = ("third_party", "nvfuser")
_MAX_FILES = 20000


@dataclass(frozen=True)
class HipifyCall:
    """One `hipify()` call, with torch's arguments. Paths are absolute and normalized as
    `os.path.abspath` leaves them (symlinks kept, as hipify compares strings)."""

    output_directory: str
    sources: tuple[str, ...]
    header_include_dirs: tuple[str, ...] = ()
    includes: tuple[str, ...] = ("*",)
    ignores: tuple[str, ...] = ()
    extra_files_only: bool = False
    #: Whether the output directory is a project folder worth walking (a `load()` build
    #: directory is torch's cache, which holds none of the project's files).
    walk_output: bool = True


def setup_call(build_dir: str, sources: Iterable[str], include_dirs: Iterable[str]) -> HipifyCall:
    """The call `CUDAExtension` makes: `build_dir` is the setup script's folder."""
    build_dir = os.path.abspath(build_dir)
    return HipifyCall(
        output_directory=build_dir,
        sources=tuple(os.path.abspath(os.path.join(build_dir, s)) for s in sources),
        header_include_dirs=tuple(include_dirs),
        includes=(os.path.join(build_dir, "*"),),
        extra_files_only=True,
    )


def load_call(base: str, sources: Iterable[str], include_dirs: Iterable[str]) -> HipifyCall:
    """The call `load()`/`load_inline()` makes; relative paths are read from `base` (the
    script's folder), as the project's own cwd is not known."""
    base = os.path.abspath(base)
    return HipifyCall(
        output_directory=base,
        sources=tuple(os.path.abspath(os.path.join(base, s)) for s in sources),
        header_include_dirs=tuple(os.path.abspath(os.path.join(base, d)) for d in include_dirs),
        walk_output=False,
    )


@dataclass
class Reach:
    """What one call (or several) reaches: `hipified` are rewritten by hipify; `ignored` are
    found through an include of a processed file but left alone (not in `all_files`)."""

    hipified: set[str] = field(default_factory=set)
    ignored: set[str] = field(default_factory=set)

    def update(self, other: Reach) -> None:
        self.hipified |= other.hipified
        self.ignored |= other.ignored


def _fnmatch(path: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatch(path, p) for p in patterns)


class _AllFiles:
    """`all_files` of one call as a membership test (no walk of the whole output folder)."""

    def __init__(self, call: HipifyCall) -> None:
        self.call = call
        self.extra = set(call.sources)
        self.listed: set[str] = set()
        for folder in call.header_include_dirs:
            base = folder if os.path.isabs(folder) else os.path.join(call.output_directory, folder)
            root = Path(base)
            if not root.is_dir():
                continue
            for n, path in enumerate(root.rglob("*")):
                if n > _MAX_FILES:
                    break
                name = str(path)
                if (
                    path.is_file()
                    and _fnmatch(name, call.includes)
                    and not _fnmatch(name, call.ignores)
                    and path.name.endswith(HEADER_EXTENSIONS)
                ):
                    self.listed.add(name)

    def __contains__(self, path: str) -> bool:
        return path in self.extra or path in self.listed or self._walked(path)

    def _walked(self, path: str) -> bool:
        call = self.call
        if not call.walk_output or not path.endswith(EXTENSIONS):
            return False
        top = call.output_directory
        rel = os.path.relpath(path, top)
        parts = rel.split(os.sep)
        if parts[0] in ("..", "", "."):
            return False
        if parts[0] in _SKIPPED_TOP and tuple(parts[:2]) != _WALKED_BACK:
            return False
        folder = top
        for part in parts[:-1]:  # os.walk enters no symlinked folder
            folder = os.path.join(folder, part)
            if os.path.islink(folder):
                return False
        return (
            os.path.isfile(path)
            and _fnmatch(path, call.includes)
            and not _fnmatch(path, call.ignores)
        )


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _found(call: HipifyCall, including: str, name: str, beside: bool) -> str | None:
    """The file mk_repl finds for an include of `name` in `including` (None: none)."""
    if beside:
        here = os.path.abspath(os.path.join(os.path.dirname(including), name))
        if os.path.exists(here):
            return here
    found = None
    for folder in call.header_include_dirs:  # no break: the last folder holding it wins
        candidate = os.path.abspath(os.path.join(call.output_directory, folder, name))
        if os.path.exists(candidate):
            found = candidate
    return found


def included(call: HipifyCall, path: str, text: str) -> list[str]:
    """The files hipify looks at from one processed file, in its order."""
    out = []
    for pattern, beside in ((_QUOTE, True), (_ANGLE, False), (_THC_GENERIC, True)):
        for match in pattern.finditer(text):
            name = match.group(1)
            if name.startswith(_RENAMED) or (name.startswith("THC") and name[:4] != "THCP"):
                continue  # renamed by prefix, never looked for
            found = _found(call, path, name, beside)
            if found is not None:
                out.append(found)
    return out


def reach(call: HipifyCall) -> Reach:
    """The files one hipify() call rewrites, and those it finds but leaves alone."""
    members = _AllFiles(call)
    result = Reach()
    start = list(call.sources)
    if not call.extra_files_only:
        start += sorted(members.listed)  # (a load() build folder holds no project file)
    todo = [p for p in dict.fromkeys(start) if p in members and os.path.isfile(p)]
    result.hipified.update(todo)
    while todo and len(result.hipified) < _MAX_FILES:
        path = todo.pop()
        text = _read(path)
        if text is None:
            continue
        for found in included(call, path, text):
            if found in result.hipified or found in result.ignored:
                continue
            if found in members and os.path.isfile(found):
                result.hipified.add(found)
                todo.append(found)
            else:
                result.ignored.add(found)
    result.ignored -= result.hipified
    return result
