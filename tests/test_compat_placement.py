"""Where `fix` puts the compatibility header follows the packaging: a file the package ships
finds the header in the same installed tree, or gets no fix (with the reason)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli, write_tree

from cuda2rocm import packaging
from cuda2rocm.catalogue import load_catalogue, select_rules
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_paths

LINTER = Linter(select_rules(load_catalogue()))
HEADER = "cuda2rocm_compat.h"
#: A source whose fix includes the header (a runtime include and a warp shuffle).
KERNEL = """\
#include <cuda_runtime.h>
__global__ void mix(float* x) {
  float v = x[threadIdx.x];
  v += __shfl_down_sync(0xffffffff, v, 2);
  x[threadIdx.x] = v;
}
"""
TOOL = "#include <cuda_runtime.h>\nint main() { cudaStream_t s; cudaStreamCreate(&s); }\n"


def _fix(root: Path):
    report = fix_paths(LINTER, [str(root)])
    headers = sorted(
        Path(h.path).resolve().relative_to(root.resolve()).as_posix() for h in report.headers
    )
    refused = {
        Path(o.path).resolve().relative_to(root.resolve()).as_posix(): o.refused
        for o in report.outcomes
        if o.refused
    }
    return headers, refused


def _includes(path: Path) -> str:
    line = next(x for x in path.read_text().splitlines() if HEADER in x)
    return line.split('"')[1]


def test_plain_setup_py_sources_in_the_tree_share_one_header(tmp_path):
    """No package: extension sources compile in the tree; one header in their common folder."""
    write_tree(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup(name='p', ext_modules=[])\n",
            "csrc/a/mix.cu": KERNEL,
            "csrc/b/tool.cu": TOOL,
        },
    )
    headers, refused = _fix(tmp_path)
    assert headers == [f"csrc/{HEADER}"] and not refused
    assert _includes(tmp_path / "csrc/a/mix.cu") == f"../{HEADER}"


def test_csrc_inside_the_package_gets_a_shipped_header(tmp_path):
    """Sources shipped as package data, a tool elsewhere: the packaged sources include a
    header inside the package (the one at the common root would not be in the wheel)."""
    write_tree(
        tmp_path,
        {
            "setup.py": (
                "from setuptools import setup, find_packages\n"
                "setup(name='q', packages=find_packages(),\n"
                "      package_data={'q': ['csrc/**/*.cu', 'csrc/**/*.h']})\n"
            ),
            "q/__init__.py": "",
            "q/csrc/ops/mix.cu": KERNEL,
            "bench/tool.cu": TOOL,
        },
    )
    headers, refused = _fix(tmp_path)
    assert not refused
    assert f"q/csrc/ops/{HEADER}" in headers
    assert _includes(tmp_path / "q/csrc/ops/mix.cu") == HEADER
    unit = packaging.shipped_unit(tmp_path / "q/csrc/ops/mix.cu")
    assert unit == packaging.shipped_unit(tmp_path / f"q/csrc/ops/{HEADER}") == str(tmp_path / "q")


def test_jit_op_builder_from_site_packages_without_a_shipped_header_gets_no_fix(tmp_path):
    """An op builder JIT-compiles from the installed package, whose package data ships
    `.cu` and `.cuh` only: no place for `cuda2rocm_compat.h` is shipped, so the file is not
    fixed and the finding says what to ship. The tool in the tree is fixed."""
    write_tree(
        tmp_path,
        {
            "pyproject.toml": (
                "[project]\nname = 'r'\nversion = '0'\n"
                "[tool.setuptools.package-data]\nr = ['kernels/*.cu', 'kernels/*.cuh']\n"
            ),
            "r/__init__.py": "",
            "r/builder.py": (
                "import os\nfrom torch.utils.cpp_extension import load\n"
                "HERE = os.path.dirname(__file__)\n"
                "def build():\n"
                "    return load('k', [os.path.join(HERE, 'kernels', 'mix.cu')])\n"
            ),
            "r/kernels/mix.cu": KERNEL,
            "tools/tool.cu": TOOL,
        },
    )
    headers, refused = _fix(tmp_path)
    assert list(refused) == ["r/kernels/mix.cu"]
    assert "r/kernels/cuda2rocm_compat.h" in refused["r/kernels/mix.cu"]
    assert (tmp_path / "r/kernels/mix.cu").read_text() == KERNEL
    assert headers == [f"tools/{HEADER}"]


def test_manifest_in_with_include_package_data_ships_the_header(tmp_path):
    write_tree(
        tmp_path,
        {
            "setup.py": (
                "from setuptools import setup\n"
                "setup(name='s', packages=['s'], include_package_data=True)\n"
            ),
            "MANIFEST.in": "recursive-include s/csrc *.cu *.h\n",
            "s/__init__.py": "",
            "s/csrc/mix.cu": KERNEL,
            "other/tool.cu": TOOL,
        },
    )
    headers, refused = _fix(tmp_path)
    assert not refused and f"s/csrc/{HEADER}" in headers


def test_unreadable_packaging_keeps_the_header_inside_the_package(tmp_path):
    """Package data built at run time (not a literal): the header goes into the including
    file's own folder, never above its top-level package."""
    write_tree(
        tmp_path,
        {
            "setup.py": (
                "from setuptools import setup\nimport glob\n"
                "setup(name='t', packages=['t'], package_data={'t': glob.glob('t/**')})\n"
            ),
            "t/__init__.py": "",
            "t/csrc/mix.cu": KERNEL,
            "tools/tool.cu": TOOL,
        },
    )
    headers, refused = _fix(tmp_path)
    assert not refused
    assert headers == [HEADER, f"t/csrc/{HEADER}"]
    assert _includes(tmp_path / "t/csrc/mix.cu") == HEADER


def test_cmake_install_directory_ships_the_header_beside_installed_sources(tmp_path):
    """install(DIRECTORY include/ ... FILES_MATCHING PATTERN "*.cuh" PATTERN "*.h"): an
    installed header gets the header beside it; a source compiled in the tree keeps the
    common one."""
    write_tree(
        tmp_path,
        {
            "CMakeLists.txt": (
                "project(u LANGUAGES CXX CUDA)\nadd_library(u src/tool.cu)\n"
                'install(DIRECTORY include/ DESTINATION include FILES_MATCHING PATTERN "*.cuh"'
                ' PATTERN "*.h")\n'
            ),
            "include/u/mix.cuh": KERNEL,
            "src/tool.cu": TOOL,
        },
    )
    headers, refused = _fix(tmp_path)
    assert not refused
    assert f"include/u/{HEADER}" in headers
    assert _includes(tmp_path / "include/u/mix.cuh") == HEADER


def test_cmake_install_files_without_the_header_gets_no_fix(tmp_path):
    write_tree(
        tmp_path,
        {
            "CMakeLists.txt": "install(FILES include/mix.cuh DESTINATION include)\n",
            "include/mix.cuh": KERNEL,
        },
    )
    _, refused = _fix(tmp_path)
    assert list(refused) == ["include/mix.cuh"]
    assert "installed to include" in refused["include/mix.cuh"]


def test_fix_twice_changes_nothing(tmp_path):
    test_csrc_inside_the_package_gets_a_shipped_header(tmp_path)
    before = {p: p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
    headers, refused = _fix(tmp_path)
    assert not headers and not refused
    assert {p: p.read_text() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_no_edits_in_a_header_only_cuda_only_sources_include(tmp_path):
    """A header included only from a source the setup compiles for CUDA alone is never
    compiled on ROCm: the fix leaves it alone (and so the header is not planned from it)."""
    shfl = (
        "__device__ inline float twist(float v) { return v + __shfl_xor_sync(0xffffffff, v, 1); }\n"
    )
    write_tree(
        tmp_path,
        {
            "setup.py": (
                "import torch\nfrom setuptools import setup\n"
                "from torch.utils.cpp_extension import CUDAExtension\n"
                "srcs = ['csrc/main.cu']\n"
                "if torch.version.hip is None:\n"
                "    srcs.append('csrc/cutlass_op.cu')\n"
                "setup(name='v', ext_modules=[CUDAExtension('v._C', srcs)])\n"
            ),
            "csrc/main.cu": '#include <torch/extension.h>\n#include "shared.cuh"\n',
            "csrc/shared.cuh": "#pragma once\n" + shfl.replace("twist", "shared"),
            "csrc/cutlass_op.cu": '#include <torch/extension.h>\n#include "only_cutlass.cuh"\n',
            "csrc/only_cutlass.cuh": "#pragma once\n" + shfl,
        },
    )
    before = (tmp_path / "csrc/only_cutlass.cuh").read_text()
    fix_paths(LINTER, [str(tmp_path)])
    assert (tmp_path / "csrc/only_cutlass.cuh").read_text() == before
    assert "cuda2rocm_shfl_xor_sync" in (tmp_path / "csrc/shared.cuh").read_text()


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")
def test_the_header_defines_the_amd_platform_macro_as_1_for_plain_hipcc(tmp_path):
    """Code that tests `__HIP_PLATFORM_AMD__ == 1` (what hip::host and torch pass) still
    preprocesses after the header is included first under plain hipcc, whose HIP 5.2 headers
    define the macro empty."""
    from cuda2rocm import compat_header

    (tmp_path / HEADER).write_text(compat_header.render({"cudaStream_t"}))
    unit = tmp_path / "probe.cu"
    unit.write_text(
        f'#include "{HEADER}"\n'
        "#if defined(__HIP_PLATFORM_AMD__) && (__HIP_PLATFORM_AMD__ == 1)\n"
        "int on_amd = 1;\n#endif\n"
    )
    done = subprocess.run(
        ["hipcc", "--offload-arch=gfx90a", "-x", "hip", "-fsyntax-only", str(unit)],
        capture_output=True,
        text=True,
        env={**os.environ, "HIP_PLATFORM": "amd"},
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_the_header_replaces_a_runtime_include_inside_a_condition_rocm_takes(tmp_path):
    # The GPU part of a header sits under the project's own switch, which its ROCm build
    # defines; CPU-only units include the header too. The compatibility header takes the
    # runtime include's place inside the switch, not line 1 (where every CPU unit would get
    # a runtime it cannot find).
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p CXX)\noption(ON_AMD OFF)\nif(ON_AMD)\n  find_package(hip REQUIRED)\n"
        "  add_definitions(-DGPU_PART=1)\nendif()\nadd_library(p unit.cc)\n"
    )
    header = (
        "#pragma once\n#include <vector>\n#if GPU_PART\n#include <cuda_runtime.h>\n"
        "inline void wait(cudaStream_t s) { cudaStreamSynchronize(s); }\n#endif\n"
    )
    (tmp_path / "gpu_part.h").write_text(header)
    (tmp_path / "unit.cc").write_text('#include "gpu_part.h"\nint f() { return 0; }\n')
    run_cli("fix", "--exit-zero", str(tmp_path))
    fixed = (tmp_path / "gpu_part.h").read_text()
    assert fixed.startswith("#pragma once\n#include <vector>\n#if GPU_PART\n")
    assert '#if GPU_PART\n#include "cuda2rocm_compat.h"\n' in fixed
    assert "<cuda_runtime.h>" not in fixed
    # under a condition no HIP pass compiles, the header still goes first
    (tmp_path / "nv_only.h").write_text(
        "#include <vector>\n#ifdef __CUDACC__\n#include <cuda_runtime.h>\n#endif\n"
        "inline void wait2(cudaStream_t s) { cudaStreamSynchronize(s); }\n"
    )
    run_cli("fix", "--exit-zero", str(tmp_path))
    assert (tmp_path / "nv_only.h").read_text().startswith('#include "cuda2rocm_compat.h"\n')
