"""CUDA-only CMake sub-projects: a folder configured on its own, for nvcc only, built by nothing.

A repository often holds a CMake project of its own inside it: a C++ test harness, a benchmark,
a sample (`tests/cpp/CMakeLists.txt` with `project(kernel_tests LANGUAGES CXX CUDA)`). CMake
reads a `CMakeLists.txt` only as the top of a configure or through `add_subdirectory` (CMake
docs, `project()` and `add_subdirectory()`), so when no other build file of the run adds the
folder, names its path, or hands it to `ExternalProject_Add`, nothing the project builds for
ROCm compiles it: someone configures it by hand, with nvcc, as its `project()` says.

Porting such a harness is one decision (port it to HIP, or keep it NVIDIA-only), not one
finding per `cudaMemcpy` in it. So it becomes a component (signal 1c of `vendor_only`): one
`cuda-only-component` finding at its `project()` line, every other finding of the folder
guarded with that reason. Only when all of these hold, anything less stays reported:
- the folder is not the run's root (that is the project the user came to port);
- its `project()` (or an `enable_language`) names CUDA, and none of its CMake files mentions
  ROCm/HIP or an AMD GPU target (a HIP branch may build it);
- no other CMake or Python file of the run names the folder: not by its path from the run's
  root, not by `add_subdirectory` from an enclosing folder, and no enclosing CMake file adds
  a subdirectory through a variable (which could be this one);
- no source in it spells a HIP test (`__HIP_PLATFORM_AMD__`, `USE_ROCM`, a `hip/` include):
  a ported source says a ROCm build of it exists somewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

_COMMENT = re.compile(r"#[^\n]*")
_PROJECT = re.compile(r"\bproject\s*\(([^)]*)\)", re.I)
_ENABLE_CUDA = re.compile(r"\benable_language\s*\(\s*CUDA\b", re.I)
_ADD_SUBDIR = re.compile(r"\badd_subdirectory\s*\(\s*\"?([^\s\")]+)", re.I)
_EXTERNAL = re.compile(r"\b(?:ExternalProject_Add|FetchContent_Declare)\b", re.I)
#: A source that spells a HIP test or header: ported, so a ROCm build of it may exist.
_HIP_SOURCE = re.compile(rb"__HIP_PLATFORM_|__HIPCC__|\bUSE_ROCM\b|<hip/|\"hip/|__HIP__")


def standalone_components(
    files: Iterable[tuple[Path, str, str, bytes]],
    root: Path | None,
    rocm: re.Pattern[str],
    amd_target: re.Pattern[str],
    compiled: tuple[str, ...],
) -> list[tuple[Path, str, int, str, str]]:
    """(folder, build file display, line of `project()`, why, label) of each standalone
    CUDA-only CMake sub-project. `files`: (path, display, language, bytes) of the run's CMake
    and Python files; `rocm` / `amd_target`: what marks a CMake file as having a ROCm path."""
    files = list(files)
    if root is None or not any(
        lang == "cmake" and p.name == "CMakeLists.txt" and b"CUDA" in data
        for p, _, lang, data in files
    ):
        return []  # the common case: no CMake file names CUDA, nothing to decode or resolve
    root = root.resolve()
    files = [(p.resolve(), d, lang, data) for p, d, lang, data in files]
    texts = {p: data.decode("utf-8", "replace") for p, _, lang, data in files}
    cmake = {
        p: _COMMENT.sub("", texts[p])
        for p, _, lang, _ in files
        if lang == "cmake" and p.name == "CMakeLists.txt"
    }
    found = []
    for path, display, _lang, _data in files:
        if path not in cmake:
            continue
        folder = path.parent
        if folder == root or not folder.is_relative_to(root):
            continue
        code = cmake[path]
        project = _PROJECT.search(code)
        if project is None or not (
            re.search(r"\bCUDA\b", project.group(1)) or _ENABLE_CUDA.search(code)
        ):
            continue
        own = [c for p, c in cmake.items() if p.is_relative_to(folder)]
        own += [
            _COMMENT.sub("", texts[p])
            for p in texts
            if p.suffix == ".cmake" and p.is_relative_to(folder)
        ]
        if any(rocm.search(c) or amd_target.search(c) for c in own):
            continue
        if _named_elsewhere(folder, root, files, texts, cmake):
            continue
        if _ported_source(folder, compiled):
            continue
        line = code.count("\n", 0, project.start()) + 1
        label = f"`{folder.relative_to(root).as_posix()}/`"
        why = (
            "a CMake project of its own for CUDA (`project(...CUDA...)`), which no other build "
            "file of the run adds or names and which has no ROCm branch: nothing the project "
            "builds for ROCm compiles it; porting it (or keeping it NVIDIA-only) is one decision"
        )
        found.append((folder, display, line, why, label))
    return [f for f in found if not any(o is not f and f[0].is_relative_to(o[0]) for o in found)]


def _named_elsewhere(folder: Path, root: Path, files, texts, cmake) -> bool:
    """Whether a build file outside `folder` may add or use it (see the module docstring)."""
    relative = folder.relative_to(root).as_posix()
    for path, _, _, _ in files:
        if path.is_relative_to(folder):
            continue
        text = texts[path]
        if relative in text:
            return True
        if path not in cmake or not folder.is_relative_to(path.parent):
            continue
        code = cmake[path]
        below = folder.relative_to(path.parent).as_posix()
        for match in _ADD_SUBDIR.finditer(code):
            target = match.group(1).removeprefix("${CMAKE_CURRENT_SOURCE_DIR}/").rstrip("/")
            if "${" in target or target == below or below.startswith(target + "/"):
                return True
        if _EXTERNAL.search(code):
            return True
    return False


def _ported_source(folder: Path, compiled: tuple[str, ...]) -> bool:
    """Whether a source of `folder` spells a HIP test or header."""
    for p in folder.rglob("*"):
        if p.suffix not in compiled or not p.is_file():
            continue
        try:
            if p.stat().st_size <= 4_000_000 and _HIP_SOURCE.search(p.read_bytes()):
                return True
        except OSError:
            continue
    return False
