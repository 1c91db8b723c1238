"""Vendor branches of a CMake `if()/elseif()/else()` chain: which tests a ROCm configure fails.

A chain in which exactly one branch is the HIP one (its body enables the HIP language, finds a
ROCm library, calls `hip_add_library`, marks sources `LANGUAGE HIP` or names `.hip` sources,
sets AMD GPU targets; or its condition names ROCm/HIP without negating it) is how the project
picks its vendor, and a ROCm configure is the one that reaches that branch. CMake runs the first
branch whose condition holds (`if()` documentation), so a ROCm configure reaches the HIP branch
only when every condition *before* it was false: those conditions are false on ROCm, and what
only their branches add is never built there. Conditions after the HIP branch say nothing (a
configure that failed the HIP test may still take them), and a chain with no HIP branch, or
with two, changes nothing. The markers are data (data/rocm_cmake_markers.toml).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable
from importlib import resources

import tomllib

from cuda2rocm.context.cmake_flow import rocm_value, tokens


@functools.cache
def _markers() -> dict[str, frozenset[str]]:
    text = resources.files("cuda2rocm.data").joinpath("rocm_cmake_markers.toml").read_text()
    data = tomllib.loads(text)
    return {
        "packages": frozenset(p.lower() for p in data["packages"]),
        "commands": frozenset(c.lower() for c in data["commands"]),
        "variables": frozenset(data["variables"]),
        "languages": frozenset(data["languages"]),
    }


def _words(argument: str) -> list[str]:
    return [w.strip('"') for w in argument.split()]


def hip_command(command: str, argument: str) -> bool:
    """Whether one command is HIP build work (see the module docstring)."""
    marks = _markers()
    words = _words(argument)
    if command in marks["commands"]:
        return True
    if command == "enable_language":
        return any(w in marks["languages"] for w in words)
    if command == "project" and "LANGUAGES" in words:
        return any(w in marks["languages"] for w in words[words.index("LANGUAGES") :])
    if command == "find_package" and words:
        return words[0].lower() in marks["packages"]
    if any(w == "LANGUAGE" and nxt in marks["languages"] for w, nxt in itertools.pairwise(words)):
        return True  # set_source_files_properties(... LANGUAGE HIP)
    if any(w.endswith(".hip") for w in words):
        return True
    names = set(re.findall(r"\w+", argument))
    return any(n in marks["variables"] for n in names)


def _hip_condition(condition: str) -> bool:
    """A condition that tests for ROCm/HIP and negates nothing: a ROCm switch (`GGML_HIP`,
    `USE_ROCM`), a found ROCm package (`hip_FOUND`), the HIP compiler (`CMAKE_HIP_COMPILER`),
    or a comparison with a ROCm value (`BACKEND STREQUAL "rocm"`). `NOT USE_ROCM` names the
    other side; a feature of the HIP backend (`GGML_HIP_GRAPHS`) is no vendor test."""
    from cuda2rocm.context.build import rocm_switch

    raw = tokens(condition)
    if "NOT" in raw:
        return False
    for i, word in enumerate(raw):
        name = word.strip('"').replace("${", "").replace("}", "")
        if not word.startswith('"') and (rocm_switch(name) or _FOUND.fullmatch(name)):
            return True
        compared = any(
            raw[j] in ("STREQUAL", "MATCHES") for j in (i - 1, i + 1) if 0 <= j < len(raw)
        )
        if compared and (word.startswith('"') or name.islower()) and rocm_value(name):
            return True
    return False


_FOUND = re.compile(r"(?:hip|HIP|rocm|ROCM|ROCm)_FOUND|CMAKE_HIP_COMPILER(?:_ID|_LOADED)?")


def rocm_false_tests(commands: Iterable[tuple[str, str, int]]) -> dict[int, str]:
    """Line of an `if`/`elseif` whose condition a ROCm configure finds false, because a later
    branch of its chain is the chain's one HIP branch -> the evidence (that branch)."""
    out: dict[int, str] = {}
    # One frame per open if(): its branches as [line, spelling, hip].
    stack: list[list[list]] = []
    for command, argument, line in commands:
        if command == "if":
            stack.append([[line, f"if({' '.join(argument.split())})", _hip_condition(argument)]])
        elif command in ("elseif", "else") and stack:
            spelled = f"{command}({' '.join(argument.split())})"
            hip = command == "elseif" and _hip_condition(argument)
            stack[-1].append([line, spelled, hip])
        elif command == "endif" and stack:
            branches = stack.pop()
            hip = [i for i, b in enumerate(branches) if b[2]]
            if len(hip) == 1 and hip[0] > 0:
                taken = branches[hip[0]]
                for earlier in branches[: hip[0]]:
                    if earlier[1].startswith(("if(", "elseif(")):
                        out[earlier[0]] = (
                            f"a ROCm configure takes the chain's HIP branch `{taken[1]}` "
                            f"(line {taken[0]})"
                        )
        elif stack and hip_command(command, argument):
            for frame in stack:  # nested: every enclosing chain's current branch is HIP's way
                frame[-1][2] = True
    return out
