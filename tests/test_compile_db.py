"""compile_commands.json from a ROCm build: membership, macros and torch's hipified copies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

from cuda2rocm.context import compile_db
from cuda2rocm.context.build_defines import BuildDefines

KERNEL = """\
__global__ void lanes(int* out) {
#if defined(QUILL_AMD_BUILD)
  out[threadIdx.x] = __lane_id();
#else
  int v;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(v));
  out[threadIdx.x] = v;
#endif
}
"""

NV_ONLY = """\
__global__ void lanes2(int* out) {
  int v;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(v));
  out[threadIdx.x] = v;
}
"""


def _tree(root: Path) -> None:
    write_tree(
        root,
        {
            "CMakeLists.txt": "cmake_minimum_required(VERSION 3.21)\nproject(quill CXX)\n"
            "add_library(quill kernels/lanes.cu kernels/nv_lanes.cu)\n",
            "kernels/lanes.cu": KERNEL,
            "kernels/nv_lanes.cu": NV_ONLY,
        },
    )


def _db(root: Path, entries: list[dict]) -> Path:
    path = root / "build" / "compile_commands.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries))
    return path


def _hipcc(root: Path, source: str, *flags: str) -> dict:
    return {
        "directory": str(root / "build"),
        "file": str(root / source),
        "arguments": ["/opt/rocm/bin/amdclang++", *flags, "-x", "hip", "-c", source],
    }


def _lint(root: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "cuda2rocm", "lint", "--no-cache", "--format", "json"]
    cmd += ["--show-guarded", "--exit-zero", "--select", "inline-ptx", *extra, str(root)]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=root, check=False)


def _ptx(proc: subprocess.CompletedProcess) -> dict[str, list[dict]]:
    assert proc.returncode == 0, proc.stderr
    out: dict[str, list[dict]] = {"reported": [], "guarded": []}
    for d in json.loads(proc.stdout)["diagnostics"]:
        out["guarded" if "guarded" in d else "reported"].append(d)
    return out


def test_without_a_database_both_asm_lines_are_reported(tmp_path: Path) -> None:
    _tree(tmp_path)
    found = _ptx(_lint(tmp_path))
    assert sorted(Path(d["path"]).name for d in found["reported"]) == ["lanes.cu", "nv_lanes.cu"]


def test_database_macros_and_membership_guard_what_rocm_never_compiles(tmp_path: Path) -> None:
    _tree(tmp_path)
    db = _db(tmp_path, [_hipcc(tmp_path, "kernels/lanes.cu", "-DQUILL_AMD_BUILD", "-I../inc")])
    found = _ptx(_lint(tmp_path, "--compile-commands", str(db)))
    assert found["reported"] == []
    why = {Path(d["path"]).name: d["guarded"] for d in found["guarded"]}
    assert "QUILL_AMD_BUILD" in why["lanes.cu"] and "compile_commands.json" in why["lanes.cu"]
    assert "no command of the ROCm build's compilation database" in why["nv_lanes.cu"]


def test_a_macro_undefined_later_on_the_command_line_is_not_defined(tmp_path: Path) -> None:
    _tree(tmp_path)
    entry = _hipcc(tmp_path, "kernels/lanes.cu", "-DQUILL_AMD_BUILD", "-UQUILL_AMD_BUILD")
    entry2 = _hipcc(tmp_path, "kernels/nv_lanes.cu")
    db = _db(tmp_path, [entry, entry2])
    found = _ptx(_lint(tmp_path, "--compile-commands", str(db)))
    assert sorted(Path(d["path"]).name for d in found["reported"]) == ["lanes.cu", "nv_lanes.cu"]


def test_config_key_reads_the_database_relative_to_the_config(tmp_path: Path) -> None:
    _tree(tmp_path)
    _db(tmp_path, [_hipcc(tmp_path, "kernels/lanes.cu", "-DQUILL_AMD_BUILD")])
    (tmp_path / "cuda2rocm.toml").write_text('compile-commands = "build/compile_commands.json"\n')
    assert _ptx(_lint(tmp_path))["reported"] == []


def test_a_cuda_build_database_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    _tree(tmp_path)
    entry = _hipcc(tmp_path, "kernels/lanes.cu")
    entry["arguments"][0] = "/usr/local/cuda/bin/nvcc"
    proc = _lint(tmp_path, "--compile-commands", str(_db(tmp_path, [entry])))
    assert proc.returncode == 2 and "runs nvcc" in proc.stderr


@pytest.mark.parametrize("text", ["{not json", '{"file": "a.cu"}', '[{"file": "a.cu"}]'])
def test_malformed_databases_are_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "compile_commands.json"
    path.write_text(text)
    with pytest.raises(compile_db.CompileDbError):
        compile_db.load(path)


def test_command_strings_and_flag_order(tmp_path: Path) -> None:
    path = tmp_path / "compile_commands.json"
    command = "hipcc -DA=2 -D B -UC -DC=1 -UA -I inc -isystem /opt/x -c k.hip"
    path.write_text(json.dumps([{"directory": str(tmp_path), "file": "k.hip", "command": command}]))
    entry = compile_db.load(path).entry(tmp_path / "k.hip")
    assert entry is not None
    assert dict(entry.defines) == {"B": None, "C": "1"}
    assert entry.includes == ((tmp_path / "inc").resolve(), Path("/opt/x"))


@pytest.mark.parametrize(
    ("source", "copy"),
    [
        ("csrc/cuda/gemm.cu", "csrc/hip/gemm.hip"),
        ("csrc/gemm.cu", "csrc/gemm.hip"),
        ("csrc/gemm.cpp", "csrc/gemm_hip.cpp"),
        ("csrc/gemm_cuda.cpp", "csrc/gemm_hip.cpp"),
        ("ops/CUDAops.cpp", "ops/HIPops.cpp"),
    ],
)
def test_torch_hipified_names(source: str, copy: str) -> None:
    # torch/utils/hipify/hipify_python.py get_hip_file_path(is_pytorch_extension=True)
    assert compile_db.hip_file_path(source) == copy


def test_a_hipified_copy_in_the_database_means_torch_builds_the_source(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/csrc/cuda/scan.cu": "", "pkg/csrc/hip/scan.hip": ""})
    path = _db(tmp_path, [_hipcc(tmp_path, "pkg/csrc/hip/scan.hip", "-DUSE_ROCM")])
    db = compile_db.load(path)
    assert db.torch_hipified(tmp_path / "pkg/csrc/cuda/scan.cu")
    assert not db.torch_hipified(tmp_path / "pkg/csrc/hip/scan.hip")  # compiled as itself
    unbuilt = db.unbuilt([tmp_path / "pkg/csrc/cuda/scan.cu", tmp_path / "pkg/other.cu"])
    assert list(unbuilt) == [(tmp_path / "pkg/other.cu").resolve()]


def test_database_macros_project_wide(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.cu": "", "b.cu": ""})
    path = _db(
        tmp_path,
        [
            _hipcc(tmp_path, "a.cu", "-DEVERY=3", "-DSOME", "-DDIFF=1"),
            _hipcc(tmp_path, "b.cu", "-DEVERY=3", "-DDIFF=2"),
        ],
    )
    static = BuildDefines()
    static.add("STATIC_ONLY", None, True, "setup.py:3")
    got = compile_db.load(path).defines(tmp_path, static)
    assert (got.rocm["EVERY"].lo, got.rocm["EVERY"].hi) == (3, 3)
    assert got.rocm["DIFF"].defined is True and got.rocm["DIFF"].lo != got.rocm["DIFF"].hi
    assert "SOME" in got.unknown
    assert "STATIC_ONLY" in got.cuda_only  # the database is the exact answer
