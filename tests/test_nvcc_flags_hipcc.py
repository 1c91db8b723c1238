"""Every flag nvcc-flags' fix can write into a HIP list is accepted by hipcc (issue 14).

The fix writes the table's `hip` replacements, `-Xcompiler` arguments and kept flags, the last
two only when they are in the `portable` table; each is passed to the real hipcc here (one
invocation per architecture: clang rejects every unknown option before compiling)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from cuda2rocm.catalogue import find_rule

HIPCC = shutil.which("hipcc")
pytestmark = pytest.mark.skipif(HIPCC is None, reason="hipcc is not installed")

SPEC = find_rule("nvcc-flags")
#: Values standing for each `portable` pattern (each must match its pattern).
PATTERN_EXAMPLES = [
    "-DNDEBUG",
    "-DVERSION=1.2",
    "-DX=",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-Iinclude",
    "-I/usr/include/x-y",
]


def writable_flags() -> list[str]:
    tables = SPEC.tables
    hip = {h for entry in tables["flags"].values() for h in entry.get("hip", [])}
    return sorted(hip | set(tables["portable"]["exact"]) | set(PATTERN_EXAMPLES))


def _hipcc(arch: str, flags: list[str], tmp_path) -> subprocess.CompletedProcess:
    src = tmp_path / "k.hip"
    src.write_text("#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[0] = 1; }\n")
    env = dict(os.environ, HIP_PLATFORM="amd")
    cmd = [HIPCC, f"--offload-arch={arch}", *flags, "-c", str(src), "-o", str(tmp_path / "k.o")]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def test_pattern_examples_stand_for_the_patterns():
    patterns = [re.compile(p) for p in SPEC.tables["portable"]["patterns"]]
    for pattern in patterns:
        assert any(pattern.fullmatch(e) for e in PATTERN_EXAMPLES), pattern.pattern
    assert not any(p.fullmatch("--ftz=false") for p in patterns)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1030"])
def test_hipcc_accepts_every_flag_the_fix_can_write(arch, tmp_path):
    result = _hipcc(arch, writable_flags(), tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]


def test_hipcc_rejects_an_nvcc_option_the_fix_must_not_keep(tmp_path):
    """The control: the check above can fail (the `--ftz=false` of issue 14)."""
    result = _hipcc("gfx90a", ["-O3", "--ftz=false"], tmp_path)
    assert result.returncode != 0 and "ftz" in result.stderr


def _ignored_spellings() -> list[list[str]]:
    """Each flag the table says hipcc ignores, spelled as the table allows it."""
    out = []
    for flag, entry in SPEC.tables["flags"].items():
        how = entry.get("hipcc")
        value = "sm_80" if flag == "-arch" else "-v"
        if how == "ignored":
            out.append([flag, value] if entry.get("value") else [flag])
        elif how == "ignored-joined":
            out.append([f"{flag}={value}"])
    return out


@pytest.mark.parametrize("flags", _ignored_spellings(), ids=" ".join)
def test_hipcc_compiles_on_with_each_flag_the_table_calls_ignored(flags, tmp_path):
    result = _hipcc("gfx90a", flags, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "unused" in result.stderr  # clang says it drops the flag
    werror = _hipcc("gfx90a", [*flags, "-Werror"], tmp_path)
    assert werror.returncode != 0  # why a -Werror list is not harmless
