"""Text front-end: requirements files, pyproject.toml, Dockerfiles, shell scripts and CMake.

Line-based and comment-aware. The view keeps a *masked* copy of the file, as long as the file,
in which every comment character is a space (newlines stay), so rules search code only and
every offset they find is an offset into the real file. On top of it the view offers what the
rules need: logical lines (backslash continuations joined), shell words and simple commands
(also inside `$(...)` and Dockerfile `RUN`), environment assignments (`export`, prefixes, `ENV`,
`ARG`), Dockerfile instructions, CMake command invocations, and requirement specifiers (from
requirement files, `pyproject.toml` dependency lists and `pip install` command lines).

It is a linter's reading, not a shell: here-documents, aliases and functions are not followed.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

from cuda2rocm.catalogue import RuleSpec
from cuda2rocm.model import Diagnostic, Edit, Fix, Safety, Severity
from cuda2rocm.sources import SourceFile

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: The languages this front-end reads (the engine keeps the same tuple).
TEXT_LANGUAGES = ("cmake", "requirements", "dockerfile", "shell")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_OPERATORS = ("&&", "||", ";;", ";", "|", "&", "(", ")")
#: Words that run the command after them (their own options are skipped).
_WRAPPERS = {"sudo", "env", "exec", "nohup", "time", "command", "nice", "stdbuf", "xargs"}
#: Shell keywords after which a command starts.
_KEYWORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "fi", "done"}
_REQ_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Word:
    start: int
    end: int
    #: The text as written (quotes, `$(...)` and `\\`-newlines included).
    raw: str

    @property
    def value(self) -> str:
        """The word with quotes removed and line continuations dropped (no expansion)."""
        out, i, raw = [], 0, self.raw.replace("\\\r\n", "").replace("\\\n", "")
        while i < len(raw):
            c = raw[i]
            if c == "'":
                j = raw.find("'", i + 1)
                j = len(raw) if j < 0 else j
                out.append(raw[i + 1 : j])
                i = j + 1
            elif c == '"':
                i += 1
                while i < len(raw) and raw[i] != '"':
                    if raw[i] == "\\" and i + 1 < len(raw):
                        i += 1
                    out.append(raw[i])
                    i += 1
                i += 1
            elif c == "\\" and i + 1 < len(raw):
                out.append(raw[i + 1])
                i += 2
            else:
                out.append(c)
                i += 1
        return "".join(out)


@dataclass(frozen=True)
class Line:
    """A logical line: physical lines joined by backslash continuations."""

    start: int
    end: int
    #: The masked text of the line (comments are spaces).
    code: str


@dataclass(frozen=True)
class Command:
    """A simple command: `words[0]` is the program (after assignments and wrappers)."""

    words: tuple[Word, ...]
    #: Assignment words in front of the program (`CUDA_VISIBLE_DEVICES=0 python ...`).
    prefix: tuple[Word, ...] = ()

    @property
    def name(self) -> str:
        return self.words[0].value.rsplit("/", 1)[-1] if self.words else ""


@dataclass(frozen=True)
class Assignment:
    """An environment variable set by the file."""

    name: str
    #: The value as written (quotes kept), and its span; an empty span when there is no value.
    raw_value: str
    start: int
    end: int
    value_start: int
    value_end: int
    #: "export", "prefix" (before a command), "plain" (shell variable), "env", "arg" (Docker),
    #: "env-legacy" (Docker `ENV NAME value`).
    kind: str

    @property
    def value(self) -> str:
        return Word(self.value_start, self.value_end, self.raw_value).value


@dataclass(frozen=True)
class Requirement:
    """One requirement specifier: `torch==2.3.1+cu121`, `flash-attn>=2.5; sys_platform=="linux"`."""

    name: str
    #: PEP 503-normalised name.
    key: str
    #: Everything after the name up to markers or options (`==2.3.1+cu121`, `[extra]>=1`).
    spec: str
    start: int
    end: int


@dataclass(frozen=True)
class IndexOption:
    """`--index-url URL`, `--extra-index-url URL`, `--find-links URL` (also `-i`, `-f`)."""

    option: str
    url: str
    start: int
    end: int


@dataclass(frozen=True)
class CMakeCommand:
    name: str
    start: int
    end: int
    args: tuple[Word, ...]


# -- masking -----------------------------------------------------------------------------------
def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] not in "\r\n":
            chars[i] = " "


def _mask_hash(text: str, shell: bool) -> str:
    """Blank `#` comments. Shell rules: a word-initial `#` outside quotes; otherwise (pip
    requirement files) a `#` at line start or after whitespace."""
    chars = list(text)
    i, n = 0, len(text)
    quote = ""
    while i < n:
        c = text[i]
        if shell and quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if shell and c == "\\":
            i += 2
            continue
        if shell and c in "'\"":
            quote = c
            i += 1
            continue
        if c == "#" and (i == 0 or text[i - 1] in " \t\r\n" or (shell and text[i - 1] in ";&|(")):
            j = text.find("\n", i)
            j = n if j < 0 else j
            if j > i and text[j - 1] == "\r":
                j -= 1
            _blank(chars, i, j)
            i = j
            continue
        i += 1
    return "".join(chars)


def _after_quoted(text: str, i: int) -> int:
    """Index just past the double-quoted string starting at `i` (backslash escapes honoured)."""
    i, n = i + 1, len(text)
    while i < n and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


_CMAKE_BRACKET = re.compile(r"\[(=*)\[")


def _mask_cmake(text: str) -> str:
    """Blank `# ...` and bracket comments `#[[ ... ]]`, skipping quoted and bracket arguments."""
    chars = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = _after_quoted(text, i)
            continue
        if c == "[":
            m = _CMAKE_BRACKET.match(text, i)
            if m:
                close = text.find("]" + m.group(1) + "]", m.end())
                i = n if close < 0 else close + len(m.group(1)) + 2
                continue
        if c == "#":
            m = _CMAKE_BRACKET.match(text, i + 1)
            if m:
                close = text.find("]" + m.group(1) + "]", m.end())
                j = n if close < 0 else close + len(m.group(1)) + 2
            else:
                j = text.find("\n", i)
                j = n if j < 0 else j
            _blank(chars, i, j)
            i = j
            continue
        i += 1
    return "".join(chars)


def _mask_toml(text: str) -> str:
    chars = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith(('"""', "'''"), i):
            close = text.find(text[i : i + 3], i + 3)
            i = n if close < 0 else close + 3
            continue
        if c in "\"'":
            i += 1
            while i < n and text[i] not in (c, "\n"):
                i += 2 if (c == '"' and text[i] == "\\") else 1
            i += 1
            continue
        if c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            _blank(chars, i, j)
            i = j
            continue
        i += 1
    return "".join(chars)


# -- shell words -------------------------------------------------------------------------------
def _skip_group(text: str, i: int, open_: str, close: str) -> int:
    """Index just past the `close` matching the `open_` at i-1 (quotes and nesting aware)."""
    depth, n = 1, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            j = text.find("'", i + 1)
            i = n if j < 0 else j + 1
            continue
        if c == '"':
            i = _after_quoted(text, i)
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def shell_words(code: str, start: int, end: int) -> tuple[list[Word | str], list[tuple[int, int]]]:
    """Words and operators of code[start:end] (operators are plain strings), and the spans of
    command substitutions (`$(...)`, backticks) found inside words, to parse on their own."""
    out: list[Word | str] = []
    subs: list[tuple[int, int]] = []
    i = start
    while i < end:
        c = code[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == "\\" and code[i + 1 : i + 2] in ("\n", "\r"):
            i += 2
            continue
        op = next((o for o in _OPERATORS if code.startswith(o, i)), None)
        if op:
            out.append(op)
            i += len(op)
            continue
        w = i
        while i < end:
            c = code[i]
            if c in " \t\r\n" or (c in ";|&()" and not code.startswith("$(", i)):
                break
            if c == "\\":
                if code[i + 1 : i + 2] in ("\n", "\r"):
                    break
                i += 2
                continue
            if c == "'":
                j = code.find("'", i + 1, end)
                i = end if j < 0 else j + 1
                continue
            if c == '"':
                i += 1
                while i < end and code[i] != '"':
                    if code.startswith("$(", i):
                        j = min(_skip_group(code, i + 2, "(", ")"), end)
                        subs.append((i + 2, j - 1))
                        i = j
                        continue
                    i += 2 if code[i] == "\\" else 1
                i += 1
                continue
            if code.startswith("$(", i):
                j = min(_skip_group(code, i + 2, "(", ")"), end)
                if not code.startswith("$((", i):
                    subs.append((i + 2, j - 1))
                i = j
                continue
            if code.startswith("${", i):
                i = min(_skip_group(code, i + 2, "{", "}"), end)
                continue
            if c == "`":
                j = code.find("`", i + 1, end)
                j = end if j < 0 else j
                subs.append((i + 1, j))
                i = j + 1
                continue
            i += 1
        i = min(i, end)
        out.append(Word(w, i, code[w:i]))
    return out, subs


def _commands(words: list[Word | str]) -> list[Command]:
    out: list[Command] = []
    current: list[Word] = []

    def flush() -> None:
        prefix: list[Word] = []
        rest = list(current)
        while rest and rest[0].raw in _KEYWORDS:
            rest.pop(0)
        while rest and _ASSIGN.match(rest[0].raw):
            prefix.append(rest.pop(0))
        while rest and rest[0].value in _WRAPPERS:
            rest.pop(0)
            while rest and (rest[0].raw.startswith("-") or _ASSIGN.match(rest[0].raw)):
                if _ASSIGN.match(rest[0].raw):
                    prefix.append(rest[0])
                rest.pop(0)
        if rest or prefix:
            out.append(Command(tuple(rest), tuple(prefix)))
        current.clear()

    for w in words:
        if isinstance(w, str):
            flush()
        else:
            current.append(w)
    flush()
    return out


# -- the view ----------------------------------------------------------------------------------
@dataclass
class TextView:
    source: SourceFile
    masked: str = ""
    lines: list[Line] = field(default_factory=list)

    def __post_init__(self) -> None:
        text, lang = self.source.text, self.source.language
        if lang == "cmake":
            self.masked = _mask_cmake(text)
        elif self.is_pyproject:
            self.masked = _mask_toml(text)
        else:
            self.masked = _mask_hash(text, shell=lang in ("shell", "dockerfile"))
        self.lines = self._logical_lines()

    @property
    def language(self) -> str:
        return self.source.language

    @property
    def is_pyproject(self) -> bool:
        name = self.source.path.replace("\\", "/").rsplit("/", 1)[-1]
        return self.source.language == "requirements" and name == "pyproject.toml"

    def text(self, start: int, end: int) -> str:
        return self.source.text[start:end]

    def _logical_lines(self) -> list[Line]:
        code = self.masked
        out: list[Line] = []
        starts = self.source.lines.starts
        continued = self.language in ("shell", "dockerfile", "requirements")
        begin = None
        for index, s in enumerate(starts):
            e = starts[index + 1] if index + 1 < len(starts) else len(code)
            body = code[s:e].rstrip("\r\n")
            if begin is None:
                if not body.strip() and index + 1 < len(starts):
                    continue
                begin = s
            elif self.language == "dockerfile" and not body.strip() and index + 1 < len(starts):
                continue  # Docker drops comment (and empty) lines inside a continuation
            stripped = body.rstrip(" \t")
            n_bs = len(stripped) - len(stripped.rstrip("\\"))
            if continued and n_bs % 2 == 1 and index + 1 < len(starts):
                continue
            end = s + len(body)
            if code[begin:end].strip():
                out.append(Line(begin, end, code[begin:end]))
            begin = None
        return out

    # -- shell and Dockerfile --------------------------------------------------------------
    @functools.cached_property
    def instructions(self) -> list[tuple[str, Word, Line, int]]:
        """Dockerfile instructions: (KEYWORD, keyword word, line, offset where arguments start)."""
        out = []
        if self.language != "dockerfile":
            return out
        for line in self.lines:
            m = re.match(r"\s*([A-Za-z]+)", line.code)
            if not m:
                continue
            word = Word(line.start + m.start(1), line.start + m.end(1), m.group(1))
            out.append((m.group(1).upper(), word, line, line.start + m.end(1)))
        return out

    def _shell_spans(self) -> list[tuple[int, int]]:
        if self.language == "shell":
            return [(line.start, line.end) for line in self.lines]
        spans = []
        for keyword, _, line, args in self.instructions:
            if keyword not in ("RUN", "CMD", "ENTRYPOINT"):
                continue
            rest = self.masked[args : line.end]
            # RUN options (--mount=..., --network=...) come before the command.
            m = re.match(r"(\s+--[A-Za-z-]+=\S+)*", rest)
            begin = args + (m.end() if m else 0)
            if self.masked[begin : line.end].lstrip().startswith("["):
                continue  # exec form: see exec_commands
            spans.append((begin, line.end))
        return spans

    @functools.cached_property
    def commands(self) -> list[Command]:
        """Simple commands of a shell script or of Dockerfile RUN/CMD/ENTRYPOINT lines."""
        out: list[Command] = []
        todo = list(self._shell_spans())
        while todo:
            s, e = todo.pop(0)
            words, subs = shell_words(self.masked, s, e)
            words = [
                Word(w.start, w.end, self.source.text[w.start : w.end])
                if isinstance(w, Word)
                else w
                for w in words
            ]
            out += _commands(words)
            todo += subs
        out += self._exec_commands()
        return out

    def _exec_commands(self) -> list[Command]:
        out = []
        for keyword, _, line, args in self.instructions:
            if keyword not in ("RUN", "CMD", "ENTRYPOINT"):
                continue
            rest = self.masked[args : line.end]
            if not rest.lstrip().startswith("["):
                continue
            words = []
            for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', rest):
                s, e = args + m.start(), args + m.end()
                words.append(Word(s, e, self.source.text[s:e]))
            try:
                json.loads(rest)
            except ValueError:
                continue
            if words:
                out.append(Command(tuple(words)))
        return out

    @functools.cached_property
    def assignments(self) -> list[Assignment]:
        out: list[Assignment] = []
        for cmd in self.commands:
            for w in cmd.prefix:
                out.append(self._assignment(w, "prefix" if cmd.words else "plain"))
            if cmd.words and cmd.words[0].value in ("export", "declare", "typeset", "readonly"):
                for w in cmd.words[1:]:
                    if _ASSIGN.match(w.raw):
                        out.append(self._assignment(w, "export"))
        for keyword, _, line, args in self.instructions:
            if keyword not in ("ENV", "ARG"):
                continue
            words, _ = shell_words(self.masked, args, line.end)
            words = [w for w in words if isinstance(w, Word)]
            if not words:
                continue
            kind = keyword.lower()
            if keyword == "ENV" and not _ASSIGN.match(words[0].raw):
                # Legacy `ENV NAME value with spaces`.
                if len(words) >= 2 and _NAME.fullmatch(words[0].raw):
                    vs, ve = words[1].start, words[-1].end
                    out.append(
                        Assignment(
                            words[0].raw,
                            self.source.text[vs:ve],
                            words[0].start,
                            ve,
                            vs,
                            ve,
                            "env-legacy",
                        )
                    )
                continue
            for w in words:
                w = Word(w.start, w.end, self.source.text[w.start : w.end])
                if _ASSIGN.match(w.raw):
                    out.append(self._assignment(w, kind))
                elif keyword == "ARG" and _NAME.fullmatch(w.raw):
                    out.append(Assignment(w.raw, "", w.start, w.end, w.end, w.end, kind))
        return sorted(out, key=lambda a: a.start)

    @staticmethod
    def _assignment(w: Word, kind: str) -> Assignment:
        m = _ASSIGN.match(w.raw)
        assert m is not None
        vs = w.start + m.end()
        return Assignment(m.group(1), w.raw[m.end() :], w.start, w.end, vs, w.end, kind)

    def assigned(self, name: str) -> bool:
        """Whether the file sets `name` anywhere (or mentions it as code, e.g. `${NAME:-x}`)."""
        return any(a.name == name for a in self.assignments) or bool(
            re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", self.masked)
        )

    # -- requirements --------------------------------------------------------------------------
    @functools.cached_property
    def _requirements(self) -> tuple[list[Requirement], list[IndexOption]]:
        if self.is_pyproject:
            return self._pyproject(), []
        if self.language == "requirements":
            return self._requirement_lines()
        if self.language in ("shell", "dockerfile"):
            return self._pip_commands()
        return [], []

    def requirements(self) -> list[Requirement]:
        return self._requirements[0]

    def index_options(self) -> list[IndexOption]:
        return self._requirements[1]

    def _requirement(self, text: str, start: int) -> Requirement | None:
        m = _REQ_NAME.match(text)
        if not m or "://" in text or text.endswith((".whl", ".tar.gz", ".zip")):
            return None
        body = re.split(r"\s*;|\s+--|\s+#|\s+@", text, maxsplit=1)[0].rstrip()
        if not body or "/" in body:
            return None
        return Requirement(
            m.group(0), normalize(m.group(0)), body[m.end() :], start, start + len(body)
        )

    def _requirement_lines(self) -> tuple[list[Requirement], list[IndexOption]]:
        reqs, opts = [], []
        for line in self.lines:
            code = line.code.replace("\\\r\n", "  ").replace("\\\n", " ")
            lead = len(code) - len(code.lstrip())
            body = code.strip()
            if body.startswith("-"):
                words, _ = shell_words(self.masked, line.start, line.end)
                words = [w for w in words if isinstance(w, Word)]
                opts += _index_options(words, self.source.text)
                continue
            req = self._requirement(body, line.start + lead)
            if req:
                reqs.append(req)
        return reqs, opts

    def _pyproject(self) -> list[Requirement]:
        try:
            data = tomllib.loads(self.source.text)
        except (tomllib.TOMLDecodeError, ValueError):
            return []
        values: list[str] = []
        project = data.get("project", {})
        if isinstance(project, dict):
            values += _strings(project.get("dependencies"))
            optional = project.get("optional-dependencies", {})
            if isinstance(optional, dict):
                for group in optional.values():
                    values += _strings(group)
        build = data.get("build-system", {})
        if isinstance(build, dict):
            values += _strings(build.get("requires"))
        groups = data.get("dependency-groups", {})
        if isinstance(groups, dict):
            for group in groups.values():
                values += _strings(group)
        out, used = [], set()
        for value in values:
            for quote in ('"', "'"):
                pos = -1
                needle = f"{quote}{value}{quote}"
                while True:
                    pos = self.masked.find(needle, pos + 1)
                    if pos < 0 or pos not in used:
                        break
                if pos >= 0:
                    used.add(pos)
                    req = self._requirement(
                        value.strip(), pos + 1 + (len(value) - len(value.lstrip()))
                    )
                    if req:
                        out.append(req)
                    break
        return sorted(out, key=lambda r: r.start)

    def _pip_commands(self) -> tuple[list[Requirement], list[IndexOption]]:
        reqs, opts = [], []
        for cmd in self.commands:
            args = _pip_install_args(cmd)
            if args is None:
                continue
            opts += _index_options(list(args), self.source.text)
            skip = False
            for w in args:
                if skip:
                    skip = False
                    continue
                if w.raw.startswith("-"):
                    skip = "=" not in w.raw and w.raw in _PIP_VALUE_OPTIONS
                    continue
                value = w.value
                offset = w.raw.find(value[:1]) if value else 0
                req = self._requirement(value, w.start + max(offset, 0))
                if req and w.raw in (value, f'"{value}"', f"'{value}'"):
                    reqs.append(req)
        return reqs, opts

    # -- CMake -------------------------------------------------------------------------------
    @functools.cached_property
    def cmake_commands(self) -> list[CMakeCommand]:
        out = []
        code = self.masked
        for m in re.finditer(r"(?m)^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(", code):
            end = _cmake_close(code, m.end())
            args = []
            i = m.end()
            for a in re.finditer(
                r'"(?:[^"\\]|\\.)*"|\[(=*)\[.*?\]\1\]|[^\s()"]+', code[i : end - 1], re.S
            ):
                s, e = i + a.start(), i + a.end()
                args.append(Word(s, e, self.source.text[s:e]))
            out.append(CMakeCommand(m.group(1).lower(), m.start(1), end, tuple(args)))
        return out


def _cmake_close(code: str, i: int) -> int:
    depth, n = 1, len(code)
    while i < n:
        c = code[i]
        if c == '"':
            i = _after_quoted(code, i) - 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _strings(value) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


_INDEX_OPTIONS = {
    "-i": "--index-url",
    "--index-url": "--index-url",
    "--extra-index-url": "--extra-index-url",
    "-f": "--find-links",
    "--find-links": "--find-links",
}
_PIP_VALUE_OPTIONS = set(_INDEX_OPTIONS) | {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--cache-dir",
    "--src",
    "--upgrade-strategy",
    "--log",
    "--proxy",
    "--retries",
    "--timeout",
    "--exists-action",
    "--trusted-host",
    "--cert",
    "--client-cert",
    "--global-option",
    "--config-settings",
    "-C",
    "--no-binary",
    "--only-binary",
    "--progress-bar",
    "--report",
}


def _index_options(words: list[Word], text: str) -> list[IndexOption]:
    out = []
    for i, w in enumerate(words):
        raw = w.raw
        name, eq, value = raw.partition("=")
        if name not in _INDEX_OPTIONS:
            continue
        if eq:
            s = w.start + len(name) + 1
            out.append(IndexOption(_INDEX_OPTIONS[name], Word(s, w.end, value).value, s, w.end))
        elif i + 1 < len(words):
            v = words[i + 1]
            out.append(IndexOption(_INDEX_OPTIONS[name], v.value, v.start, v.end))
    return out


def _pip_install_args(cmd: Command) -> tuple[Word, ...] | None:
    """The arguments after `pip install` (`pip3`, `python -m pip`, `uv pip`), else None."""
    words = list(cmd.words)
    if not words:
        return None
    name = cmd.name
    if re.fullmatch(r"python[0-9.]*", name) and len(words) > 2 and words[1].raw == "-m":
        words = words[2:]
        name = words[0].value
    elif name == "uv" and len(words) > 1 and words[1].value == "pip":
        words = words[1:]
        name = "pip"
    if not re.fullmatch(r"pip[0-9.]*", name):
        return None
    rest = words[1:]
    while rest and rest[0].raw.startswith("-"):
        rest.pop(0)
    if not rest or rest[0].value != "install":
        return None
    return tuple(rest[1:])


# -- rules -------------------------------------------------------------------------------------
class TextRule:
    """Base class of a rule on requirements, Dockerfiles, shell scripts or CMake: read the
    view, call `report` with character offsets."""

    def __init__(self, spec: RuleSpec, view: TextView, sink: list[Diagnostic]) -> None:
        self.spec = spec
        self.view = view
        self.source = view.source
        self._sink = sink

    def check(self) -> None:  # pragma: no cover - every rule overrides it
        raise NotImplementedError

    def fix(self, *edits: Edit, description: str = "", safety: Safety | None = None) -> Fix:
        if safety is None:
            safety = Safety.UNSAFE if self.spec.fix == "unsafe" else Safety.SAFE
        return Fix(safety, tuple(sorted(edits)), description)

    def report(
        self,
        start: int,
        end: int,
        message: str,
        fix: Fix | None = None,
        severity: Severity | str | None = None,
        data: dict[str, str] | None = None,
    ) -> None:
        self._sink.append(
            Diagnostic(
                path=self.source.path,
                rule=self.spec.id,
                code=self.spec.code,
                severity=Severity(severity) if severity else self.spec.severity,
                step=self.spec.step,
                position=self.source.lines.position(start, end),
                message=message,
                fix=fix,
                data=data or {},
            )
        )


def parse(source: SourceFile) -> TextView:
    return TextView(source)


def run_rules(
    source: SourceFile, rules: Iterable[tuple[RuleSpec, type[TextRule]]]
) -> tuple[list[Diagnostic], list[tuple[RuleSpec, BaseException]]]:
    """Build the view once and run every rule on it; a rule that raises loses its findings."""
    view = parse(source)
    found: list[Diagnostic] = []
    failed: list[tuple[RuleSpec, BaseException]] = []
    for spec, cls in rules:
        sink: list[Diagnostic] = []
        try:
            cls(spec, view, sink).check()
        except Exception as exc:  # isolate a buggy rule, report it
            failed.append((spec, exc))
            continue
        found += sink
    return found, failed
