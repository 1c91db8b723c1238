"""device-intrinsics, proven by the compiler: what the rule reports fails to compile on the
release it names (HIP 5.2's hipcc, clang against ROCm 6.4-7.2's flattened device headers),
and what it leaves alone builds. Also: the table is covered by the rule's prefilter tokens, and
a fallback the project defines in another file makes a call ported.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.checks.device_intrinsics import OWNED, _class_of
from cuda2rocm.context.device_functions import table
from cuda2rocm.engine import Linter
from tests.test_rocm7_rules import CLANG, errors_in_fixture

SPEC = next(r for r in load_catalogue() if r.id == "device-intrinsics")
HIPCC = shutil.which("hipcc")


def _example(kind: str, name: str):
    return next(e for e in getattr(SPEC, kind) if e.name.startswith(name))


def _reported_lines(code: str, rocm_version: str | None = None) -> set[int]:
    from cuda2rocm.discover import language_of
    from cuda2rocm.sources import SourceFile
    from cuda2rocm.targets import Targets

    linter = Linter([SPEC], targets=Targets.parse(rocm_version, None))
    found = linter.lint_source(SourceFile("k.cu", language_of(Path("k.cu")), code.lstrip("\n")))
    return {d.position.line for d in found if d.rule == SPEC.id and not d.guarded}


def _hipcc_errors(code: str, tmp_path: Path) -> list[str]:
    source = tmp_path / "k.hip"
    source.write_text("#include <hip/hip_runtime.h>\n" + code.lstrip("\n"))
    cmd = [HIPCC, "--offload-arch=gfx90a", "-fsyntax-only", "-ferror-limit=0", "-x", "hip"]
    done = subprocess.run(
        [*cmd, str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"HIP_PLATFORM": "amd", "PATH": "/usr/bin:/bin"},
    )
    # one line of prelude: the fixture's line N is the file's line N + 1
    error = re.compile(rf"^{re.escape(str(source))}:(\d+):\d+: error: (.*)$", re.M)
    return [f"{int(m[1]) - 1}: {m[2]}" for m in error.finditer(done.stderr)]


def _undeclared_lines(errors: list[str]) -> set[int]:
    return {int(e.split(":")[1 if e.startswith("/") else 0]) for e in errors if "undeclared" in e}


@pytest.mark.skipif(CLANG is None, reason="needs clang with the HIP language")
@pytest.mark.parametrize("release", ["7.0", "7.2"])
@pytest.mark.parametrize("name", ["video, dot-product", "a template wrapper"])
def test_reported_calls_are_undeclared_on_rocm_7(name, release, tmp_path):
    example = _example("invalid", name)
    errors = errors_in_fixture(example.code, release, tmp_path)
    assert _undeclared_lines(errors) == _reported_lines(example.code), errors


@pytest.mark.skipif(CLANG is None, reason="needs clang with the HIP language")
@pytest.mark.parametrize("release", ["6.4", "7.0", "7.2"])
def test_intrinsics_hip_declares_build(release, tmp_path):
    example = _example("valid", "intrinsics HIP declares")
    assert errors_in_fixture(example.code, release, tmp_path) == []


@pytest.mark.skipif(CLANG is None, reason="needs clang with the HIP language")
def test_warp_reductions_arrive_in_rocm_7(tmp_path):
    code = _example("invalid", "warp reductions").code
    assert _undeclared_lines(errors_in_fixture(code, "6.4", tmp_path)) == _reported_lines(
        code, "6.4"
    )
    assert errors_in_fixture(code, "7.0", tmp_path) == []
    assert _reported_lines(code, "7.0") == set()


@pytest.mark.skipif(CLANG is None or HIPCC is None, reason="needs clang and hipcc")
def test_fns_arrives_by_rocm_6_4(tmp_path):
    code = _example("invalid", "__fns").code
    assert _undeclared_lines(_hipcc_errors(code, tmp_path)) == _reported_lines(code, "6.2")
    assert errors_in_fixture(code, "6.4", tmp_path) == []
    assert _reported_lines(code, "6.4") == set()


@pytest.mark.skipif(HIPCC is None, reason="needs hipcc (HIP 5.2 here)")
def test_hip_5_2_agrees(tmp_path):
    fires = _example("invalid", "video, dot-product").code
    assert _undeclared_lines(_hipcc_errors(fires, tmp_path)) == _reported_lines(fires, "5.2")
    builds = _example("valid", "intrinsics HIP declares").code
    assert _hipcc_errors(builds, tmp_path) == []


def test_every_table_name_passes_the_prefilter_and_has_a_class():
    tokens = SPEC.tokens
    for name in table():
        if name in OWNED:
            continue
        assert any(t in name for t in tokens), name
        assert _class_of(name)[0] != "a CUDA device intrinsic", name


def test_table_holds_no_name_hip_declares_everywhere():
    assert "__popc" not in table() and "__ldg" not in table() and "atomicAdd" not in table()
    assert table()["__dp4a"].since is None
    assert table()["__match_any_sync"].since == (7, 0)


def test_a_fallback_defined_in_another_file_ports_the_call(tmp_path):
    (tmp_path / "compat.cuh").write_text(
        "#pragma once\n#ifdef __HIP_PLATFORM_AMD__\n"
        "__device__ inline unsigned __vsub4(unsigned a, unsigned b) { return a - b; }\n#endif\n"
    )
    (tmp_path / "k.cu").write_text(
        '#include "compat.cuh"\n'
        "__global__ void k(unsigned* p) { p[0] = __vsub4(p[1], p[2]) + __vmaxu4(p[1], p[2]); }\n"
    )
    found = [d for d in runner.run(Linter([SPEC]), [tmp_path]).diagnostics if d.rule == SPEC.id]
    assert [d.data["cuda_name"] for d in found if not d.guarded] == ["__vmaxu4"]


def test_a_fallback_only_cuda_compiles_does_not_port_it(tmp_path):
    (tmp_path / "k.cu").write_text(
        "#ifndef __HIP_PLATFORM_AMD__\n#define __vsub4(a, b) ((a) - (b))\n#endif\n"
        "__global__ void k(unsigned* p) { p[0] = __vsub4(p[1], p[2]); }\n"
    )
    found = [d for d in runner.run(Linter([SPEC]), [tmp_path]).diagnostics if d.rule == SPEC.id]
    assert [d.data["cuda_name"] for d in found if not d.guarded] == ["__vsub4"]
