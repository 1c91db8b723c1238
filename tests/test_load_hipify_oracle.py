"""torch's own hipify is the oracle for what `load()` hipifies: its sources and the headers under
`extra_include_paths`, not the headers beside the sources. The tool must agree: a CUDA header
beside a `load()` source is reported (it reaches hipcc unchanged), one under an include path is
not (torch rewrites it)."""

import os
from pathlib import Path

import pytest

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.engine import Linter

SOURCE = '#include "beside.cuh"\n#include "inside.cuh"\n__global__ void k(float *x) { x[0] = 1; }\n'
HEADER = "#pragma once\n#include <cuda_runtime.h>\n__device__ inline float one() { return 1.f; }\n"
LOADER = """import os
from torch.utils.cpp_extension import load

HERE = os.path.dirname(os.path.abspath(__file__))
ext = load(name="ops", sources=[os.path.join(HERE, "csrc", "k.cu")],
           extra_include_paths=[os.path.join(HERE, "inc")])
"""


def _project(root: Path) -> None:
    (root / "csrc").mkdir()
    (root / "inc").mkdir()
    (root / "csrc" / "k.cu").write_text(SOURCE)
    (root / "csrc" / "beside.cuh").write_text(HEADER)
    (root / "inc" / "inside.cuh").write_text(HEADER)
    (root / "ops.py").write_text(LOADER)


def test_torch_load_hipifies_sources_and_include_paths_only(tmp_path):
    hipify_python = pytest.importorskip("torch.utils.hipify.hipify_python")
    _project(tmp_path)
    build = tmp_path / "build"
    build.mkdir()
    # As torch 2.13's cpp_extension._jit_compile calls it on ROCm.
    hipify_python.hipify(
        project_directory=str(build),
        output_directory=str(build),
        header_include_dirs=[str(tmp_path / "inc")],
        extra_files=[os.path.abspath(tmp_path / "csrc" / "k.cu")],
        show_detailed=False,
        show_progress=False,
        is_pytorch_extension=True,
    )
    hipified = {p.name for p in tmp_path.rglob("*") if p.is_file() and "hip" in p.name}
    beside = [n for n in hipified if n.startswith("beside")]
    inside = [n for n in hipified if n.startswith("inside")]
    assert "k.hip" in hipified and not beside and inside, hipified


def test_the_tool_reports_the_header_load_leaves_alone(tmp_path):
    _project(tmp_path)
    specs = [r for r in load_catalogue() if r.id == "hip-include"]
    result = runner.run(Linter(specs), [tmp_path])
    where = {Path(d.path).name for d in result.diagnostics if "cuda_runtime.h" in d.message}
    assert where == {"beside.cuh"}
