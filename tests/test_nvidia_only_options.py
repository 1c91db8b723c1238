"""Build options a ROCm build cannot turn on (their branch needs an NVIDIA-only package), CMake
variables read only on the CUDA side, and `#if` shapes already true on ROCm: the findings they
hold are kept as guarded, with the reason; anything short of proof stays reported."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.context import nvidia_options
from cuda2rocm.engine import Linter
from cuda2rocm.model import Severity

TOP = """\
option(MYLIB_ENABLE_ROCM "ROCm" OFF)
option(MYLIB_WITH_ANN "cuVS indexes" OFF)
if(MYLIB_ENABLE_ROCM)
  enable_language(HIP)
  add_definitions(-DMYLIB_ROCM)
endif()
if(MYLIB_WITH_ANN AND NOT TARGET cuvs::cuvs)
  find_package(cuvs REQUIRED)
endif()
add_subdirectory(src)
"""
SRC = """\
set(GPU_LIBS CUDA::cudart CUDA::cublas)
set(SRC kernels.cu)
if(MYLIB_WITH_ANN)
  list(APPEND SRC ann.cu ann.h)
  my_test(ann_test.cu)
  target_compile_definitions(mylib PUBLIC MYLIB_USE_ANN=1)
endif()
add_library(mylib ${SRC})
if(MYLIB_ENABLE_ROCM)
  target_link_libraries(mylib PRIVATE hip::host)
else()
  target_link_libraries(mylib PRIVATE ${GPU_LIBS})
endif()
"""
# CUDA data types HIP has no value of the same meaning for (vendor-blas-dnn's; CUDA_R_16F and
# the like are hip-stream's, which maps them).
ANN_H = "#pragma once\nstruct AnnParams { libraryPropertyType type; };\n"
ANN = '#include "ann.h"\ncudaDataType_t pick() { return CUDA_R_8F_E4M3; }\n'
TEST = '#include "ann.h"\ncudaDataType_t test_type() { return CUDA_R_8F_E5M2; }\n'
KERNELS = """\
#include <hip/hip_runtime.h>
#if defined(MYLIB_USE_ANN) && !defined(MYLIB_NO_ANN)
#include "ann.h"
#include <cuda/memory_resource>
#endif
__global__ void k(float* x) { x[0] = 1.f; }
"""
RULES = ("vendor-blas-dnn", "hip-include", "cmake-cuda-language", "cuda-only-component")


def _project(root: Path, **override: str) -> None:
    files = {
        "CMakeLists.txt": TOP,
        "src/CMakeLists.txt": SRC,
        "src/ann.h": ANN_H,
        "src/ann.cu": ANN,
        "src/ann_test.cu": TEST,
        "src/kernels.cu": KERNELS,
    }
    files.update(override)
    write_tree(root, files)


def _run(root: Path):
    specs = [r for r in load_catalogue() if r.id in RULES]
    result = runner.run(Linter(specs), [root])

    def key(d):
        return (Path(d.path).resolve().relative_to(root.resolve()).as_posix(), d.position.line)

    reported = {key(d): d for d in result.diagnostics}
    guarded = {key(d): d.guarded for d in result.guarded}
    return reported, guarded


def test_option_needing_cuvs_is_off_on_rocm(tmp_path):
    _project(tmp_path)
    reported, guarded = _run(tmp_path)
    for where in [("src/ann.cu", 2), ("src/ann.h", 2), ("src/ann_test.cu", 2)]:
        assert where not in reported
        assert "`MYLIB_WITH_ANN` needs cuVS" in guarded[where], guarded
        assert "docs.nvidia.com/cuvs" in guarded[where]
    # The macro the option defines is not defined on ROCm: its #if is skipped by HIP.
    assert "`-DMYLIB_USE_ANN` is passed only to CUDA builds" in guarded[("src/kernels.cu", 4)]
    # The CUDA toolkit targets are set unconditionally but used only in the CUDA branch.
    assert ("src/CMakeLists.txt", 1) not in reported
    assert "`GPU_LIBS` is set here but used only where" in guarded[("src/CMakeLists.txt", 1)]
    assert "src/CMakeLists.txt:12" in guarded[("src/CMakeLists.txt", 1)]
    # No porting decision to take: the component summary is a note.
    summaries = [d for d in reported.values() if d.rule == "cuda-only-component"]
    assert summaries and all(d.severity is Severity.INFO for d in summaries)


def test_header_included_by_rocm_code_stays_reported(tmp_path):
    _project(tmp_path, **{"src/kernels.cu": '#include "ann.h"\n' + KERNELS})
    reported, guarded = _run(tmp_path)
    assert ("src/ann.h", 2) in reported  # kernels.cu (ROCm-built) includes it unconditionally
    assert ("src/ann.cu", 2) in guarded


def test_unknown_or_vendor_conditioned_options_stay_reported(tmp_path):
    # An option whose branch needs no NVIDIA-only package: unknown on ROCm.
    _project(
        tmp_path, **{"CMakeLists.txt": TOP.replace("find_package(cuvs", "find_package(Eigen3")}
    )
    reported, guarded = _run(tmp_path)
    assert ("src/ann.cu", 2) in reported and ("src/ann.h", 2) in reported
    assert ("src/kernels.cu", 4) in reported
    # The CUDA-side variable flow needs no option: still guarded.
    assert ("src/CMakeLists.txt", 1) in guarded


def test_variable_read_on_the_rocm_side_is_reported(tmp_path):
    live = SRC.replace("hip::host)", "hip::host ${GPU_LIBS})")
    _project(tmp_path, **{"src/CMakeLists.txt": live})
    reported, _ = _run(tmp_path)
    assert ("src/CMakeLists.txt", 1) in reported
    scoped = SRC.replace("CUDA::cublas)", "CUDA::cublas PARENT_SCOPE)")
    _project(tmp_path, **{"src/CMakeLists.txt": scoped})
    reported, _ = _run(tmp_path)
    assert ("src/CMakeLists.txt", 1) in reported


def _options(text: str, rocm: bool = True) -> dict[str, str]:
    switch = "if(USE_ROCM)\n  enable_language(HIP)\nendif()\n" if rocm else ""
    return nvidia_options.options(
        [(Path("CMakeLists.txt"), "CMakeLists.txt", (switch + text).encode())]
    )


def test_which_options_are_off():
    assert set(_options("if(WITH_CUDNN)\n  find_package(CUDNN)\nendif()\n")) == {"WITH_CUDNN"}
    assert set(_options("if(USE_TRT)\n  find_package(TensorRT REQUIRED)\nendif()\n")) == {"USE_TRT"}
    # No ROCm switch in the project (not ported yet): its CUDA options are the port's work.
    assert _options("if(WITH_CUDNN)\n  find_package(CUDNN)\nendif()\n", rocm=False) == {}
    # A vendor test around it: a ROCm build may turn the option on and take another branch.
    nested = "if(NOT USE_ROCM)\n  if(WITH_CUDNN)\n    find_package(CUDNN)\n  endif()\nendif()\n"
    assert _options(nested) == {}
    # Only the option alone (or with the package's own target test) says the option needs it.
    for condition in ("A OR WITH_CUDNN", "A AND WITH_CUDNN", "NOT WITH_CUDNN"):
        assert _options(f"if({condition})\n  find_package(CUDNN)\nendif()\n") == {}, condition
    chain = "if(A)\nelseif(WITH_CUDNN)\n  find_package(CUDNN)\nendif()\n"
    assert _options(chain) == {}
    # A package with ROCm counterparts under its name, or none listed: nothing.
    assert _options("if(WITH_NCCL)\n  find_package(NCCL)\nendif()\n") == {}
    # The project refuses the combination itself.
    refused = 'if(USE_ROCM AND WITH_FLASH)\n  message(FATAL_ERROR "no")\nendif()\n'
    assert "refuses `WITH_FLASH` with `USE_ROCM`" in _options(refused)["WITH_FLASH"]
    warned = 'if(USE_ROCM AND WITH_FLASH)\n  message(WARNING "slow")\nendif()\n'
    assert _options(warned) == {}


def test_every_listed_package_cites_a_source():
    for name, package in nvidia_options.packages().items():
        assert package.why and package.url.startswith("https://"), name


# -- conditions already decided on ROCm ---------------------------------------------------------
def _lint(root: Path, files: dict[str, str], *rules: str):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    specs = [r for r in load_catalogue() if r.id in rules]
    result = runner.run(Linter(specs), [root])
    return result.diagnostics, result.guarded


ASSERT_H = """\
#ifndef MY_ASSERT_H
#define MY_ASSERT_H
#if defined(__CUDA_ARCH__) || defined(MY_USE_ROCM)
#define MY_ASSERT(X) assert(X)
#else
#define MY_ASSERT(X) my_host_assert(X)
#endif
#endif
"""
ROCM_CMAKE = "if(MY_ENABLE_ROCM)\n  add_definitions(-DMY_USE_ROCM)\nendif()\n"


def test_arch_or_rocm_macro_in_an_include_guarded_header(tmp_path):
    files = {"assert.h": ASSERT_H, "CMakeLists.txt": ROCM_CMAKE}
    reported, guarded = _lint(tmp_path, files, "cuda-arch-macro")
    assert not reported
    assert len(guarded) == 1 and "true in every HIP pass" in guarded[0].guarded
    # The macro is not known to be defined for ROCm: reported.
    (tmp_path / "CMakeLists.txt").write_text("add_library(x x.cu)\n")
    reported, _ = _lint(tmp_path, {}, "cuda-arch-macro")
    assert [d.position.line for d in reported] == [3]


def test_nvcc_only_guard_true_under_hipcc(tmp_path):
    version = (
        "#if !defined(__CUDACC__) || __CUDACC_VER_MAJOR__ < 11\nint ctz(unsigned long);\n#endif\n"
    )
    negated = "#ifndef __CUDACC__\n#define __device__\n#else\n#define HD __device__\n#endif\n"
    reported, guarded = _lint(tmp_path, {"a.h": version, "b.h": negated}, "nvcc-only-guard")
    assert [Path(d.path).name for d in guarded] == ["a.h"]
    assert "hipcc takes this branch" in guarded[0].guarded
    assert "some nvcc builds take it too" in guarded[0].guarded
    # `#ifndef __CUDACC__` with an #else: hipcc takes the non-nvcc side, which nvcc never does.
    assert [Path(d.path).name for d in reported] == ["b.h"]
    assert "hipcc takes this branch" in reported[0].message and "`#else`" in reported[0].message
    # The same version test with an #else: nvcc may take the #else, hipcc never does.
    with_else = version.replace("#endif", "#else\nint ctz2(unsigned long);\n#endif")
    reported, guarded = _lint(tmp_path, {"a.h": with_else}, "nvcc-only-guard")
    assert sorted(Path(d.path).name for d in reported) == ["a.h", "b.h"] and not guarded


FEATURE_H = (
    "#pragma once\n#if __CUDA_ARCH__ >= 530\n#define MY_FAST_HALF 1\n#endif // MY_FAST_HALF\n"
)
USER = """\
#include "feature.h"
__device__ float twice(float x) {
#ifdef MY_FAST_HALF
  return __fmul_rn(x, 2.f);
#else
  return x * 2.f;
#endif  // MY_FAST_HALF
}
"""


def test_arch_feature_macro_with_fallbacks_is_a_note(tmp_path):
    reported, _ = _lint(tmp_path, {"feature.h": FEATURE_H, "user.cu": USER}, "cuda-arch-macro")
    assert [(Path(d.path).name, d.severity) for d in reported] == [("feature.h", Severity.INFO)]
    assert "only defines `MY_FAST_HALF`" in reported[0].message
    # A test of it with nothing on the other side: ROCm silently loses that code.
    (tmp_path / "user.cu").write_text(USER.replace("#else\n  return x * 2.f;\n", ""))
    reported, _ = _lint(tmp_path, {}, "cuda-arch-macro")
    assert [(Path(d.path).name, d.severity) for d in reported] == [("feature.h", Severity.WARNING)]
    # A use as a value (undefined on ROCm: does not compile) is no fallback either.
    (tmp_path / "user.cu").write_text(USER + "int speed = MY_FAST_HALF;\n")
    reported, _ = _lint(tmp_path, {}, "cuda-arch-macro")
    assert [d.severity for d in reported] == [Severity.WARNING]
