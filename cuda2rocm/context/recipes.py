"""NVIDIA container recipes: one finding per recipe, not one per line of it.

A Dockerfile built on an NVIDIA image, on NVIDIA's CUDA package repository or on the CUDA
wheels of torch is NVIDIA's recipe: its CUDA wheel index, its `triton` pin and the `docker run
--runtime=nvidia` of the script that builds and runs it all follow from that one choice, and a
port keeps that recipe for NVIDIA and adds a ROCm one beside it rather than editing it line by
line. So the recipe gets one finding (its first), and the others in it (and in the scripts that
build an image from it) become notes that point to it. In a project whose build already has a
ROCm path (a component it leaves out on ROCm, a ROCm configure block, a hipify step, a setup.py
or CMakeLists.txt that branches on ROCm) the recipe's finding is a note too: the project builds
for ROCm without it.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from pathlib import Path

from cuda2rocm.discover import language_of
from cuda2rocm.model import Diagnostic, Severity

#: Findings that a container recipe's base decides (the rules that read Dockerfiles and the
#: docker options of launch scripts).
RECIPE_RULES = frozenset(
    {
        "docker-nvidia-base",
        "torch-cuda-wheel",
        "rocm-variant-packages",
        "cuda-only-packages",
        "nccl-env-vars",
        "nv-cli-tools",
        "visible-devices",
        "rocm-arch-env",
        "docker-gpu-flags",
    }
)
#: What makes a Dockerfile NVIDIA's: an NVIDIA base image, NVIDIA's CUDA repository, CUDA
#: toolkit packages, or torch's CUDA wheel index.
NVIDIA_RECIPE = re.compile(
    r"^\s*FROM\s+(?:--\S+\s+)*(?:nvcr\.io/nvidia/|nvidia/cuda\b)"
    r"|developer\.download\.nvidia\.com/compute/cuda/repos"
    r"|\binstall\b[^\n]*\bcuda-(?:toolkit|compiler|libraries|nvcc)\b"
    r"|download\.pytorch\.org/whl/(?:nightly/)?cu\d+",
    re.I | re.M,
)
DOCKER_BUILD_FILE = re.compile(r"\bdocker\s+build\b[^\n]*?(?:-f|--file)[=\s]+[\"']?([^\s\"']+)")


def nvidia_recipes(
    diagnostics: list[Diagnostic], texts: dict[str, str], rocm_build: bool
) -> list[Diagnostic]:
    """`diagnostics` with each NVIDIA recipe's findings folded into its first one. `texts`:
    the run's Dockerfiles and shell scripts (display path -> text)."""
    recipes = {p for p, t in texts.items() if _is_dockerfile(p) and NVIDIA_RECIPE.search(t)}
    if not recipes:
        return diagnostics
    # A script that builds an image from a recipe launches that recipe.
    owner: dict[str, str] = {p: p for p in recipes}
    for path, text in texts.items():
        if path in recipes:
            continue
        for target in DOCKER_BUILD_FILE.findall(text):
            recipe = _match(target, recipes)
            if recipe:
                owner[path] = recipe
                break
    by_recipe: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(diagnostics):
        if d.rule in RECIPE_RULES and d.path in owner and d.severity != Severity.INFO:
            by_recipe[owner[d.path]].append(i)
    out = list(diagnostics)
    for recipe, indices in by_recipe.items():
        indices.sort(key=lambda i: (diagnostics[i].path != recipe, diagnostics[i].sort_key))
        first = diagnostics[indices[0]]
        rest = [diagnostics[i] for i in indices[1:]]
        message = first.message
        if rest:
            rules = ", ".join(sorted({d.rule for d in rest}))
            message += (
                f"; this recipe is NVIDIA's: {len(rest)} more finding(s) in it or in the scripts "
                f"that launch it follow from that ({rules}) and are notes"
            )
        if rocm_build:
            message += (
                "; the project's build already has a ROCm path, which does not use this NVIDIA "
                "recipe: keep it for NVIDIA and add a ROCm recipe beside it if you ship containers"
            )
        severity = Severity.INFO if rocm_build else first.severity
        out[indices[0]] = dataclasses.replace(first, message=message, severity=severity)
        where = f"{first.path}:{first.position.line}"
        for i in indices[1:]:
            d = diagnostics[i]
            out[i] = dataclasses.replace(
                d,
                severity=Severity.INFO,
                message=f"{d.message} (part of the NVIDIA container recipe reported at {where})",
            )
    return out


#: A build file that branches on ROCm: torch's HIP flags and ROCm homes in a setup.py, a ROCm
#: switch in CMake (detectron2's `define_macros += [("WITH_HIP", None)]` under
#: `is_rocm_pytorch`, faiss's `FAISS_ENABLE_ROCM`).
ROCM_BUILD = re.compile(
    rb"torch\.version\.hip|IS_HIP_EXTENSION|ROCM_HOME|\bis_rocm|\bUSE_ROCM\b|ENABLE_ROCM\b"
    rb"|\bWITH_HIP\b|\bUSE_HIP\b|hipify"
)
BUILD_FILES = frozenset({"setup.py", "CMakeLists.txt"})


def builds_for_rocm(name: str, data: bytes) -> bool:
    """Whether a build file (setup.py, CMakeLists.txt) has a ROCm path."""
    return name in BUILD_FILES and bool(ROCM_BUILD.search(data))


def _is_dockerfile(path: str) -> bool:
    return language_of(Path(path)) == "dockerfile"


def _match(target: str, recipes: set[str]) -> str | None:
    """The recipe a `docker build -f <target>` names (relative to an unknown directory: the
    recipe whose path ends with it)."""
    want = Path(target).as_posix().lstrip("./")
    found = [r for r in recipes if Path(r).as_posix().endswith(want)]
    return found[0] if len(found) == 1 else None
