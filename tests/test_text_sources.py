"""Kernel sources the project's Python code reads as text get no compatibility header."""

from __future__ import annotations

from pathlib import Path

from cuda2rocm.context.text_sources import read_as_text
from tests.conftest import run_cli

LOADER = """\
import os
import cupy_like

_HERE = os.path.dirname(__file__)


def scan_kernel():
    with open(os.path.join(_HERE, "device", "prefix_scan.cuh")) as f:
        return cupy_like.RawModule(code=f.read())
"""
KERNEL = """\
#include <cuda_runtime.h>
extern "C" __global__ void scan(float* x, cudaStream_t unused) { x[threadIdx.x] += 1.0f; }
"""


def _tree(root: Path) -> None:
    (root / "pkg" / "device").mkdir(parents=True)
    (root / "pkg" / "loader.py").write_text(LOADER)
    (root / "pkg" / "device" / "prefix_scan.cuh").write_text(KERNEL)
    (root / "pkg" / "device" / "unnamed.cuh").write_text(KERNEL)


def test_a_file_named_by_a_python_literal_in_its_tree_is_read_as_text(tmp_path):
    _tree(tmp_path)
    sources = sorted((tmp_path / "pkg" / "device").iterdir())
    found = read_as_text([(tmp_path / "pkg" / "loader.py", LOADER.encode())], sources)
    assert found == {(tmp_path / "pkg" / "device" / "prefix_scan.cuh").resolve(): "loader.py:8"}
    # a literal of a Python file elsewhere (another package's tree) says nothing
    other = tmp_path / "far" / "away" / "tool.py"
    assert read_as_text([(other, b'"prefix_scan.cuh"')], sources) == {}


def test_fix_leaves_a_text_read_kernel_without_the_compatibility_header(tmp_path):
    _tree(tmp_path)
    done = run_cli("fix", "--exit-zero", str(tmp_path / "pkg"))
    assert done.returncode == 0, done.stderr
    read = (tmp_path / "pkg" / "device" / "prefix_scan.cuh").read_text()
    assert read == KERNEL  # still reported, but no include a run-time compiler cannot find
    assert "cuda2rocm_compat.h" in (tmp_path / "pkg" / "device" / "unnamed.cuh").read_text()
    shown = run_cli("lint", "--exit-zero", "--format", "json", str(tmp_path / "pkg")).stdout
    assert "prefix_scan.cuh" in shown
