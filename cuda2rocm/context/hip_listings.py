"""Sources a HIP CMake target compiles from another folder.

A project that ports by compiling its CUDA sources with hipcc keeps them where they are and
points a HIP target at them: a CMakeLists that enables the HIP language (`enable_language(HIP)`,
`project(... LANGUAGES HIP)`), calls `hip_add_library`, marks sources `LANGUAGE HIP`, names
`.hip` sources or sets AMD GPU targets (`CMAKE_HIP_ARCHITECTURES`, `GPU_TARGETS`: the markers of
data/rocm_cmake_markers.toml, less `find_package`, which links a library and compiles nothing)
and lists or globs `../<cuda folder>/*.cu`. Those files are compiled by the ROCm build, whatever
the folder's name or its own CUDA build says: no ROCm-compiled folder is guarded as CUDA-only
(`vendor_only` signal 1, `vendor_split`); the folder's own build file, when it targets an NVIDIA
architecture-specific feature set (signal 1), is still the CUDA half of the build, and only that
file is guarded.

The definitions that file adds (`add_compile_definitions(X)`, `add_definitions(-DX)`,
`target_compile_definitions(t ... X)`, outside any `if()`) are passed to ROCm builds
(`build_defines` reads every CMake file), so they select the folder's own compat header on ROCm
(`#if defined(X)` / `#include "vendors/hip.h"`): its mappings are the project's port there
(`project_port`, `warp_masks`).

Only lines a ROCm configure may run count (`build._cmake_pass`): a listing in the CUDA branch of
a file that has both is no HIP listing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cuda2rocm.context.build import Component
from cuda2rocm.context.cmake_branches import hip_command

_SOURCES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hip", ".inl")
_GLOB_CHARS = re.compile(r"[*?\[]")
_QUOTED_OR_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|#[^\n]*')


def strip_comments(text: str) -> str:
    """CMake text without its `#` comments; a `#` inside a quoted argument is text
    (`file(WRITE x.cpp "#include <y.h>")`), and removing it would unbalance the parentheses."""
    return _QUOTED_OR_COMMENT.sub(lambda m: m.group(0) if m.group(0)[0] == '"' else "", text)


@dataclass(frozen=True)
class HipListing:
    """Files of one folder that a HIP target of another CMake file compiles."""

    folder: Path  # resolved folder of the listed files
    build_file: str  # the HIP CMake file, as displayed
    line: int  # its line listing them
    files: frozenset[Path]

    @property
    def citation(self) -> str:
        return f"{self.build_file}:{self.line}"


def _is_hip_target(commands: list[tuple[str, list[str], int, str | None]]) -> bool:
    return any(
        dead is None and command != "find_package" and hip_command(command, " ".join(words))
        for command, words, _, dead in commands
    )


def _resolve(base: Path, word: str, recurse: bool) -> list[Path]:
    from cuda2rocm.context.cmake_flow import glob_files

    word = word.strip('"')
    if "${" in word.replace("${CMAKE_CURRENT_SOURCE_DIR}", "").replace(
        "${CMAKE_CURRENT_LIST_DIR}", ""
    ):
        return []
    if _GLOB_CHARS.search(word):
        return glob_files(base, word, recurse) or []
    if not word.endswith(_SOURCES):
        return []
    for name in ("${CMAKE_CURRENT_SOURCE_DIR}", "${CMAKE_CURRENT_LIST_DIR}"):
        word = word.replace(name, str(base))
    try:
        path = (base / word).resolve()
    except (OSError, ValueError):
        return []
    return [path] if path.is_file() else []


def listings(files: Iterable[tuple[Path, str, bytes]]) -> list[HipListing]:
    """What the HIP targets among (path, display, bytes) of the run's CMake files compile
    outside their own folder, one entry per (file, listed folder)."""
    from cuda2rocm.context.build import ROCM, _cmake_pass

    out: list[HipListing] = []
    for path, display, data in files:
        if not (path.name == "CMakeLists.txt" or path.name.endswith(".cmake")):
            continue
        if b"HIP" not in data and b"hip" not in data:
            continue
        text = strip_comments(data.decode("utf-8", "replace"))
        try:
            commands = _cmake_pass(text, ROCM)[0]
        except RecursionError:
            continue
        if not _is_hip_target(commands):
            continue
        base = path.resolve().parent
        found: dict[Path, tuple[int, set[Path]]] = {}
        for command, words, line, dead in commands:
            if dead is not None or not words:
                continue
            recurse = command == "file" and words[0].upper() == "GLOB_RECURSE"
            if command == "file" and words[0].upper() not in ("GLOB", "GLOB_RECURSE"):
                continue
            for word in words[1:] if command == "file" else words:
                for listed in _resolve(base, word, recurse):
                    if listed.is_relative_to(base) or not listed.name.endswith(_SOURCES):
                        continue
                    _, members = found.setdefault(listed.parent, (line, set()))
                    members.add(listed)
        if not found:
            continue
        for folder, (line, members) in sorted(found.items()):
            out.append(HipListing(folder, display, line, frozenset(members)))
    return out


def compiled(listed: list[HipListing], folder: Path) -> HipListing | None:
    """The first HIP listing of a file in `folder` (or below it), if any."""
    return next((h for h in listed if h.folder == folder or h.folder.is_relative_to(folder)), None)


@dataclass
class CudaBuildFile(Component):
    """The CUDA build file of a folder a HIP target compiles from elsewhere."""

    @property
    def reason(self) -> str:
        return f"{self.label} is the CUDA build of its folder ({self.why}); " + (
            "reported once as cuda-only-component"
        )


def cuda_build_file(
    path: Path, display: str, target: tuple[int, str], hip: HipListing, root: Path
) -> Component:
    """The component of one build file that targets an NVIDIA architecture-specific feature
    set (`vendor_only` signal 1) in a folder `hip` compiles for ROCm: only the file itself."""
    line, literal = target
    resolved = path.resolve()
    why = (
        f"it targets `{literal}`, an NVIDIA architecture-specific feature set, and names no AMD "
        f"GPU target; the ROCm build compiles the folder's sources through {hip.citation}"
    )
    label = f"`{resolved.relative_to(root).as_posix()}`"
    return CudaBuildFile(resolved, display, line, why, label, frozenset({resolved}))
