"""Optional extras named for one vendor in a project that has extras for the other.

A package that supports both vendors often publishes one extra per accelerator in its
`pyproject.toml` (`pip install pkg[cu121]`, `pkg[cu118-torch211]` beside `pkg[amd]`,
`pkg[rocm62]`): a ROCm user installs the ROCm extra, so what only a CUDA-named extra requires
(a CUDA wheel, a package whose ROCm build differs) is never installed on ROCm. Findings inside
such an extra are guarded, with the ROCm extra named in the reason.

An extra is CUDA-named when a word of its name (split at `-`, `_`, `.`) is a CUDA word of
data/vendor_words.toml or starts with a CUDA version tag (`cu121`, `cuda12`); ROCm-named
likewise. Only when the same file has at least one ROCm-named extra, and only an extra that is
CUDA-named and not ROCm-named too. Anything the file does not parse as TOML guards nothing.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

import tomllib

from cuda2rocm.model import Diagnostic

_SPLIT = re.compile(r"[-_.]")


@functools.cache
def _vocabulary() -> tuple[frozenset[str], frozenset[str], re.Pattern, re.Pattern]:
    text = resources.files("cuda2rocm.data").joinpath("vendor_words.toml").read_text()
    data = tomllib.loads(text)
    return (
        frozenset(w.lower() for w in data["cuda"]),
        frozenset(w.lower() for w in data["rocm"]),
        re.compile(data["cuda_tag"]),
        re.compile(data["rocm_tag"]),
    )


def vendor_of(name: str) -> str:
    """ "cuda", "rocm" or "" for an extra's name (both or neither: "")."""
    cuda, rocm, cuda_tag, rocm_tag = _vocabulary()
    words = [w.lower() for w in _SPLIT.split(name) if w]
    is_cuda = any(w in cuda or cuda_tag.match(w) for w in words)
    is_rocm = any(w in rocm or rocm_tag.match(w) for w in words)
    return "cuda" if is_cuda and not is_rocm else "rocm" if is_rocm and not is_cuda else ""


def cuda_extra_lines(text: str) -> dict[int, str]:
    """1-based line -> why, for the lines of the CUDA-named extras of a pyproject.toml that
    also has ROCm-named ones."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return {}
    project = data.get("project", {})
    extras = project.get("optional-dependencies", {}) if isinstance(project, dict) else {}
    if not isinstance(extras, dict):
        return {}
    rocm = sorted(n for n in extras if vendor_of(n) == "rocm")
    cuda = {n for n in extras if vendor_of(n) == "cuda"}
    if not rocm or not cuda:
        return {}
    shown = ", ".join(f"`{n}`" for n in rocm[:3]) + (", ..." if len(rocm) > 3 else "")
    lines = text.splitlines()
    out: dict[int, str] = {}
    section = False
    current: str | None = None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped == "[project.optional-dependencies]"
            current = None
            if section:
                continue
        if not section:
            continue
        key = re.match(r'^\s*"?([A-Za-z0-9_.-]+)"?\s*=(?!=)', line)  # not `"pkg==1.0",`
        if key:
            current = key.group(1) if key.group(1) in extras else None
        if current in cuda:
            out[number] = (
                f"in the optional extra `{current}`, named for CUDA: a ROCm install takes the "
                f"project's ROCm extra ({shown}) instead"
            )
    return out


def guard(found: list[Diagnostic], text: str, never: frozenset[str]) -> list[Diagnostic]:
    """`found` with the findings inside CUDA-named extras guarded (module docstring)."""
    if "optional-dependencies" not in text:
        return found
    lines = cuda_extra_lines(text)
    if not lines:
        return found
    import dataclasses

    return [
        dataclasses.replace(d, guarded=lines[d.position.line])
        if not d.guarded and d.rule not in never and d.position.line in lines
        else d
        for d in found
    ]
