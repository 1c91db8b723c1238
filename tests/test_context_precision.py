"""Context model, precision cases from the review of ported projects (issue 13): code a ROCm
build provably never compiles or runs is guarded, with a reason; unknown stays reported.

1. sources a project build helper adds only `if not rocm_build()`, joined onto a folder its
   caller passes (TransformerEngine's build_tools/pytorch.py shape);
2. `glob.glob(os.path.join(here, "csrc", "**", "*.cu"))` sources (detectron2's setup.py shape);
3. a function whose only calls are in code ROCm never runs (flash-attention's setup.py shape);
4. the CUDA branch of a CMake `if(<ROCm switch>) ... else()` (faiss, TransformerEngine tests);
5. a warp-size constant another file defines as the wavefront under the ROCm macro (faiss).
"""

from __future__ import annotations

from pathlib import Path

from conftest import lint_rules as _run
from conftest import reported_and_guarded as _where
from conftest import write_tree as _write

from cuda2rocm.build_context import extension_sources, torch_built_dirs
from cuda2rocm.context.build import cmake_dead_lines, rocm_companions

PTX = '__device__ int lane() { int l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }\n'


# -- 1. build helpers ----------------------------------------------------------------------------
UTILS = """\
import os
import shutil


def rocm_build() -> bool:
    if os.getenv("MY_USE_ROCM"):
        return True
    return shutil.which("nvcc") is None and shutil.which("hipcc") is not None
"""
EXT = """\
from pathlib import Path

from .utils import rocm_build


def setup_ext(csrc):
    csrc = Path(csrc)
    sources = [csrc / "common.cu"]
    if not rocm_build():
        sources.extend([csrc / "nvonly" / "fast.cu"])
    from torch.utils.cpp_extension import CUDAExtension

    return CUDAExtension("m", sources)
"""
SETUP = """\
from setuptools import setup

from build_tools.ext import setup_ext

setup(name="m", ext_modules=[setup_ext("pkg/csrc")])
"""


def test_sources_a_build_helper_adds_only_when_not_rocm_build(tmp_path):
    _write(
        tmp_path,
        {
            "build_tools/utils.py": UTILS,
            "build_tools/ext.py": EXT,
            "setup.py": SETUP,
            "pkg/csrc/common.cu": PTX,
            "pkg/csrc/nvonly/fast.cu": PTX,
        },
    )
    reported, guarded = _where(_run(tmp_path, "inline-ptx"), tmp_path)
    assert ("pkg/csrc/common.cu", 1) in reported
    assert "`if not rocm_build():` (line 9)" in guarded[("pkg/csrc/nvonly/fast.cu", 1)]


def test_build_helper_with_other_name_or_unknown_caller_guards_nothing(tmp_path):
    files = {
        "build_tools/utils.py": UTILS.replace("rocm_build", "fast_build"),
        "build_tools/ext.py": EXT.replace("rocm_build", "fast_build"),
        "setup.py": SETUP,
        "pkg/csrc/common.cu": PTX,
        "pkg/csrc/nvonly/fast.cu": PTX,
    }
    _write(tmp_path, files)
    assert _where(_run(tmp_path, "inline-ptx"), tmp_path)[1] == {}
    # The ROCm-build test is known, but the folder comes from the environment: unknown.
    files["build_tools/utils.py"] = UTILS
    files["build_tools/ext.py"] = EXT
    files["setup.py"] = SETUP.replace('"pkg/csrc"', 'os.environ["CSRC"]')
    _write(tmp_path, files)
    reported, guarded = _where(_run(tmp_path, "inline-ptx"), tmp_path)
    assert guarded == {} and ("pkg/csrc/nvonly/fast.cu", 1) in reported


# -- 2. glob sources -------------------------------------------------------------------------------
GLOB_SETUP = """\
import glob
import os
from os import path

from torch.utils.cpp_extension import CppExtension, CUDAExtension


def get_extensions():
    this_dir = path.dirname(path.abspath(__file__))
    csrc = path.join(this_dir, "pkg", "layers", "csrc")
    sources = [path.join(csrc, "vision.cpp")]
    source_cuda = glob.glob(path.join(csrc, "**", "*.cu")) + glob.glob(path.join(csrc, "*.cu"))
    extension = CppExtension
    if os.getenv("FORCE_CUDA"):
        extension = CUDAExtension
        sources += source_cuda
    return [extension("pkg._C", sources)]
"""
CUDA_VERSION_CU = "#include <cuda_runtime_api.h>\nint version() { return CUDART_VERSION; }\n"


def test_glob_sources_are_built_by_torch(tmp_path):
    found = extension_sources(GLOB_SETUP)
    assert "pkg/layers/csrc/**/*.cu" in found and "pkg/layers/csrc/vision.cpp" in found
    _write(tmp_path, {"setup.py": GLOB_SETUP, "pkg/layers/csrc/cuda_version.cu": CUDA_VERSION_CU})
    setup = tmp_path / "setup.py"
    csrc = (tmp_path / "pkg/layers/csrc").resolve()
    assert torch_built_dirs([(setup, setup.read_bytes())]) == {csrc}
    result = _run(tmp_path, "hip-include")
    assert not [d for d in result.diagnostics if "not built by torch" in d.message]


def test_glob_of_an_unknown_folder_claims_nothing(tmp_path):
    text = GLOB_SETUP.replace('path.join(this_dir, "pkg", "layers", "csrc")', 'os.environ["SRC"]')
    assert [s for s in extension_sources(text) if "*" in s] == []
    _write(tmp_path, {"setup.py": text, "pkg/layers/csrc/cuda_version.cu": CUDA_VERSION_CU})
    result = _run(tmp_path, "hip-include")
    assert [d for d in result.diagnostics if "not built by torch" in d.message]


# -- 3. functions called only where ROCm never runs ---------------------------------------------
CALLS = """\
from torch.utils.cpp_extension import CUDA_HOME, IS_HIP_EXTENSION

IS_ROCM = IS_HIP_EXTENSION


def check_cuda_home(option):
    if CUDA_HOME is None:
        raise RuntimeError(option)


def check_twice(option):
    check_cuda_home(option)


def also_called_live(option):
    if CUDA_HOME is None:
        raise RuntimeError(option)


def passed_as_value(option):
    if CUDA_HOME is None:
        raise RuntimeError(option)


if not IS_ROCM:
    check_twice("x")
also_called_live("y")
HOOKS = [passed_as_value]
"""


def test_function_called_only_in_cuda_only_code_is_guarded(tmp_path):
    _write(tmp_path, {"setup.py": CALLS})
    reported, guarded = _where(_run(tmp_path, "cuda-home-gate"), tmp_path)
    # check_cuda_home: called only from check_twice, called only under `if not IS_ROCM:`.
    assert "`check_cuda_home()` is called only where ROCm never runs" in guarded[("setup.py", 7)]
    assert {("setup.py", 16), ("setup.py", 21)} <= reported  # a live call; passed as a value


def test_function_another_file_may_call_stays_reported(tmp_path):
    _write(tmp_path, {"setup.py": CALLS, "tools/other.py": "from setup import check_twice\n"})
    reported, guarded = _where(_run(tmp_path, "cuda-home-gate"), tmp_path)
    assert guarded == {} and ("setup.py", 7) in reported


# -- 4. CMake branches ---------------------------------------------------------------------------
TOP_CMAKE = """\
option(USE_CUDA "Use CUDA" ON)
if(EXISTS "/opt/rocm" AND NOT EXISTS "/usr/bin/nvcc")
  set(USE_ROCM ON)
  set(USE_CUDA OFF)
endif()
add_subdirectory(util)
if(PROJ_ENABLE_ROCM)
  target_link_libraries(x hip::host)
elseif(PROJ_STATIC)
  target_link_libraries(x CUDA::cublas_static)
else()
  target_link_libraries(x CUDA::cublas)
endif()
if(NOT PROJ_ENABLE_ROCM)
  target_link_libraries(z CUDA::cudart)
endif()
if(SOME_OPTION)
  target_link_libraries(y CUDA::cublas)
endif()
"""
UTIL_CMAKE = """\
if(USE_CUDA)
  add_executable(t a.cpp ../common.cu)
else()
  add_executable(t a.cpp ../common.hip)
endif()
"""


def test_cmake_cuda_branches_are_guarded(tmp_path):
    assert rocm_companions(TOP_CMAKE) == {"USE_CUDA": False}
    dead = cmake_dead_lines(TOP_CMAKE, rocm_companions(TOP_CMAKE))
    assert [(a, b) for a, b, _ in dead] == [(10, 10), (12, 12), (15, 15)]
    _write(tmp_path, {"CMakeLists.txt": TOP_CMAKE, "util/CMakeLists.txt": UTIL_CMAKE})
    reported, guarded = _where(_run(tmp_path, "cmake-cuda-language"), tmp_path)
    assert reported == {("CMakeLists.txt", 18)}  # under an unknown option: reported
    assert "the `else()` of `if(PROJ_ENABLE_ROCM)` (line 7)" in guarded[("CMakeLists.txt", 12)]
    assert "`if(USE_CUDA)` (line 1)" in guarded[("util/CMakeLists.txt", 2)]


def test_cmake_switch_without_rocm_configure_stays_reported(tmp_path):
    # USE_CUDA is not set off by a ROCm configure block here: unknown on ROCm.
    top = TOP_CMAKE.replace("  set(USE_ROCM ON)\n", "")
    assert rocm_companions(top) == {}
    # (Its else() names no HIP source: with `common.hip` there the chain's HIP branch would
    # tell, tests/test_cmake_vendor_branches.py.)
    util = UTIL_CMAKE.replace("../common.hip", "../common_host.cpp")
    _write(tmp_path, {"CMakeLists.txt": top, "util/CMakeLists.txt": util})
    reported, _ = _where(_run(tmp_path, "cmake-cuda-language"), tmp_path)
    assert ("util/CMakeLists.txt", 2) in reported
    # A switch that names ROCm only as a negation is not a ROCm switch.
    assert cmake_dead_lines("if(NO_ROCM)\n  set(A 1)\nelse()\n  set(B 1)\nendif()\n") == []


# -- 5. warp-size constants defined elsewhere --------------------------------------------------
DEFS = """\
#pragma once
#ifdef USE_AMD_ROCM
#if __AMDGCN_WAVEFRONT_SIZE == 32u
constexpr int kWarpSize = 32;
#else
constexpr int kWarpSize = 64;
#endif
#else
constexpr int kWarpSize = 32;
#endif
"""
KERNEL = """\
#include "defs.cuh"
__global__ void k(float* out) {
  int laneId = threadIdx.x % kWarpSize;
  out[threadIdx.x / kWarpSize] = laneId;
}
"""
ROCM_CMAKE = (
    'option(PROJ_ENABLE_ROCM "ROCm" OFF)\n'
    "if(PROJ_ENABLE_ROCM)\n  add_definitions(-DUSE_AMD_ROCM)\nendif()\n"
)


def test_warp_constant_that_is_the_wavefront_on_rocm_is_not_reported(tmp_path):
    _write(tmp_path, {"defs.cuh": DEFS, "k.cu": KERNEL, "CMakeLists.txt": ROCM_CMAKE})
    reported, _ = _where(_run(tmp_path, "warp-size-32"), tmp_path)
    assert not {r for r in reported if r[0] == "k.cu"}


def test_warp_constant_that_may_be_32_on_rocm_stays_reported(tmp_path):
    # The ROCm macro is not one the build defines: the bare 32 may be what ROCm compiles.
    defs = DEFS.replace("USE_AMD_ROCM", "SOME_OTHER_MACRO")
    _write(tmp_path, {"defs.cuh": defs, "k.cu": KERNEL, "CMakeLists.txt": ROCM_CMAKE})
    reported, _ = _where(_run(tmp_path, "warp-size-32"), tmp_path)
    assert {("k.cu", 3), ("k.cu", 4)} <= reported
    # Defined from another name, which may itself be 32: unknown.
    _write(tmp_path, {"defs.cuh": DEFS.replace("kWarpSize = 64", "kWarpSize = WARP_SIZE")})
    reported, _ = _where(_run(tmp_path, "warp-size-32"), tmp_path)
    assert {("k.cu", 3), ("k.cu", 4)} <= reported
    # Another header defines the same name as a bare 32 that ROCm compiles.
    _write(tmp_path, {"defs.cuh": DEFS, "other.cuh": "constexpr int kWarpSize = 32;\n"})
    reported, _ = _where(_run(tmp_path, "warp-size-32"), tmp_path)
    assert {("k.cu", 3), ("k.cu", 4)} <= reported


TARGET = """\
import os

from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, IS_HIP_EXTENSION

BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")
if BUILD_TARGET == "auto":
    IS_ROCM = IS_HIP_EXTENSION
elif BUILD_TARGET == "cuda":
    IS_ROCM = False
elif BUILD_TARGET == "rocm":
    IS_ROCM = True


def check_cuda_home():
    if CUDA_HOME is None:
        raise RuntimeError("CUDA_HOME")


if not os.getenv("SKIP") and not IS_ROCM:
    check_cuda_home()
setup(name="m")
"""


def test_build_target_switch_of_a_build_script(tmp_path):
    _write(tmp_path, {"setup.py": TARGET})
    reported, guarded = _where(_run(tmp_path, "cuda-home-gate"), tmp_path)
    assert "`check_cuda_home()` is called only where ROCm" in guarded[("setup.py", 16)]
    assert reported == set()
    # Not a build script (no extension build): the environment is runtime data, unknown.
    runtime = TARGET.replace("from setuptools import setup\n", "").replace('setup(name="m")', "")
    _write(tmp_path, {"setup.py": runtime})
    reported, guarded = _where(_run(tmp_path, "cuda-home-gate"), tmp_path)
    assert guarded == {} and ("setup.py", 15) in reported


# -- a framework list a build helper removes an item from on ROCm --------------------------------
FRAMEWORKS_SETUP = """\
import shutil
import sys

from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension


def rocm_build() -> bool:
    return shutil.which("nvcc") is None and shutil.which("hipcc") is not None


def frameworks() -> list:
    found = []
    for arg in sys.argv:
        if arg.startswith("--fw="):
            found.append(arg[5:])
    if rocm_build():
        if "tinyfw" in found:
            found.remove("tinyfw")
    return found


picked = frameworks()
ext_modules = [CUDAExtension("core", ["csrc/core.cu"])]
if "tinyfw" in picked:
    ext_modules.append(CUDAExtension("tinyext", ["tiny/csrc/tiny.cu"]))
setup(name="m", ext_modules=ext_modules)
"""


def test_item_removed_from_a_helper_list_on_rocm_guards_its_branch(tmp_path):
    _write(
        tmp_path,
        {"setup.py": FRAMEWORKS_SETUP, "csrc/core.cu": PTX, "tiny/csrc/tiny.cu": PTX},
    )
    reported, guarded = _where(_run(tmp_path, "inline-ptx"), tmp_path)
    assert ("csrc/core.cu", 1) in reported
    assert ("tiny/csrc/tiny.cu", 1) in guarded


def test_item_added_back_after_the_removal_stays_reported(tmp_path):
    added_back = FRAMEWORKS_SETUP.replace(
        "    return found\n",
        '    if shutil.which("tiny"):\n        found.append("tinyfw")\n    return found\n',
    )
    unknown_test = FRAMEWORKS_SETUP.replace("if rocm_build():", 'if shutil.which("hipcc"):')
    for text in (added_back, unknown_test):
        _write(tmp_path, {"setup.py": text, "csrc/core.cu": PTX, "tiny/csrc/tiny.cu": PTX})
        reported, guarded = _where(_run(tmp_path, "inline-ptx"), tmp_path)
        assert ("tiny/csrc/tiny.cu", 1) in reported and guarded == {}


def test_item_removed_by_an_imported_build_helper_guards_the_branch(tmp_path):
    helper = FRAMEWORKS_SETUP.split("\n\n\npicked", 1)[0] + "\n"
    setup_py = (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "from build_tools.utils import frameworks\n\n"
        "picked = frameworks()\n" + FRAMEWORKS_SETUP.split("picked = frameworks()\n", 1)[1]
    ).replace('["csrc/core.cu"]', '["csrc/core.cu", "csrc/uses_torch.cpp"]')
    files = {
        "build_tools/utils.py": helper,
        "setup.py": setup_py,
        "csrc/core.cu": PTX,
        "tiny/csrc/tiny.cu": PTX,
        "tiny/csrc/tiny_util.cuh": PTX,
        # A ROCm-built source naming torch's csrc/ does not make tiny/csrc/ ROCm's.
        "csrc/uses_torch.cpp": "#include <torch/csrc/api/include/torch/types.h>\n",
    }
    _write(tmp_path, files)
    result = _run(tmp_path, "inline-ptx", "cuda-only-component")
    reported, guarded = _where(result, tmp_path)
    assert ("csrc/core.cu", 1) in reported and ("tiny/csrc/tiny.cu", 1) in guarded
    components = [d for d in result.diagnostics if d.rule == "cuda-only-component"]
    assert len(components) == 1 and '"tinyfw" in picked' in components[0].message
    # The whole folder is CUDA-only, not only the file listed.
    assert ("tiny/csrc/tiny_util.cuh", 1) in guarded
    files["build_tools/utils.py"] = helper.replace("found.remove(", "found.append(")
    _write(tmp_path, files)
    reported, guarded = _where(_run(tmp_path, "inline-ptx"), tmp_path)
    assert ("tiny/csrc/tiny.cu", 1) in reported and guarded == {}


def test_helper_module_imported_only_in_the_cuda_only_branch_is_cuda_only(tmp_path):
    setup_py = FRAMEWORKS_SETUP.replace(
        '    ext_modules.append(CUDAExtension("tinyext", ["tiny/csrc/tiny.cu"]))\n',
        "    from build_tools.tinyfw import tiny_ext\n\n    ext_modules.append(tiny_ext())\n",
    )
    tinyfw = (
        "import subprocess\n\n\ndef tiny_ext():\n"
        '    subprocess.run(["nvidia-smi"])\n    return None\n'
    )
    files = {"setup.py": setup_py, "build_tools/tinyfw.py": tinyfw, "csrc/core.cu": PTX}
    _write(tmp_path, files)
    result = _run(tmp_path, "nvml-smi", "cuda-only-component")
    reported, guarded = _where(result, tmp_path)
    assert ("build_tools/tinyfw.py", 5) in guarded and not reported
    assert any("build_tools/tinyfw.py" in d.message for d in result.diagnostics)
    # Another file of the run imports it too: not known to be CUDA-only.
    files["tools/other.py"] = "from build_tools import tinyfw\n"
    _write(tmp_path, files)
    reported, guarded = _where(_run(tmp_path, "nvml-smi", "cuda-only-component"), tmp_path)
    assert ("build_tools/tinyfw.py", 5) in reported and guarded == {}


# -- functions of a setup.py that nothing calls --------------------------------------------------
UNCALLED_SETUP = """\
import torch
from packaging.version import parse
from torch.utils.cpp_extension import CUDAExtension


def check_versions():
    return parse(torch.version.cuda)


def used():
    return parse(torch.version.cuda)


ext = CUDAExtension("x", sources=["x.cu"])
used()
"""


def test_a_setup_py_function_nothing_calls_runs_in_no_build(tmp_path):
    (tmp_path / "setup.py").write_text(UNCALLED_SETUP)
    reported, guarded = _where(_run(tmp_path, "torch-version-cuda"), tmp_path)
    assert "called nowhere" in guarded[("setup.py", 7)]
    assert ("setup.py", 11) in reported  # called: stays


def test_an_uncalled_function_named_elsewhere_or_outside_setup_py_stays(tmp_path):
    (tmp_path / "setup.py").write_text(UNCALLED_SETUP)
    (tmp_path / "tools.py").write_text("from setup import check_versions\n")
    reported, _ = _where(_run(tmp_path, "torch-version-cuda"), tmp_path)
    assert ("setup.py", 7) in reported
    (tmp_path / "tools.py").unlink()
    (tmp_path / "build_ext.py").write_text(UNCALLED_SETUP)  # a module: may be imported
    reported, _ = _where(_run(tmp_path, "torch-version-cuda"), tmp_path)
    assert ("build_ext.py", 7) in reported


def _helper_only_for_a_component(tiny_setup: str) -> dict[str, str]:
    """setup.py builds `tiny/csrc` with a helper module only where ROCm never runs; a second
    build script (`tiny/setup.py`) imports the same helper."""
    setup_py = FRAMEWORKS_SETUP.replace(
        '    ext_modules.append(CUDAExtension("tinyext", ["tiny/csrc/tiny.cu"]))\n',
        "    from build_tools.tinyfw import tiny_ext\n\n"
        '    ext_modules.append(tiny_ext("tiny/csrc"))\n',
    )
    tinyfw = (
        "import subprocess\n\n\ndef tiny_ext(folder):\n"
        '    subprocess.run(["nvidia-smi"])\n    return folder\n'
    )
    return {
        "setup.py": setup_py,
        "build_tools/tinyfw.py": tinyfw,
        "csrc/core.cu": PTX,
        "tiny/csrc/tiny.cu": PTX,
        "tiny/other/x.cu": PTX,
        "tiny/setup.py": tiny_setup,
    }


def test_helper_another_script_uses_only_to_build_the_component_joins_it(tmp_path):
    files = _helper_only_for_a_component(
        "from build_tools.tinyfw import tiny_ext\n\next = tiny_ext('csrc')\n"
    )
    _write(tmp_path, files)
    result = _run(tmp_path, "nvml-smi", "inline-ptx", "cuda-only-component")
    reported, guarded = _where(result, tmp_path)
    why = guarded[("build_tools/tinyfw.py", 5)]
    assert "`build_tools/tinyfw.py` is used only to build `tiny/csrc`" in why
    assert ("tiny/csrc/tiny.cu", 1) in guarded and ("csrc/core.cu", 1) in reported
    # One decision, one summary: the helper joins the folder's finding.
    summaries = [d for d in result.diagnostics if d.rule == "cuda-only-component"]
    assert len(summaries) == 1 and "`tiny/csrc`" in summaries[0].message


def test_helper_another_script_uses_otherwise_stays_reported(tmp_path):
    for tiny_setup in (
        # builds a folder ROCm may build
        "from build_tools.tinyfw import tiny_ext\n\next = tiny_ext('other')\n",
        # passes the helper on as a value
        "from build_tools.tinyfw import tiny_ext\n\nmake = tiny_ext\n",
        # an argument that is not a constant
        "import sys\nfrom build_tools.tinyfw import tiny_ext\n\next = tiny_ext(sys.argv[1])\n",
        # names the module again (a comment mentioning build_tools.tinyfw)
        "from build_tools.tinyfw import tiny_ext\n\next = tiny_ext('csrc')  # build_tools.tinyfw\n",
    ):
        _write(tmp_path, _helper_only_for_a_component(tiny_setup))
        reported, guarded = _where(_run(tmp_path, "nvml-smi", "inline-ptx"), tmp_path)
        assert ("build_tools/tinyfw.py", 5) in reported, tiny_setup
        assert ("tiny/csrc/tiny.cu", 1) in guarded


# -- a header every include site of which the HIP pass skips -------------------------------------
HEADER_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension

setup(name="m", ext_modules=[CUDAExtension("m", ["csrc/main.cpp", "csrc/other.cpp"])])
"""


def test_header_included_only_where_hip_skips_it_is_guarded(tmp_path):
    files = {
        "setup.py": HEADER_SETUP,
        # torch's ROCm build passes -DUSE_ROCM=1 (cpp_extension COMMON_HIP_FLAGS)
        "csrc/main.cpp": '#ifndef USE_ROCM\n#include "cuda_only.h"\n#endif\n#include "both.h"\n',
        "csrc/other.cpp": '#if !defined(USE_ROCM)\n#include "cuda_only.h"\n#endif\n',
        "csrc/cuda_only.h": '#pragma once\n#include "nested.h"\n' + PTX,
        "csrc/nested.h": "#pragma once\n" + PTX,
        "csrc/both.h": "#pragma once\n" + PTX,
    }
    _write(tmp_path, files)
    reported, guarded = _where(_run(tmp_path, "inline-ptx"), tmp_path)
    why = guarded[("csrc/cuda_only.h", 3)]
    assert "csrc/main.cpp:2" in why and "#ifndef USE_ROCM" in why and "csrc/other.cpp:2" in why
    # included only from a header no ROCm compile includes
    assert "itself never included by ROCm" in guarded[("csrc/nested.h", 2)]
    assert ("csrc/both.h", 2) in reported


def test_header_with_a_live_or_unknown_include_site_stays_reported(tmp_path):
    base = {
        "setup.py": HEADER_SETUP,
        "csrc/main.cpp": '#ifndef USE_ROCM\n#include "cuda_only.h"\n#endif\n',
        "csrc/cuda_only.h": "#pragma once\n" + PTX,
    }
    for extra in (
        {"csrc/other.cpp": '#include "cuda_only.h"\n'},  # a site the HIP pass compiles
        {"csrc/other.cpp": '#ifdef MY_FLAG\n#include "cuda_only.h"\n#endif\n'},  # unknown
        {"csrc/other.cpp": "#define H <cuda_only.h>\n#include H\n"},  # a computed include
        {"csrc/other.cpp": '#include "sub/cuda_only.h"\n'},  # a name the run cannot resolve
        {"m.py": 'SRC = """\n#include "cuda_only.h"\n"""\n'},  # C++ in a Python string
    ):
        _write(tmp_path, {**base, **extra})
        reported, guarded = _where(_run(tmp_path, "inline-ptx"), tmp_path)
        assert ("csrc/cuda_only.h", 2) in reported and guarded == {}, extra
        for name in extra:
            (tmp_path / name).unlink()
    # A public header (under include/) may be included by code outside the run.
    public = {
        "setup.py": HEADER_SETUP,
        "csrc/main.cpp": '#ifndef USE_ROCM\n#include "../include/api.h"\n#endif\n',
        "include/api.h": "#pragma once\n" + PTX,
    }
    _write(tmp_path, public)
    reported, guarded = _where(_run(tmp_path, "inline-ptx"), tmp_path)
    assert ("include/api.h", 2) in reported


# -- Python that needs extension attributes the ROCm build never binds ---------------------------
BIND_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension

setup(name="m", ext_modules=[CUDAExtension(name="myext", sources=["csrc/bind.cpp"])])
"""
BIND_CPP = """\
#include <torch/extension.h>
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("common", &common);
#ifndef USE_ROCM
  m.def("cuda_only", &cuda_only);
  py::class_<Thing>(m, "CudaThing");
  m.def("both", &both);
#else
  m.def("both", &placeholder);
#endif
}
"""
SMI = '    subprocess.run(["nvidia-smi"])\n'
BIND_RUN = (
    "import subprocess\n"  # 1
    "import pkg.ops as ops\n\n\n"  # 2
    "def main():\n"  # 5
    + SMI  # 6: before the failure, no way out: cannot complete
    + "    ops.common()\n"  # 7
    "    thing = ops.CudaThing()\n"  # 8
    + SMI  # 9: after: never runs
    + "\n\ndef other(flag):\n"  # 12
    + SMI  # 13
    + "    ops.both()\n"  # 14: bound on ROCm too (the #else placeholder)
    "    maybe = ops.CudaThing() if flag else None\n"  # 15: conditional
    + SMI  # 16
    + "\n\ndef early(flag):\n"  # 19
    + SMI  # 20: may return before the failure
    + "    if flag:\n        return\n"  # 21-22
    "    ops.cuda_only()\n"  # 23
     + SMI  # 24: after: never runs
)
BIND_MODULE = (
    "import subprocess\nimport myext\n\nif myext.cuda_only():\n    pass\n\n\ndef test():\n" + SMI
)


def test_code_that_needs_an_attribute_bound_only_for_cuda_is_guarded(tmp_path):
    files = {
        "setup.py": BIND_SETUP,
        "csrc/bind.cpp": BIND_CPP,
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "from myext import *\n",
        "run.py": BIND_RUN,
        "test_mod.py": BIND_MODULE,
    }
    _write(tmp_path, files)
    reported, guarded = _where(_run(tmp_path, "nvml-smi"), tmp_path)
    assert "`main()` cannot complete on ROCm" in guarded[("run.py", 6)]
    assert "`ops.CudaThing` (line 8)" in guarded[("run.py", 6)]
    why = guarded[("run.py", 6)]
    assert "csrc/bind.cpp:6" in why and "#ifndef USE_ROCM" in why
    assert guarded[("run.py", 9)].startswith("ROCm never runs this: `main()` fails before it")
    assert {("run.py", 13), ("run.py", 16), ("run.py", 20)} <= reported
    assert "`early()` fails before it" in guarded[("run.py", 24)]
    # the module's top level needs it: the import fails, nothing after it runs
    assert "the module fails before it" in guarded[("test_mod.py", 9)]


def test_attribute_that_may_exist_on_rocm_keeps_findings_reported(tmp_path):
    base = {
        "setup.py": BIND_SETUP,
        "csrc/bind.cpp": BIND_CPP,
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "from myext import *\n",
        "run.py": BIND_RUN,
    }
    variants = [
        # Python tests for it (or defines it): the code expects it may be missing
        {"gate.py": 'import pkg.ops as ops\nHAS = hasattr(ops, "CudaThing")\n'},
        # the C++ spells it where ROCm compiles it too
        {"csrc/more.cpp": 'const char* name = "CudaThing";\n'},
        # the alias is rebound
        {"run.py": BIND_RUN + "\n\nops = None\n"},
        # the package may supply any name
        {"pkg/ops/__init__.py": "from myext import *\n\ndef __getattr__(name):\n    return None\n"},
    ]
    for extra in variants:
        _write(tmp_path, {**base, **extra})
        reported, _ = _where(_run(tmp_path, "nvml-smi"), tmp_path)
        assert ("run.py", 6) in reported and ("run.py", 9) in reported, extra
        for name in extra:
            if name not in base:
                (tmp_path / name).unlink()


# -- a driver name torch's hipify maps to a HIP function that exists -----------------------------
def test_cu_func_set_cache_config_is_renamed_by_a_torch_table_hipify(tmp_path):
    source = (
        "#include <cuda.h>\n"
        "void prefer_l1(CUfunction f) { cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1); }\n"
    )
    files = {
        # hipify_torch's CMake function: the project's build hipifies lib/ with torch's table
        "lib/CMakeLists.txt": "hipify(CUDA_SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR})\n",
        "lib/rtc.cpp": source,
        "plain/rtc.cpp": source,
    }
    _write(tmp_path, files)
    result = _run(tmp_path, "hip-stream")
    by_path = {
        Path(d.path).resolve().relative_to(tmp_path.resolve()).as_posix(): d
        for d in result.diagnostics
        if "cuFuncSetCacheConfig" in d.message
    }
    assert "lib/rtc.cpp" not in by_path  # hipify renames it to hipFuncSetCacheConfig
    plain = by_path["plain/rtc.cpp"]  # not hipified: a port to do, not "no HIP counterpart"
    assert "`hipFuncSetCacheConfig`" in plain.message and plain.severity.value == "warning"


# -- a branch an earlier assert rules out ---------------------------------------------------------
def test_a_version_branch_an_assert_rules_out_is_guarded(tmp_path):
    (tmp_path / "setup.py").write_text(
        "import os\nimport torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        'torch_ver = [int(x) for x in torch.__version__.split(".")[:2]]\n'
        'assert torch_ver >= [1, 8], "Requires PyTorch >= 1.8"\n'
        'flags = {"nvcc": []}\n'
        "if torch_ver < [1, 7]:\n"
        '    flags["nvcc"].append("-ccbin=cc")\n'
        "if torch_ver < [2, 0]:\n"
        '    flags["nvcc"].append("-ccbin=gcc")\n'
        'ext = CUDAExtension("x", ["x.cu"], extra_compile_args=flags)\n'
    )
    reported, guarded = _where(_run(tmp_path, "nvcc-flags"), tmp_path)
    assert "earlier `assert` admits" in guarded[("setup.py", 8)]
    assert ("setup.py", 10) in reported  # 2.0 is above the bound: may run


# -- a builder chosen by a conditional expression ------------------------------------------------
CHOSEN_SETUP = """\
import glob
import os

from setuptools import Extension, setup
from torch.utils import cpp_extension

gpu = os.environ.get("WITH_ACCEL", "1") == "1"
Builder = cpp_extension.CUDAExtension if gpu else cpp_extension.CppExtension
ops = Builder(name="pkg._ops", sources=glob.glob("pkg/native/*.cu") + ["pkg/native/bind.cpp"])
more = (cpp_extension.CUDAExtension if gpu else cpp_extension.CppExtension)(
    "pkg._more", ["pkg/extra/more.cu"]
)
plain = (cpp_extension.CUDAExtension if gpu else Extension)("pkg._plain", ["pkg/other/x.cu"])
setup(ext_modules=[ops, more, plain])
"""


def test_a_builder_chosen_by_a_conditional_expression_is_a_builder(tmp_path):
    found = extension_sources(CHOSEN_SETUP)
    assert "pkg/native/*.cu" in found and "pkg/native/bind.cpp" in found
    assert "pkg/extra/more.cu" in found
    # setuptools' own Extension on one side: torch may not build it, so it claims nothing
    assert "pkg/other/x.cu" not in found
    _write(
        tmp_path,
        {
            "setup.py": CHOSEN_SETUP,
            "pkg/native/version.cu": CUDA_VERSION_CU,
            "pkg/other/x.cu": CUDA_VERSION_CU,
        },
    )
    result = _run(tmp_path, "hip-include")
    unbuilt = {
        Path(d.path).parent.name for d in result.diagnostics if "not built by torch" in d.message
    }
    assert unbuilt == {"other"}
