"""Configure options a ROCm build cannot turn on: their branch needs an NVIDIA-only package.

faiss builds its cuVS indexes only `if(FAISS_ENABLE_CUVS)`: that option's branch runs
`find_package(cuvs)`, lists the cuVS sources and defines `USE_NVIDIA_CUVS`. cuVS exists for
NVIDIA GPUs only (data/nvidia_only_packages.toml, each package with its cited reason), so a ROCm
build has the option off, whatever its default: the sources it lists are CUDA-only
(`build.cmake_components`), the macros it defines are not defined on ROCm
(`build_defines.cmake_defines`), and code under `#if defined USE_NVIDIA_CUVS` is skipped by the
HIP passes. The same holds when the project itself refuses the combination
(`if(<ROCm switch> AND X)` with `message(FATAL_ERROR ...)`).

Read statically and conservatively; an option is off on ROCm only when
- the project has a ROCm/HIP configure switch (a project not ported yet turns its CUDA options
  into the port's work: they stay unknown);
- the package is found directly in the option's own `if()` branch (not an `elseif`/`else`,
  whose meaning depends on the other tests of the chain), the condition is the option alone
  or with a test of the package's own target (`X AND NOT TARGET cuvs::cuvs`), and no enclosing
  `if()` names CUDA, ROCm, HIP or a vendor (`if(NOT USE_ROCM)` around it means a ROCm build
  may still turn the option on).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from cuda2rocm.context.build import _commands, rocm_switch

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_WANTED = frozenset({"if", "elseif", "else", "endif", "find_package", "message"})
_VENDOR = re.compile(r"(?i)cuda|rocm|hip|nvidia|amd|nvcc")
_VARIABLE = re.compile(r"[A-Za-z_]\w*")
_CONSTANTS = frozenset({"ON", "OFF", "TRUE", "FALSE", "YES", "NO", "Y", "N", "0", "1"})
_FATAL = re.compile(r"^\s*(?:FATAL_ERROR|SEND_ERROR)\b")


@dataclass(frozen=True)
class Package:
    names: tuple[str, ...]
    what: str
    why: str
    url: str


@functools.lru_cache(maxsize=1)
def packages() -> dict[str, Package]:
    """find_package() spelling (lower case) -> the NVIDIA-only package."""
    text = resources.files("cuda2rocm.data").joinpath("nvidia_only_packages.toml").read_text()
    out: dict[str, Package] = {}
    for row in tomllib.loads(text)["package"]:
        package = Package(tuple(row["names"]), row["what"], row["why"], row["url"])
        for name in package.names:
            out[name.lower()] = package
    return out


def _terms(condition: str) -> list[list[str]] | None:
    """The AND-terms of a condition (each a word list); None when it has OR or parentheses."""
    words = condition.replace("${", "").replace("}", "").replace('"', "").split()
    if not words or any(w.upper() == "OR" or "(" in w or ")" in w for w in words):
        return None
    terms: list[list[str]] = [[]]
    for w in words:
        if w.upper() == "AND":
            terms.append([])
        else:
            terms[-1].append(w)
    return terms if all(terms) else None


def _plain(term: list[str]) -> str | None:
    if len(term) == 1 and _VARIABLE.fullmatch(term[0]) and term[0].upper() not in _CONSTANTS:
        return term[0]
    return None


def _option(condition: str, package: str) -> str | None:
    """The one option a branch's condition tests, when the rest only asks whether the package
    is already there (`NOT TARGET cuvs::cuvs`, `NOT cuvs_FOUND`): then turning the option on
    is what makes the build need the package."""
    terms = _terms(condition)
    if terms is None:
        return None
    found = None
    lower = package.lower()
    for term in terms:
        upper = [w.upper() for w in term]
        if upper[:2] == ["NOT", "TARGET"] and len(term) == 3 and term[2].lower().startswith(lower):
            continue
        if upper == ["NOT", f"{package}_FOUND".upper()]:
            continue
        name = _plain(term)
        if name is None or found is not None:
            return None
        found = name
    return found


def _is_cmake(path: Path | str) -> bool:
    name = Path(path).name
    return name == "CMakeLists.txt" or name.endswith(".cmake")


def options(files: Iterable[tuple[Path | str, str, bytes]]) -> dict[str, str]:
    """Options a ROCm build cannot turn on -> why, from (path, display, bytes) of the run's
    build files (non-CMake ones are ignored)."""
    files = [(path, display, data) for path, display, data in files if _is_cmake(path)]
    if not any(_has_rocm_switch(data.decode("utf-8", "replace")) for _, _, data in files):
        return {}
    cmake = [
        (display, re.sub(r"#[^\n]*", "", data.decode("utf-8", "replace")))
        for _, display, data in files
        if b"find_package" in data or b"FATAL_ERROR" in data
    ]
    table = packages()
    found: dict[str, str] = {}
    for display, text in cmake:
        stack: list[tuple[str, str, int, str]] = []  # (kind, condition, line, whole chain)
        for command, argument, line in _commands(text, _WANTED):
            argument = " ".join(argument.split())
            if command == "if":
                stack.append(("if", argument, line, argument))
            elif command in ("elseif", "else") and stack:
                chain = f"{stack[-1][3]} {argument}"
                stack[-1] = (command, argument, line, chain)
            elif command == "endif" and stack:
                stack.pop()
            elif command == "find_package" and stack:
                name = argument.split()[0] if argument else ""
                package = table.get(name.lower())
                kind, condition, at, _ = stack[-1]
                if package is None or kind != "if":
                    continue
                if any(_VENDOR.search(chain) for *_, chain in stack[:-1]):
                    continue
                option = _option(condition, name)
                if option is None or rocm_switch(option) or _VENDOR.search(option):
                    continue
                found.setdefault(
                    option,
                    f"`{option}` needs {package.what} (`find_package({name})` under "
                    f"`if({condition})`, {display}:{at}): {package.why} ({package.url}), so a "
                    "ROCm build cannot turn it on",
                )
            elif command == "message" and _FATAL.match(argument) and stack:
                kind, condition, at, _ = stack[-1]
                terms = _terms(condition) if kind == "if" else None
                names = [_plain(t) for t in terms or []]
                switches = [n for n in names if n and rocm_switch(n)]
                others = [n for n in names if n and not rocm_switch(n)]
                if terms and len(switches) == 1 and len(others) == 1 and all(names):
                    found.setdefault(
                        others[0],
                        f"the project refuses `{others[0]}` with `{switches[0]}` "
                        f"(`if({condition})` stops the configure with a fatal error, "
                        f"{display}:{at})",
                    )
    return found


_IF = re.compile(r"(?im)^\s*(?:else)?if\s*\(([^)\n]*)")


def _has_rocm_switch(text: str) -> bool:
    return any(
        rocm_switch(w) for m in _IF.finditer(text) for w in re.findall(r"[A-Za-z_]\w*", m.group(1))
    )


def macros(files: Iterable[tuple[Path | str, str, bytes]], off: dict[str, str]) -> set[str]:
    """Macros the build defines only in the branch of an option in `off` (`USE_NVIDIA_CUVS`)."""
    from cuda2rocm.context import build_defines

    if not off:
        return set()
    files = [(Path(p), d, data) for p, d, data in files if _is_cmake(p)]
    defines = build_defines.index(files, off)
    reasons = list(off.values())
    return {n for n, why in defines.cuda_only.items() if any(r in why for r in reasons)}


_CONDITIONAL = re.compile(
    r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b((?:[^\n]*\\\n)*[^\n]*)", re.M
)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)


def _under(text: str, offset: int, names: set[str]) -> bool:
    """Whether `offset` sits in an `#if`/`#ifdef`/`#elif` branch whose condition is false when
    every macro of `names` is undefined: `#ifdef M`, or a `&&`-chain (no `||`) with a positive
    `defined(M)` / `M` term (faiss's `#if defined(USE_NVIDIA_CUVS) && !defined(...)`)."""
    stack: list[tuple[str, str]] = []
    for m in _CONDITIONAL.finditer(text, 0, offset):
        word, rest = m.group(1), " ".join(m.group(2).replace("\\\n", " ").split())
        if word in ("if", "ifdef", "ifndef"):
            stack.append((word, rest))
        elif word in ("elif", "else") and stack:
            stack[-1] = (word, rest)
        elif word == "endif" and stack:
            stack.pop()
    for word, rest in stack:
        if word == "ifdef" and rest.split()[:1] and rest.split()[0] in names:
            return True
        if word in ("if", "elif") and "||" not in rest:
            for term in rest.split("&&"):
                term = term.strip().strip("()").strip()
                bare = re.sub(r"^defined\s*\(?\s*|\s*\)?$", "", term)
                if bare in names and not term.startswith("!"):
                    return True
    return False


def included_live(
    header: Path,
    sources: Iterable[tuple[Path, bytes]],
    dead: set[Path],
    names: set[str],
) -> bool:
    """Whether a C/C++ file of the run that is not in `dead` includes `header` outside a branch
    on `names` (then ROCm compiles the header, whatever the CMake list says)."""
    token = header.name.encode()
    for path, data in sources:
        if token not in data or path.resolve() in dead or path.resolve() == header:
            continue
        text = data.decode("utf-8", "replace")
        for m in _INCLUDE.finditer(text):
            parts = Path(m.group(1)).parts
            if not parts or parts[-1] != header.name:
                continue
            beside = (path.resolve().parent / m.group(1)).resolve()
            if beside != header and header.parts[-len(parts) :] != parts:
                continue
            if not _under(text, m.start(), names):
                return True
    return False
