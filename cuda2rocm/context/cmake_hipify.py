"""Paths a CMake build hands to a hipify tool of its own: what the ROCm build compiles translated.

A project that runs hipify in its configure or build (`execute_process(COMMAND hipify-perl
...)`, `add_custom_command(... COMMAND ${HIPIFY} ...)`, `python -m <...hipify...>`, or a Python
script of the tree that calls `hipify_python.hipify`) compiles the hipify output on ROCm, so the
CUDA names in what that step reads are renamed by the project's own HIP pass, exactly as torch's
hipify does for cpp_extension builds. The paths are the step's arguments, read statically:
`${CMAKE_CURRENT_SOURCE_DIR}` and friends, `set()` variables, `file(GLOB)` lists, `foreach`
items, and the arguments of a call when the step sits in a `function()`/`macro()` body (plain
parameters, `ARGN`/`ARGV<n>`, `cmake_parse_arguments` keywords). Inside a function body
`CMAKE_CURRENT_SOURCE_DIR` is the caller's folder. A relative path counts only against an
evaluable `WORKING_DIRECTORY` (without one CMake runs the command in the build tree). The value
after an output option (`-o`, `--output-directory`) is written, not read. Anything unknown
claims nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

_STEPS = frozenset({"execute_process", "add_custom_command", "add_custom_target"})
_KEYWORDS = frozenset(
    {"COMMAND", "WORKING_DIRECTORY", "TIMEOUT", "RESULT_VARIABLE", "RESULTS_VARIABLE",
     "OUTPUT_VARIABLE", "ERROR_VARIABLE", "INPUT_FILE", "OUTPUT_FILE", "ERROR_FILE",
     "OUTPUT_QUIET", "ERROR_QUIET", "COMMAND_ECHO", "OUTPUT_STRIP_TRAILING_WHITESPACE",
     "ERROR_STRIP_TRAILING_WHITESPACE", "ENCODING", "ECHO_OUTPUT_VARIABLE",
     "ECHO_ERROR_VARIABLE", "COMMAND_ERROR_IS_FATAL", "OUTPUT", "MAIN_DEPENDENCY", "DEPENDS",
     "BYPRODUCTS", "IMPLICIT_DEPENDS", "COMMENT", "DEPFILE", "JOB_POOL", "JOB_SERVER_AWARE",
     "VERBATIM", "APPEND", "USES_TERMINAL", "COMMAND_EXPAND_LISTS", "DEPENDS_EXPLICIT_ONLY",
     "CODEGEN", "TARGET", "PRE_BUILD", "PRE_LINK", "POST_BUILD", "ALL", "SOURCES"}
)  # fmt: skip
_TOOL = re.compile(r"(?:^|[/\\])hipify-(?:perl|clang)(?:\.exe)?$")
_OUTPUT_OPTION = re.compile(r"^-(?:o|-?output(?:[-_]\w+)?|-?out(?:[-_]?dir)?)$", re.I)
_VAR = re.compile(r"\$\{(\w+)\}")
_MAX_FILES = 20000


@dataclass
class _Function:
    params: list[str]
    body: list[tuple[str, list[str], int]]
    folder: Path  # where it is defined (CMAKE_CURRENT_FUNCTION_LIST_DIR)
    prefix: str | None = None
    single: frozenset[str] = frozenset()
    multi: frozenset[str] = frozenset()


@dataclass
class _Scope:
    here: Path  # CMAKE_CURRENT_SOURCE_DIR
    values: dict[str, list[str] | None] = field(default_factory=dict)


def _words(argument: str) -> list[str]:
    return [w.strip('"') for w in re.findall(r'"(?:[^"\\]|\\.)*"|[^\s"]+', argument)]


def _standard(here: Path, folder: Path) -> dict[str, list[str] | None]:
    from cuda2rocm.build_context import _project_dir

    values: dict[str, list[str] | None] = {
        "CMAKE_CURRENT_SOURCE_DIR": [str(here)],
        "CMAKE_CURRENT_LIST_DIR": [str(here)],
        "CMAKE_CURRENT_FUNCTION_LIST_DIR": [str(folder)],
    }
    project = _project_dir(here)
    if project is not None:
        values["PROJECT_SOURCE_DIR"] = [str(project)]
    return values


def _assign(
    values: dict[str, list[str] | None], command: str, words: list[str], here: Path
) -> None:
    """`set()`, `list(APPEND)`, `file(GLOB)`, `find_program()` into `values` (a name given two
    different values is unknown: None)."""
    if command == "set" and words:
        new = [w for w in words[1:] if w not in ("PARENT_SCOPE", "CACHE")]
        if "CACHE" in words[1:]:
            new = words[1 : words.index("CACHE")]
        name = words[0]
        values[name] = new if name not in values or values[name] == new else None
    elif command == "list" and len(words) > 2 and words[0] == "APPEND":
        old = values.get(words[1], [])
        values[words[1]] = None if old is None else [*old, *words[2:]]
    elif command == "file" and len(words) > 2 and words[0] in ("GLOB", "GLOB_RECURSE"):
        # Relative patterns are relative to the current source folder (`file(GLOB)`).
        kind = "**glob:" if words[0] == "GLOB_RECURSE" else "*glob:"
        items: list[str] | None = []
        for word in words[2:]:
            if word in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"):
                continue
            more = _expand(word, values)
            if more is None or items is None:
                items = None
                continue
            items += [kind + (p if p.startswith("/") else str(here / p)) for p in more]
        values[words[1]] = items
    elif command == "find_program" and len(words) > 1:
        names = [w for w in words[1:] if w not in ("NAMES", "REQUIRED", "NO_DEFAULT_PATH")]
        if any(_TOOL.search(n) for n in names):
            values[words[0]] = ["hipify-perl"]


def _expand(word: str, values: dict[str, list[str] | None], depth: int = 0) -> list[str] | None:
    """A word's values (a `${list}` alone expands to its items); None when unknown."""
    whole = re.fullmatch(r"\$\{(\w+)\}", word)
    if whole:
        found = values.get(whole.group(1))
        if found is None or depth > 8:
            return None
        out: list[str] = []
        for item in found:
            more = _expand(item, values, depth + 1)
            if more is None:
                return None
            out += more
        return out
    unknown = False

    def one(match: re.Match[str]) -> str:
        nonlocal unknown
        found = values.get(match.group(1))
        if found is None or len(found) != 1 or depth > 8:
            unknown = True
            return ""
        expanded = _expand(found[0], values, depth + 1)
        if expanded is None or len(expanded) != 1:
            unknown = True
            return ""
        return expanded[0]

    text = _VAR.sub(one, word)
    return None if unknown or "$" in text else [text]


def _is_hipify(words: list[str], scripts: dict[Path, bytes], cwd: Path | None) -> bool:
    """Whether a COMMAND (its expanded words) runs a hipify tool."""
    for i, word in enumerate(words):
        if _TOOL.search(word):
            return True
        if word == "-m" and i + 1 < len(words) and "hipify" in words[i + 1]:
            return True
        if word.endswith("hipify_cli.py"):
            return True
        if word.endswith((".py", ".sh")):
            path = _path(word, cwd)
            data = scripts.get(path) if path is not None else None
            if data and _hipify_script(data):
                return True
    return False


def _hipify_script(data: bytes) -> bool:
    return bool(re.search(rb"hipify_python|hipify_torch|\bhipify-(?:perl|clang)\b", data)) and (
        b"hipify(" in data or b"hipify-" in data
    )


def _path(word: str, cwd: Path | None) -> Path | None:
    if word.startswith("/"):
        return Path(word).resolve()
    if cwd is None or not word or word.startswith("-"):
        return None
    return (cwd / word).resolve()


def _segments(words: list[str]) -> tuple[list[list[str]], str | None]:
    """The COMMAND lists of a step and its WORKING_DIRECTORY word."""
    segments: list[list[str]] = []
    cwd = None
    current: list[str] | None = None
    for i, word in enumerate(words):
        if word == "COMMAND":
            current = []
            segments.append(current)
        elif word == "WORKING_DIRECTORY" and i + 1 < len(words):
            cwd = words[i + 1]
            current = None
        elif word in _KEYWORDS:
            current = None
        elif current is not None:
            current.append(word)
    return segments, cwd


def _read_paths(segment: list[str], cwd: Path | None) -> Iterable[Path]:
    skip = False
    for word in segment:
        if skip:
            skip = False
            continue
        flag, _, value = word.partition("=")
        if _OUTPUT_OPTION.match(flag) or word == ">":
            skip = not value
            continue
        word = value if flag.startswith("-") and value else word
        if word.startswith("*"):  # a glob item: *glob:pattern (GLOB) or **glob:pattern
            recurse, pattern = word.startswith("**"), word.split("glob:", 1)[1]
            yield from _globbed(pattern, recurse)
            continue
        path = _path(word, cwd)
        if path is not None and path.exists() and not _TOOL.search(word):
            yield path


def _globbed(pattern: str, recurse: bool) -> list[Path]:
    from cuda2rocm.context.cmake_flow import _match

    return _match(Path("/"), pattern, recurse) or []


def cmake_hipified(
    cmake_files: Iterable[tuple[Path, bytes]], scripts: dict[Path, bytes] | None = None
) -> frozenset[Path]:
    """Folders and files (resolved) that a hipify step of the run's CMake files reads.
    `scripts`: the run's Python and shell files by resolved path (a step may run one)."""
    from cuda2rocm.context.build import _commands

    scripts = scripts or {}
    parsed: list[tuple[Path, list[tuple[str, list[str], int]]]] = []
    functions: dict[str, _Function | None] = {}
    cmake_files = list(cmake_files)
    if not any(re.search(rb"(?i)\b(?:execute_process|add_custom_)", d) for _, d in cmake_files):
        return frozenset()
    for path, data in cmake_files:
        text = re.sub(r"#[^\n]*", "", data.decode("utf-8", "replace"))
        entries = [(c, _words(a), line) for c, a, line in _commands(text, every=True)]
        folder = path.resolve().parent
        outside: list[tuple[str, list[str], int]] = []
        current: _Function | None = None
        name = ""
        for entry in entries:
            command, words, _ = entry
            if command in ("function", "macro") and current is None and words:
                name, current = words[0].lower(), _Function(words[1:], [], folder)
            elif command in ("endfunction", "endmacro") and current is not None:
                functions[name] = None if name in functions else current  # two: unknown
                current = None
            elif current is not None:
                current.body.append(entry)
                if command == "cmake_parse_arguments" and words:
                    start = 2 if words[0] == "PARSE_ARGV" else 0
                    if len(words) >= start + 4:
                        current.prefix = words[start]
                        current.single = frozenset(words[start + 2].split(";"))
                        current.multi = frozenset(words[start + 3].split(";"))
            else:
                outside.append(entry)
        parsed.append((folder, outside))
    found: set[Path] = set()
    hipifying = {n for n, f in functions.items() if f is not None and _steps_in(f.body)}
    for folder, entries in parsed:
        scope = _Scope(folder, _standard(folder, folder))
        _run(entries, scope, functions, hipifying, scripts, found, 0)
    return frozenset(found)


def _steps_in(body: list[tuple[str, list[str], int]]) -> bool:
    return any(c in _STEPS for c, *_ in body)


def _run(
    entries: list[tuple[str, list[str], int]],
    scope: _Scope,
    functions: dict[str, _Function | None],
    hipifying: set[str],
    scripts: dict[Path, bytes],
    found: set[Path],
    depth: int,
) -> None:
    loops: list[tuple[str, list[str] | None]] = []
    for command, words, _ in entries:
        if command == "foreach" and words:
            items = words[1:]
            if items[:1] == ["IN"] and len(items) > 1 and items[1] in ("LISTS", "ITEMS"):
                items = [f"${{{n}}}" for n in items[2:]] if items[1] == "LISTS" else items[2:]
            expanded: list[str] | None = []
            for item in items:
                more = _expand(item, scope.values)
                expanded = None if more is None or expanded is None else expanded + more
            loops.append((words[0], expanded))
            continue
        if command == "endforeach" and loops:
            loops.pop()
            continue
        if command in ("set", "list", "file", "find_program"):
            _assign(scope.values, command, words, scope.here)
            continue
        if command in _STEPS:
            _step(words, scope, loops, scripts, found)
            continue
        callee = functions.get(command)
        if command in hipifying and callee is not None and depth < 4:
            inner = _Scope(scope.here, {**scope.values, **_standard(scope.here, callee.folder)})
            args: list[str] = []
            for word in words:
                more = _expand(word, scope.values)
                args += more if more is not None else [word + "\x00"]  # unknown stays unknown
            _bind(callee, args, inner.values)
            _run(callee.body, inner, functions, hipifying, scripts, found, depth + 1)


def _bind(f: _Function, args: list[str], values: dict[str, list[str] | None]) -> None:
    def known(items: list[str]) -> list[str] | None:
        return None if any(a.endswith("\x00") for a in items) else items

    for i, param in enumerate(f.params):
        values[param] = known(args[i : i + 1]) if i < len(args) else []
    for i, arg in enumerate(args):
        values[f"ARGV{i}"] = known([arg])
    values["ARGN"] = known(args[len(f.params) :])
    if f.prefix is None:
        return
    keywords = f.single | f.multi
    current = None
    for arg in args:
        if arg in keywords:
            current = arg
            values[f"{f.prefix}_{arg}"] = []
        elif current is not None:
            name = f"{f.prefix}_{current}"
            old = values.get(name)
            values[name] = None if old is None else known([*old, arg])
            if current in f.single:
                current = None


def _step(
    words: list[str],
    scope: _Scope,
    loops: list[tuple[str, list[str] | None]],
    scripts: dict[Path, bytes],
    found: set[Path],
) -> None:
    segments, cwd_word = _segments(words)
    cwd: Path | None = None
    if cwd_word is not None:
        value = _expand(cwd_word, scope.values)
        if value is None or len(value) != 1:
            return  # an unknown working directory: relative paths mean nothing known
        cwd = _path(value[0], scope.here) if not value[0].startswith("/") else Path(value[0])
    # Each loop variable ranges over its items: the step reads every one.
    choices: list[dict[str, list[str] | None]] = [dict(scope.values)]
    for name, items in loops:
        if items is None:
            choices = [{**c, name: None} for c in choices]
        else:
            choices = [{**c, name: [item]} for c in choices for item in items][:_MAX_FILES]
    for values in choices:
        for segment in segments:
            expanded: list[str] = []
            for word in segment:
                more = _expand(word, values)
                expanded += more if more is not None else ["\x00"]
            if not _is_hipify(expanded, scripts, cwd):
                continue
            for path in _read_paths([w for w in expanded if w != "\x00"], cwd):
                if not _is_script(path):
                    found.add(path)


def _is_script(path: Path) -> bool:
    return path.is_file() and path.suffix in (".py", ".sh", ".pl")
