"""The ROCm 7 rules, proven by the compiler where it can: the rule's own examples compiled with
clang `-fsyntax-only` against ROCm's flattened device headers (`hiprtc_runtime.h` of PyPI
rocm-llvm-python, fetched by tools/fetch_rocm_headers.sh into $CUDA2ROCM_ROCM_HEADERS or
.rocm-headers/). What fires must fail on ROCm 7.x and build on 6.4; what does not fire must
build on 7.x. Skipped without clang or the headers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cuda2rocm.catalogue import load_catalogue

ROOT = Path(__file__).resolve().parent.parent
HEADERS = Path(os.environ.get("CUDA2ROCM_ROCM_HEADERS", ROOT / ".rocm-headers"))
CLANG = next((c for c in ("clang", "clang-18", "clang-17", "clang-15") if shutil.which(c)), None)
RULES = {r.id: r for r in load_catalogue()}

pytestmark = pytest.mark.skipif(CLANG is None, reason="needs clang with the HIP language")


def _header(release: str) -> Path:
    path = HEADERS / f"rocm-{release}" / "hiprtc_runtime.h"
    if not path.is_file():
        pytest.skip(f"{path} missing: run tools/fetch_rocm_headers.sh")
    return path


def errors_in_fixture(code: str, release: str, tmp_path: Path, arch: str = "gfx90a") -> list:
    """clang's errors on the fixture's own lines (an older clang may complain inside the
    flattened header about builtins it lacks; those lines are not the fixture's)."""
    source = tmp_path / "fixture.hip"
    source.write_text(code.lstrip("\n"))
    cmd = [CLANG, "-x", "hip", "-nogpulib", "-nogpuinc", f"--offload-arch={arch}"]
    cmd += ["-fsyntax-only", "-ferror-limit=0", "-D__HIPCC_RTC__"]
    cmd += ["-include", str(_header(release)), str(source)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return [
        line
        for line in done.stderr.splitlines()
        if line.startswith(f"{source}:") and ": error:" in line
    ]


@pytest.mark.parametrize("release", ["7.0", "7.2"])
def test_warpsize_constant_uses_fail_from_rocm_7(release, tmp_path):
    spec = RULES["warpsize-constexpr"]
    fires = spec.invalid[0]
    errors = errors_in_fixture(fires.code, release, tmp_path)
    lines = {int(e.split(":")[1]) for e in errors}
    assert len(lines) == fires.count, errors  # one error per reported use
    for example in spec.valid:
        if example.rocm_version is None:  # the run-time uses build on 7.x
            assert errors_in_fixture(example.code, release, tmp_path) == []


def test_warpsize_constant_uses_build_on_rocm_6_4(tmp_path):
    fires = RULES["warpsize-constexpr"].invalid[0]
    assert errors_in_fixture(fires.code, "6.4", tmp_path) == []


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1100"])
def test_rocm_7_warpsize_is_the_target_wavefront_at_run_time_only(arch, tmp_path):
    """The 7.x header spells warpSize from __builtin_amdgcn_wavefrontsize(): usable as a
    value on either wavefront size, never as a constant."""
    code = "__device__ int lanes() { return warpSize; }\n"
    assert errors_in_fixture(code, "7.2", tmp_path, arch) == []
    assert errors_in_fixture("int a[warpSize];\n" + code, "7.2", tmp_path, arch)


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="needs hipcc (HIP 5.2 here)")
def test_warpsize_constant_uses_build_with_the_local_hip(tmp_path):
    """The other side with the installed HIP (5.2.3): `warpSize` is constexpr there, for both
    wavefront sizes."""
    fires = RULES["warpsize-constexpr"].invalid[0]
    source = tmp_path / "fixture.hip"
    source.write_text(fires.code.lstrip("\n"))
    cmd = ["hipcc", "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-x", "hip"]
    cmd += ["-fsyntax-only", "-include", "hip/hip_runtime.h", str(source)]
    env = dict(os.environ, HIP_PLATFORM="amd")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
