"""What a ROCm configure of a CMake project takes, beyond on/off switches (`build.py`):

- **Vendor selectors.** A variable the project compares with a ROCm/HIP value somewhere
  (`if(FBGEMM_BUILD_VARIANT STREQUAL BUILD_VARIANT_ROCM)` with `set(BUILD_VARIANT_ROCM "rocm")`,
  `if(${COMPUTE_BACKEND} STREQUAL "hip")`) selects the vendor: on the ROCm configure it holds
  that value, so a test against it is true and one against any other value (`"cuda"`, `"cpu"`)
  false; on a CUDA configure a test against the ROCm value is false. Loop variables, function
  parameters, CMake's own variables and variables also compared with a language name (`CXX`)
  are never selectors. Conditions combine with `NOT`, `AND`, `OR` and parentheses in
  three-valued logic (CMake evaluates `AND`/`OR` left to right, after `NOT`; see the
  `if()` documentation, "Condition Syntax"); any other test is unknown.
- **Source lists.** `file(GLOB|GLOB_RECURSE var patterns)` and project glob helpers (a
  function whose body sets `${<first parameter>}` and globs) name the files of `var`,
  relative to the CMake file's folder. A custom function's keyword argument
  (`cmake_parse_arguments(args ... CUDA_SPECIFIC_SRCS ...)`) is *CUDA-only* when every use of
  `${args_CUDA_SPECIFIC_SRCS}` in its body sits in code a ROCm configure never runs, is only
  printed, or is forwarded to another function's CUDA-only keyword (a fixpoint). A variable
  passed only under such keywords (or globbed only in code ROCm never runs) names CUDA-only
  sources, unless a list live on ROCm holds the same file. Anything unknown keeps the file
  reported.
"""

from __future__ import annotations

import fnmatch
import glob as _glob
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cuda2rocm.context.build import Component

ROCM_VALUES = frozenset({"rocm", "hip"})
LANGUAGE_NAMES = frozenset({"C", "CXX", "Fortran", "ASM", "OBJC", "OBJCXX", "ISPC", "Swift"})
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\(|\)|[^\s()"]+')
_UNARY = frozenset(
    {"EXISTS", "COMMAND", "DEFINED", "TARGET", "POLICY", "TEST", "IS_DIRECTORY",
     "IS_ABSOLUTE", "IS_SYMLINK", "IS_READABLE", "IS_WRITABLE", "IS_EXECUTABLE"}
)  # fmt: skip
_BINARY = frozenset(
    {"STREQUAL", "EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL", "STRLESS",
     "STRGREATER", "STRLESS_EQUAL", "STRGREATER_EQUAL", "VERSION_EQUAL", "VERSION_LESS",
     "VERSION_GREATER", "VERSION_LESS_EQUAL", "VERSION_GREATER_EQUAL", "MATCHES", "IN_LIST",
     "IS_NEWER_THAN", "PATH_EQUAL"}
)  # fmt: skip
_VAR = re.compile(r"^\$\{(\w+)\}$")
#: A variable reference (`${X}`, `$ENV{X}`, `$CACHE{X}`): a word holding one is no literal.
_REFERENCE = re.compile(r"\$(?:ENV|CACHE)?\{")
_NAME = re.compile(r"^[A-Za-z_]\w*$")
_SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hip", ".inl")
_LIST_NARROWING = frozenset({"FILTER", "REMOVE_ITEM", "REMOVE_DUPLICATES", "SORT", "REMOVE_AT"})


def rocm_value(value: str) -> bool:
    """A value naming ROCm/HIP: `rocm`, `hip`, `ROCM`, `amd_rocm` (a word of it, any case)."""
    return bool(ROCM_VALUES.intersection(re.split(r"[^a-z0-9]+", value.lower())))


def tokens(condition: str) -> list[str]:
    return _TOKEN.findall(condition)


@dataclass
class Flow:
    """Project-wide facts about a CMake project's variables and functions."""

    constants: dict[str, str] = field(default_factory=dict)
    #: selector variable -> the ROCm/HIP values the project compares it with
    selectors: dict[str, frozenset[str]] = field(default_factory=dict)
    assigned: set[str] = field(default_factory=set)

    def operand(self, raw: str) -> tuple[str, str] | None:
        """("sel", name) or ("lit", value); None when unknown."""
        quoted = raw.startswith('"') and raw.endswith('"') and len(raw) >= 2
        word = raw[1:-1] if quoted else raw
        match = _VAR.match(word)
        if match:
            name = match.group(1)
        elif quoted:
            return None if _REFERENCE.search(word) else ("lit", word)
        else:
            name = word
        if name in self.selectors:
            return ("sel", name)
        if name in self.constants:
            return ("lit", self.constants[name])
        if match or not _NAME.match(name):
            return None if match or _REFERENCE.search(name) else ("lit", name)
        # An unquoted word names a variable when one is defined (the project's, or one given
        # with -D, spelled like one): unknown then; a lowercase word nobody sets is a value.
        return None if name in self.assigned or not name.islower() else ("lit", name)

    def streq(self, left: str, right: str, vendor: str) -> bool | None:
        a, b = self.operand(left), self.operand(right)
        if a is None or b is None:
            return None
        if a[0] == "lit" and b[0] == "lit":
            return a[1] == b[1]
        if a[0] == "sel" and b[0] == "sel":
            return None
        selector, value = (a[1], b[1]) if a[0] == "sel" else (b[1], a[1])
        rocm_values = self.selectors[selector]
        if not rocm_value(value):
            return False if vendor == "rocm" else None
        if vendor != "rocm":
            return False
        if value in rocm_values and len(rocm_values) == 1:
            return True
        return None if value in rocm_values else False

    def digest(self) -> str:
        """What the run's CMake facts are, for cache keys."""
        selectors = sorted((n, sorted(v)) for n, v in self.selectors.items())
        return repr((sorted(self.constants.items()), selectors))

    def truth(self, condition: str, atom: Callable[[str], bool | None], vendor: str) -> bool | None:
        """A condition's value in three-valued logic; `atom` gives a lone word's value."""
        try:
            return _evaluate(tokens(condition), atom, self, vendor)
        except (IndexError, ValueError, RecursionError):
            return None


def _evaluate(
    words: list[str], atom: Callable[[str], bool | None], flow: Flow, vendor: str
) -> bool | None:
    # Parentheses first.
    items: list[object] = []
    i = 0
    while i < len(words):
        if words[i] == "(":
            depth, j = 1, i + 1
            while depth:
                depth += {"(": 1, ")": -1}.get(words[j], 0)
                j += 1
            items.append(("v", _evaluate(words[i + 1 : j - 1], atom, flow, vendor)))
            i = j
        elif words[i] == ")":
            raise ValueError(")")
        else:
            items.append(words[i])
            i += 1
    # Unary and binary tests.
    level: list[object] = []
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, str) and item in _UNARY and i + 1 < len(items):
            level.append(("v", None))
            i += 2
        elif (
            i + 2 < len(items)
            and isinstance(items[i + 1], str)
            and items[i + 1] in _BINARY
            and isinstance(item, str)
            and isinstance(items[i + 2], str)
        ):
            op = items[i + 1]
            value = flow.streq(item, items[i + 2], vendor) if op == "STREQUAL" else None
            level.append(("v", value))
            i += 3
        else:
            level.append(item)
            i += 1
    # Lone words.
    level = [
        item if not isinstance(item, str) or item in ("NOT", "AND", "OR") else ("v", atom(item))
        for item in level
    ]
    # NOT (right to left), then AND/OR left to right.
    reduced: list[object] = []
    for item in reversed(level):
        if item == "NOT":
            if not reduced or not isinstance(reduced[-1], tuple):
                raise ValueError("NOT")
            value = reduced.pop()[1]
            reduced.append(("v", None if value is None else not value))
        else:
            reduced.append(item)
    reduced.reverse()
    if not reduced or not isinstance(reduced[0], tuple):
        raise ValueError("empty")
    value = reduced[0][1]
    for k in range(1, len(reduced), 2):
        op, right = reduced[k], reduced[k + 1]
        if not isinstance(right, tuple):
            raise ValueError("operand")
        other = right[1]
        if op == "AND":
            value = (
                False
                if value is False or other is False
                else (None if None in (value, other) else True)
            )
        elif op == "OR":
            value = (
                True
                if value is True or other is True
                else (None if None in (value, other) else False)
            )
        else:
            raise ValueError(str(op))
    return value


# -- project-wide facts ------------------------------------------------------------------------
def _strip(text: str) -> str:
    return re.sub(r"#[^\n]*", "", text)


def build_flow(texts: Iterable[str]) -> Flow:
    """Constants and vendor selectors of a project's CMake files."""
    from cuda2rocm.context.build import _commands

    values: dict[str, set[str | None]] = {}
    excluded: set[str] = set()
    tests: list[list[str]] = []
    for text in texts:
        for command, argument, _ in _commands(_strip(text), every=True):
            words = tokens(argument)
            if command in ("set", "option", "unset") and words:
                name = words[0].strip('"')
                literal = len(words) == 2 and not _REFERENCE.search(words[1]) and command == "set"
                values.setdefault(name, set()).add(words[1].strip('"') if literal else None)
            elif command == "foreach" and words:
                excluded.add(words[0])
            elif command in ("function", "macro") and words:
                excluded.update(words[1:])
            elif command == "cmake_parse_arguments" and words:
                prefix = words[2] if words[0] == "PARSE_ARGV" and len(words) > 2 else words[0]
                excluded.add(prefix.strip('"') + "_*")
            elif command in ("if", "elseif"):
                tests.append(words)
    constants = {n: next(iter(v)) for n, v in values.items() if len(v) == 1 and None not in v}
    # Loop variables and parameters are defined too: an unquoted word naming one is no literal.
    assigned = set(values) | {e for e in excluded if not e.endswith("_*")}
    flow = Flow(constants=constants, assigned=assigned)  # type: ignore[arg-type]
    prefixes = tuple(e[:-1] for e in excluded if e.endswith("_*"))
    found: dict[str, set[str]] = {}
    languages: set[str] = set()
    for words in tests:
        for i, word in enumerate(words):
            if word != "STREQUAL" or i == 0 or i + 1 >= len(words):
                continue
            for left, right in ((words[i - 1], words[i + 1]), (words[i + 1], words[i - 1])):
                name = _variable(left, flow)
                value = flow.operand(right)
                if name is None or value is None or value[0] != "lit":
                    continue
                if not (
                    left.startswith(("${", '"${')) or name in flow.assigned or not name.islower()
                ):
                    continue  # `clang STREQUAL X`: a word, not a variable the project sets
                bare = _VAR.match(right)
                constant = (bare.group(1) if bare else right) in flow.constants
                if not right.startswith('"') and not constant and not right.islower():
                    continue  # `X STREQUAL HIP_COMPILER`: a variable name, not a value
                if value[1] in LANGUAGE_NAMES:
                    languages.add(name)
                if rocm_value(value[1]):
                    found.setdefault(name, set()).add(value[1])
    for name, rocm in found.items():
        if (
            name in excluded
            or name in languages
            or name.upper().startswith("CMAKE_")
            or (prefixes and name.startswith(prefixes))
        ):
            continue
        flow.selectors[name] = frozenset(rocm)
    return flow


def _variable(raw: str, flow: Flow) -> str | None:
    """The variable an operand names (`X`, `${X}`, `"${X}"`), when it is not a constant."""
    word = raw.strip('"')
    match = _VAR.match(word)
    name = match.group(1) if match else word if not raw.startswith('"') else None
    if name is None or not _NAME.match(name) or name in flow.constants:
        return None
    return name


# -- sources through variables and functions ---------------------------------------------------
Entry = tuple[str, list[str], int, "str | None", "str | None"]  # command, words, line, why dead
_FILE_OPTIONS = {"LIST_DIRECTORIES": 1, "RELATIVE": 1, "CONFIGURE_DEPENDS": 0, "FOLLOW_SYMLINKS": 0}
_PRINT_COMMANDS = frozenset(
    {"message", "foreach", "endforeach", "set", "list", "string", "math", "if", "elseif",
     "else", "endif"}
)  # fmt: skip
_MAX_GLOB = 20000


@dataclass
class _Function:
    name: str
    display: str
    params: list[str]
    body: list[Entry]
    prefix: str | None = None
    keywords: frozenset[str] = frozenset()


@dataclass
class _Script:
    path: Path
    display: str
    text: str
    entries: list[Entry]  # outside function bodies
    bases: list[Path]  # folders relative paths resolve against


def _entries(text: str, companions: dict[str, bool] | None, flow: Flow) -> list[Entry]:
    from cuda2rocm.context.build import CUDA, ROCM, _cmake_pass

    rocm = _cmake_pass(text, ROCM, companions, flow=flow, every=True)[0]
    cuda = _cmake_pass(text, CUDA, flow=flow, every=True)[0]
    return [
        (c, w, line, why, cw) for (c, w, line, why), (_, _, _, cw) in zip(rocm, cuda, strict=True)
    ]


def _refers(word: str, name: str) -> bool:
    return word == name or "${" + name + "}" in word


def _split_functions(entries: list[Entry], display: str) -> tuple[list[Entry], list[_Function]]:
    outside: list[Entry] = []
    functions: list[_Function] = []
    current: _Function | None = None
    for entry in entries:
        command, words = entry[0], entry[1]
        if command in ("function", "macro") and current is None and words:
            current = _Function(words[0].lower(), display, words[1:], [])
            if command == "macro":
                current.prefix = None
                current.params = ["<macro>", *words[1:]]
        elif command in ("endfunction", "endmacro") and current is not None:
            functions.append(current)
            current = None
        elif current is not None:
            current.body.append(entry)
        else:
            outside.append(entry)
    for f in functions:
        if f.params[:1] == ["<macro>"]:
            continue  # a macro's arguments are not variables
        local: dict[str, list[str]] = {}
        for command, words, *_ in f.body:
            if command == "set" and words:
                local[words[0]] = [w for w in words[1:] if w != "PARENT_SCOPE"]
            elif command == "cmake_parse_arguments" and words:
                start = 2 if words[0] == "PARSE_ARGV" else 0
                if len(words) < start + 4:
                    continue
                f.prefix = words[start]
                keywords: set[str] = set()
                for lst in words[start + 1 : start + 4]:
                    match = _VAR.match(lst)
                    keywords.update(local.get(match.group(1), []) if match else lst.split(";"))
                f.keywords = frozenset(k for k in keywords if k)
    return outside, functions


def _printers(functions: dict[str, _Function]) -> set[str]:
    """Functions that only print their arguments (FBGEMM's `BLOCK_PRINT`)."""
    return {
        name
        for name, f in functions.items()
        if f.body
        and all(c in _PRINT_COMMANDS for c, *_ in f.body)
        and any(c == "message" for c, *_ in f.body)
        and not any("PARENT_SCOPE" in w for _, words, *_ in f.body for w in words)
    }


def _glob_helpers(functions: dict[str, _Function]) -> dict[str, bool]:
    """Functions whose body globs into the variable named by their first parameter (macros
    also by appending to it): name -> whether the glob recurses."""
    helpers: dict[str, bool] = {}
    changed = True
    while changed:
        changed = False
        for name, f in functions.items():
            macro = f.params[:1] == ["<macro>"]
            params = f.params[1:] if macro else f.params
            if name in helpers or not params:
                continue
            target = "${" + params[0] + "}"
            sets = any(c == "set" and w and w[0] == target for c, w, *_ in f.body)
            # A macro runs in its caller's scope: `list(APPEND ${VAR} ...)` fills the caller's
            # variable (kokkos-style `macro(APPEND_GLOB VAR) file(GLOB tmp ${ARGN})`).
            sets = sets or (
                macro and any(c == "list" and w[:2] == ["APPEND", target] for c, w, *_ in f.body)
            )
            globs = [
                w[0] == "GLOB_RECURSE" if c == "file" else helpers[c]
                for c, w, *_ in f.body
                if (c == "file" and w and w[0] in ("GLOB", "GLOB_RECURSE")) or c in helpers
            ]
            if sets and globs:
                helpers[name] = any(globs)
                changed = True
    return helpers


def _cuda_only_keywords(
    functions: dict[str, _Function], printers: set[str]
) -> dict[tuple[str, str], str]:
    """(function, keyword) -> why the sources passed under it are compiled only for CUDA."""
    found: dict[tuple[str, str], str] = {}
    changed = True
    while changed:
        changed = False
        for f in functions.values():
            if f.prefix is None:
                continue
            for keyword in sorted(f.keywords):
                if (f.name, keyword) not in found:
                    why = _keyword_why(f, keyword, functions, printers, found)
                    if why:
                        found[(f.name, keyword)] = why
                        changed = True
    return found


def _keyword_why(
    f: _Function,
    keyword: str,
    functions: dict[str, _Function],
    printers: set[str],
    found: dict[tuple[str, str], str],
) -> str:
    variable = f"{f.prefix}_{keyword}"
    why = ""
    if not _plain_arguments(f) or any(
        _refers(w, variable)
        for m in functions.values()
        if m.params[:1] == ["<macro>"]
        for _, words, *_ in m.body
        for w in words
    ):
        return ""  # its arguments reach code some other way, or a macro reads the variable
    for command, words, _line, rocm_why, cuda_why in f.body:
        refs = [w for w in words if _refers(w, variable)]
        if not refs:
            continue
        if rocm_why is not None:
            if cuda_why is None and not why:
                why = f"`{f.name}()` ({f.display}) uses its `{keyword}` only under {rocm_why}"
            continue
        if command in ("message", "if", "elseif") or command in printers:
            continue
        callee = functions.get(command)
        if callee is None or callee.prefix is None:
            return ""
        current = None
        for word in words:
            if word in callee.keywords:
                current = word
            elif _refers(word, variable):
                if word != "${" + variable + "}" or (command, current) not in found:
                    return ""
                why = why or f"`{f.name}()` passes its `{keyword}` on: " + found[(command, current)]
    return why


def _plain_arguments(f: _Function) -> bool:
    """Whether `f` reads its arguments only through `cmake_parse_arguments`: no `${ARGN}` /
    `${ARGV}` use elsewhere (which could pass the sources on whole) and no computed names
    (`${args_${kind}}`)."""
    for command, words, *_ in f.body:
        if command in ("cmake_parse_arguments", "message"):
            continue
        for word in words:
            if re.search(r"\$\{ARG[NV]\d*\}|\bARG[NV]\b", word) or f"{f.prefix}_${{" in word:
                return False
    return True


def _include_bases(scripts: list[_Script]) -> dict[str, list[Path]]:
    """A module's name -> folders of the CMakeLists files that include it."""
    out: dict[str, list[Path]] = {}
    for s in scripts:
        if s.path.name != "CMakeLists.txt":
            continue
        for command, words, *_ in s.entries:
            if command == "include" and words:
                out.setdefault(Path(words[0]).name, []).append(s.path.resolve().parent)
    return out


def _match(base: Path, pattern: str, recurse: bool) -> list[Path] | None:
    for name in ("${CMAKE_CURRENT_SOURCE_DIR}", "${CMAKE_CURRENT_LIST_DIR}"):
        pattern = pattern.replace(name, str(base))
    if "${" in pattern or "$<" in pattern:
        return None
    full = pattern if pattern.startswith("/") else str(base / pattern)
    if not recurse:
        return [Path(p).resolve() for p in _glob.glob(full)[:_MAX_GLOB] if Path(p).is_file()]
    parts = Path(full).parts
    fixed = next((i for i, p in enumerate(parts) if any(c in p for c in "*?[")), len(parts))
    root = Path(*parts[:fixed]) if fixed else Path("/")
    if fixed == len(parts):
        return [root.resolve()] if root.is_file() else []
    out = []
    for count, candidate in enumerate(root.rglob("*") if root.is_dir() else ()):
        if count > _MAX_GLOB:
            return None
        if candidate.is_file() and fnmatch.fnmatchcase(str(candidate), full):
            out.append(candidate.resolve())
    return out


def glob_files(base: Path, pattern: str, recurse: bool) -> list[Path] | None:
    """The files a CMake `file(GLOB[_RECURSE])` pattern names, relative to `base` (None when
    the pattern holds a variable other than the current folder, or matches too many)."""
    return _match(base, pattern, recurse)


@dataclass
class _Sources:
    dead: dict[Path, tuple[str, int, str, str]] = field(
        default_factory=dict
    )  # display, line, why, label
    live: set[Path] = field(default_factory=set)
    unknown: list[tuple[str, str]] = field(default_factory=list)  # (fnmatch pattern, variable)


def source_components(
    files: Iterable[tuple[Path, str, bytes]],
    companions: dict[str, bool] | None,
    flow: Flow,
) -> list[Component]:
    """CUDA-only components named through source variables and custom functions."""
    from cuda2rocm.context.build import _group

    files = list(files)
    if not any(b"GLOB" in d or b"cmake_parse_arguments" in d for _, _, d in files):
        return []
    scripts: list[_Script] = []
    functions: dict[str, _Function] = {}
    clashes: set[str] = set()
    for path, display, data in files:
        text = _strip(data.decode("utf-8", "replace"))
        outside, defined = _split_functions(_entries(text, companions, flow), display)
        scripts.append(_Script(path, display, text, outside, [path.resolve().parent]))
        for f in defined:
            if f.name in functions:
                clashes.add(f.name)
            functions[f.name] = f
    for name in clashes:  # two definitions: which one runs is unknown
        functions.pop(name, None)
    printers = _printers(functions)
    helpers = _glob_helpers(functions)
    cuda_only = _cuda_only_keywords(functions, printers)
    bases = _include_bases(scripts)
    sources = _Sources()
    for s in scripts:
        if s.path.name != "CMakeLists.txt":
            s.bases = bases.get(s.path.name, s.bases)
        _script_sources(s, scripts, functions, printers, helpers, cuda_only, sources)
    every = [e for s in scripts for e in s.entries] + [
        e for f in functions.values() for e in f.body
    ]
    unknown = [p for p, name in sources.unknown if _may_build(name, every, printers)]
    dead = {
        f: v
        for f, v in sources.dead.items()
        if f not in sources.live and not any(fnmatch.fnmatchcase(str(f), p) for p in unknown)
    }
    out = []
    by_display: dict[str, dict[Path, tuple[str, int, str, str]]] = {}
    for f, v in dead.items():
        by_display.setdefault(v[0], {})[f] = v
    for display, group in by_display.items():
        out += _group(
            {f: v[3] for f, v in group.items()},
            sources.live,
            {f: (v[1], v[2]) for f, v in group.items()},
            display,
        )
    return out


#: Commands that read a list without building anything from it or passing it on.
_READ_ONLY = frozenset(
    {"message", "unset", "if", "elseif", "else", "endif", "while", "return", "math"}
    | {"find_program", "find_path", "find_library", "find_file"}  # search hints, not sources
)
#: Where a command puts the value it derives from its other words (CMake's command docs):
#: the variable filled is followed in turn. `list`/`string` by sub-command.
_DERIVING = {"set": 0, "foreach": 0, "get_filename_component": 0}
#: `list(<sub> <list> ...)` edits <list> in place; GET / SUBLIST / JOIN fill their last word.
_LIST_IN_PLACE = {"APPEND", "PREPEND", "INSERT", "REMOVE_ITEM", "REMOVE_AT", "REMOVE_DUPLICATES"}
_LIST_IN_PLACE |= {"FILTER", "SORT", "REVERSE"}
_LIST_TO_LAST = {"GET", "SUBLIST", "JOIN"}
_STRING_OUT = {
    ("REGEX", "MATCH"): 3,
    ("REGEX", "MATCHALL"): 3,
    ("REGEX", "REPLACE"): 4,
    ("REPLACE", ""): 3,
    ("APPEND", ""): 1,
    ("PREPEND", ""): 1,
    ("CONCAT", ""): 1,
    ("JOIN", ""): 2,
    ("TOUPPER", ""): 2,
    ("TOLOWER", ""): 2,
    ("STRIP", ""): 2,
    ("SUBSTRING", ""): 4,
}
_COUNTS = {"LENGTH", "FIND"}  # list/string sub-commands that give a number, not the items


def _derived(command: str, words: list[str]) -> int | None:
    """Index of the variable `command(words)` fills from its other words; -1 when it fills
    nothing a source list could flow into; None when unknown (then it may build)."""
    if command in _DERIVING:
        return _DERIVING[command]
    head = words[0] if words else ""
    if command == "file" and head in ("GLOB", "GLOB_RECURSE"):
        return 1
    if command == "list":
        if head in _COUNTS:
            return -1
        if head in _LIST_TO_LAST:
            return len(words) - 1
        return 1 if head in _LIST_IN_PLACE else None
    if command == "string":
        if head in _COUNTS or head in ("LENGTH", "COMPARE"):
            return -1
        key = (head, words[1] if head == "REGEX" and len(words) > 1 else "")
        return _STRING_OUT.get(key)
    return None


def _may_build(name: str, entries: list[Entry], printers: set[str]) -> bool:
    """Whether a glob's variable can reach anything that builds: an unknown glob cancels the
    CUDA-only verdict on the files it may match only then. CMake's `file(GLOB)` fills a plain
    list variable; a list that only feeds loops, tests and messages (a toolkit finder walking
    install folders) is never a target's sources. Followed through `set`, `foreach`, `list`,
    `string`, `get_filename_component` into the variables they fill; any other use (a target
    command, a function call, an indirect `${${x}}`, a sub-command not modelled) may build."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        var = todo.pop()
        if var in seen:
            continue
        seen.add(var)
        ref = re.compile(rf"\$\{{{re.escape(var)}\}}|^{re.escape(var)}$")
        for command, words, _line, _rocm, _cuda in entries:
            uses = [i for i, w in enumerate(words) if ref.search(w)]
            if not uses:
                continue
            if any("${${" in w for w in words):
                return True
            if command in _READ_ONLY or command in printers:
                continue
            at = _derived(command, words)
            if at is None:
                return True
            if at < 0 or len(words) <= at or uses == [at]:
                continue  # a count, or the variable only (re)assigned here
            todo.append(words[at])
    return False


def _script_sources(
    s: _Script,
    scripts: list[_Script],
    functions: dict[str, _Function],
    printers: set[str],
    helpers: dict[str, bool],
    cuda_only: dict[tuple[str, str], str],
    sources: _Sources,
) -> None:
    single = len(s.bases) == 1
    defs: dict[str, list[tuple[list[str], bool, int, str | None, str | None]]] = {}
    cuda_refs: dict[str, tuple[int, str]] = {}
    live_refs: set[str] = set()
    dead_literals: set[str] = set()
    for command, words, line, rocm_why, cuda_why in s.entries:
        if command == "file" and len(words) > 1 and words[0] in ("GLOB", "GLOB_RECURSE"):
            patterns, skip = [], 0
            for word in words[2:]:
                if skip:
                    skip -= 1
                elif word in _FILE_OPTIONS:
                    skip = _FILE_OPTIONS[word]
                else:
                    patterns.append(word)
            defs.setdefault(words[1], []).append(
                (patterns, words[0] == "GLOB_RECURSE", line, rocm_why, cuda_why)
            )
            continue
        if command in helpers and words:
            patterns, skip = [], 0
            for word in words[1:]:
                if skip:
                    skip = 0
                elif "REGEX" in word or "EXCLUDE" in word:
                    skip = 1
                elif not re.fullmatch(r"[A-Z_]+", word):
                    patterns.append(word)
            defs.setdefault(words[0], []).append(
                (patterns, helpers[command], line, rocm_why, cuda_why)
            )
            continue
        callee = functions.get(command)
        if rocm_why is None and callee is not None and callee.keywords:
            keyword = None
            for word in words:
                if word in callee.keywords:
                    keyword = word
                    continue
                match = _VAR.match(word)
                why = cuda_only.get((command, keyword or ""))
                if why and match:
                    cuda_refs.setdefault(
                        match.group(1), (line, f"passed as `{command}({keyword} ...)`: {why}")
                    )
                elif why and word.endswith(_SOURCE_SUFFIXES):
                    dead_literals.add(word)
                    for f in _resolve(s, word):
                        sources.dead.setdefault(
                            f,
                            (s.display, line, f"passed as `{command}({keyword} ...)`: {why}", word),
                        )
                else:
                    live_refs.update(m for m in re.findall(r"\$\{(\w+)\}", word))
                    if word.endswith(_SOURCE_SUFFIXES):
                        sources.live.update(_resolve(s, word))
            continue
        for word in words:
            names = re.findall(r"\$\{(\w+)\}", word) + ([word] if _NAME.match(word) else [])
            for name in names:
                if rocm_why is not None or command == "message" or command in printers:
                    continue
                if (
                    command == "list"
                    and len(words) > 1
                    and words[0] in _LIST_NARROWING
                    and words[1] == name
                ):
                    continue
                if (
                    command == "list"
                    and len(words) > 1
                    and words[0] == "APPEND"
                    and words[1] == name
                ):
                    continue
                live_refs.add(name)
            if rocm_why is None and word.endswith(_SOURCE_SUFFIXES) and word not in dead_literals:
                sources.live.update(_resolve(s, word))
    others = [o.text for o in scripts if o is not s]
    for name, definitions in defs.items():
        is_cuda = (
            name in cuda_refs
            and name not in live_refs
            and not any(re.search(rf"(?<![\w$]){re.escape(name)}\b", t) for t in others)
        )
        for patterns, recurse, line, rocm_why, cuda_why in definitions:
            if is_cuda and single:
                why = cuda_refs[name][1]
                where = cuda_refs[name][0]
            elif rocm_why is not None and cuda_why is None and single:
                why, where = f"globbed under {rocm_why}", line
            elif rocm_why is not None:
                continue
            else:
                why = ""
            for pattern in patterns:
                for base in s.bases:
                    matched = _match(base, pattern, recurse)
                    if matched is None:
                        if not why:
                            tail = re.split(r"\$[{<][^}>]*[}>]", pattern)[-1]
                            sources.unknown.append(("*" + tail, name))
                        continue
                    for f in matched:
                        if why:
                            label = str(f.relative_to(base)) if f.is_relative_to(base) else str(f)
                            sources.dead.setdefault(f, (s.display, where, why, label))
                        else:
                            sources.live.add(f)


def _resolve(s: _Script, word: str) -> list[Path]:
    out = []
    for base in s.bases:
        matched = _match(base, word, False)
        out += matched or []
    return out
