"""A compilation database from a ROCm build: the exact answer for what that build compiles.

`compile_commands.json` (the JSON Compilation Database format that CMake writes with
`CMAKE_EXPORT_COMPILE_COMMANDS=ON`, and `bear` for any build: a list of `{directory, file,
arguments | command, output?}`; https://clang.llvm.org/docs/JSONCompilationDatabase.html)
records every compiler invocation of one configured build. Given one from the project's ROCm
build (`--compile-commands FILE` or config `compile-commands`), the context model stops
guessing from setup.py and CMake:

- membership: a translation unit of the run that no command compiles is not built for ROCm
  (its findings are guarded with the database as the reason); one a command compiles is built,
  whatever the static model thought;
- torch's hipify: `torch.utils.cpp_extension` compiles a hipified copy, named by
  `torch/utils/hipify/hipify_python.py:get_hip_file_path` (torch 2.x: `.cu` -> `.hip`, `cuda`
  -> `hip` and `CUDA` -> `HIP` in the folders and the name, else `_hip` added to the name). A
  command that compiles that copy of a run source means torch's build hipifies the source;
- macros: `-D`/`-U` in command order, the last one winning (as the compiler reads them). A name
  every command of the run's sources defines alike is defined (with its value); one only some
  define is unknown; one none defines is not defined by the build. Include paths (`-I`,
  `-isystem`, `-iquote`) are kept per entry.

Read, never run. A database that cannot be read, or that records an nvcc build, is refused with
a clear error (`CompileDbError`): it would answer for the wrong build.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cuda2rocm.context.build_defines import BuildDefines
from cuda2rocm.context.preprocessor import Val

#: Suffixes of translation units (what a compile command names; headers never are).
COMPILED = (".cu", ".cpp", ".cc", ".cxx", ".c", ".hip")


class CompileDbError(ValueError):
    """The database cannot be used (unreadable, not a compilation database, or not ROCm's)."""


@dataclass(frozen=True)
class Entry:
    """One compile command, as far as the model reads it."""

    source: Path  # resolved
    #: (name, value or None) after -D/-U in order; a -U'd name is absent.
    defines: tuple[tuple[str, str | None], ...]
    includes: tuple[Path, ...]


@dataclass(frozen=True)
class CompileDb:
    """The commands of one ROCm build, by resolved source path."""

    path: Path
    entries: dict[Path, Entry]

    def entry(self, source: Path) -> Entry | None:
        """The command that compiles `source`, directly or through torch's hipified copy."""
        resolved = source.resolve()
        found = self.entries.get(resolved)
        if found is not None:
            return found
        return self.entries.get(self.hipified_copy(resolved) or resolved)

    def hipified_copy(self, resolved: Path) -> Path | None:
        """The hipified copy of `resolved` that a command compiles, if any: torch's name for it
        taken relative to each enclosing folder (hipify renames below the project folder)."""
        parent = resolved.parent
        while True:
            rel = resolved.relative_to(parent).as_posix()
            copy = parent / hip_file_path(rel)
            if copy != resolved and copy in self.entries:
                return copy
            if parent.parent == parent:
                return None
            parent = parent.parent

    def torch_hipified(self, path: str | Path) -> bool:
        """Whether the database compiles torch's hipified copy of `path` (not `path` itself)."""
        resolved = Path(path).resolve()
        return resolved not in self.entries and self.hipified_copy(resolved) is not None

    def covers(self, root: Path) -> bool:
        """Whether any command compiles a source under `root` (else it is another tree's)."""
        root = root.resolve()
        return any(p == root or p.is_relative_to(root) for p in self.entries)

    def unbuilt(self, sources: Iterable[Path]) -> dict[Path, str]:
        """Translation units among `sources` that no command compiles: resolved path -> why."""
        why = f"no command of the ROCm build's compilation database ({self.path}) compiles it"
        return {p.resolve(): why for p in sources if p.suffix in COMPILED and self.entry(p) is None}

    def defines(self, root: Path, static: BuildDefines) -> BuildDefines:
        """The build's macros for the run's sources under `root`; `static` (the model read from
        setup.py/CMake) only names the macros to declare not defined when no command does."""
        root = root.resolve()
        mine = [e for p, e in self.entries.items() if p == root or p.is_relative_to(root)]
        out = BuildDefines(complete=True)
        if not mine:
            return static
        values: dict[str, set[str | None]] = {}
        counts: dict[str, int] = {}
        for e in mine:
            for name, value in e.defines:
                values.setdefault(name, set()).add(value)
                counts[name] = counts.get(name, 0) + 1
        where = f"every command of {self.path}"
        for name, seen in values.items():
            if counts[name] < len(mine):
                out.unknown.add(name)
            elif len(seen) == 1:
                out.add(name, next(iter(seen)), True, where)
            else:  # defined everywhere, with different values
                out.rocm[name] = Val(True, why=f"`-D{name}` is passed by {where}")
        for name in {*static.rocm, *static.cuda_only, *static.unknown} - set(values):
            out.cuda_only[name] = f"`{name}` is defined by no command of {self.path}"
        return out


def hip_file_path(rel: str) -> str:
    """torch's name for the hipified copy of a source of an extension (`rel` is relative to
    the project folder; hipify_python.get_hip_file_path with is_pytorch_extension=True)."""
    dirpath, filename = os.path.split(rel)
    root, ext = os.path.splitext(filename)
    if ext == ".cu":
        ext = ".hip"
    new_dir = dirpath.replace("cuda", "hip").replace("CUDA", "HIP").replace("THC", "THH")
    new_root = root.replace("cuda", "hip").replace("CUDA", "HIP").replace("THC", "THH")
    if new_dir == dirpath and new_root + ext == filename:
        new_root += "_hip"
    return os.path.join(new_dir, new_root + ext)


def _arguments(item: dict) -> list[str]:
    if isinstance(item.get("arguments"), list):
        return [str(a) for a in item["arguments"]]
    if isinstance(item.get("command"), str):
        return shlex.split(item["command"])
    raise CompileDbError("an entry has neither `arguments` nor `command`")


def _read(args: list[str], directory: Path) -> tuple[list[tuple[str, str | None]], list[Path]]:
    """-D/-U (in order, last wins) and include folders of one command."""
    macros: dict[str, str | None] = {}
    includes: list[Path] = []
    i = 0
    while i < len(args):
        arg = args[i]
        for flag in ("-D", "-U", "-I", "-isystem", "-iquote"):
            if arg == flag and i + 1 < len(args):
                value, i = args[i + 1], i + 1
                break
            if arg.startswith(flag) and len(arg) > len(flag) and flag in ("-D", "-U", "-I"):
                value = arg[len(flag) :]
                break
        else:
            i += 1
            continue
        if flag == "-D":
            name, _, val = value.partition("=")
            macros.pop(name, None)
            macros[name] = val if "=" in value else None
        elif flag == "-U":
            macros.pop(value, None)
        else:
            includes.append((directory / value).resolve())
        i += 1
    return list(macros.items()), includes


def load(path: Path) -> CompileDb:
    """Read a compilation database; `CompileDbError` says why one cannot be used."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CompileDbError(f"{path}: cannot read the compilation database: {exc}") from exc
    if not isinstance(data, list):
        raise CompileDbError(f"{path}: a compilation database is a JSON list of commands")
    entries: dict[Path, Entry] = {}
    for n, item in enumerate(data):
        if not isinstance(item, dict) or "file" not in item or "directory" not in item:
            raise CompileDbError(f"{path}: entry {n} lacks `directory` or `file`")
        try:
            args = _arguments(item)
        except (CompileDbError, ValueError) as exc:
            raise CompileDbError(f"{path}: entry {n}: {exc}") from exc
        if args and Path(args[0]).name.startswith("nvcc"):
            raise CompileDbError(
                f"{path}: entry {n} runs nvcc: this is a CUDA build's database, and only a "
                "ROCm build's says what ROCm compiles"
            )
        directory = Path(item["directory"])
        source = (directory / item["file"]).resolve()
        macros, includes = _read(args[1:], directory)
        entries[source] = Entry(source, tuple(macros), tuple(includes))
    return CompileDb(Path(path), entries)


__all__ = ["COMPILED", "CompileDb", "CompileDbError", "Entry", "hip_file_path", "load"]
