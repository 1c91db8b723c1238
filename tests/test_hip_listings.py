"""HIP targets compiling another folder (context/hip_listings.py): that folder is ROCm's too."""

from __future__ import annotations

from pathlib import Path

from conftest import lint_rules, write_tree

from cuda2rocm.context import build_defines, hip_listings

RULES = ("hip-stream", "warp-mask-32bit", "cmake-cuda-language", "cuda-only-component")
TOP = (
    "cmake_minimum_required(VERSION 3.21)\nproject(mylib LANGUAGES CXX)\n"
    'option(MYLIB_GPU_NV "NVIDIA backend" OFF)\noption(MYLIB_GPU_AMD "AMD backend" OFF)\n'
    "if(MYLIB_GPU_NV)\n  add_subdirectory(lib-cu)\nendif()\n"
    "if(MYLIB_GPU_AMD)\n  add_subdirectory(lib-amd)\nendif()\n"
)
# The CUDA folder's own build asks for an architecture-specific target (signal 1 material).
CU_BUILD = (
    "enable_language(CUDA)\nfile(GLOB KERNELS *.cu)\nadd_library(mylib_cu ${KERNELS})\n"
    'set_target_properties(mylib_cu PROPERTIES CUDA_ARCHITECTURES "90a")\n'
)
COMMON = (
    '#pragma once\n#ifdef MYLIB_ON_HIP\n#include "vendor/hipmap.h"\n#else\n'
    "#include <cuda_runtime.h>\n#endif\n"
)
HIPMAP = (
    "#pragma once\n#include <hip/hip_runtime.h>\n"
    "#define __shfl_xor_sync(mask, v, l, w) __shfl_xor(v, l, w)\n"
    "#define cudaStream_t hipStream_t\n#define cudaStreamSynchronize hipStreamSynchronize\n"
)
REDUCE = (
    '#include "common.cuh"\n'
    "__global__ void row_sum(const float* in, float* out) {\n"
    "    float v = in[threadIdx.x];\n"
    "    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off, 32);\n"
    "    if (threadIdx.x == 0) out[blockIdx.x] = v;\n"
    "}\n"
    "void launch_row_sum(const float* in, float* out, int rows, cudaStream_t stream) {\n"
    "    row_sum<<<rows, 32, 0, stream>>>(in, out);\n"
    "    cudaStreamSynchronize(stream);\n"
    "}\n"
)
# A kernel of the same folder that does not include the compat header: no port reaches it.
BARE = (
    "__global__ void any_lane(int* out, int v) {\n"
    "    out[0] = __shfl_xor_sync(0xffffffff, v, 1, 32);\n"
    "}\n"
)
AMD_BUILD = (
    "enable_language(HIP)\n"
    "file(GLOB MYLIB_AMD_SOURCES ../lib-cu/*.cu)\n"
    "set_source_files_properties(${MYLIB_AMD_SOURCES} PROPERTIES LANGUAGE HIP)\n"
    "add_library(mylib_amd ${MYLIB_AMD_SOURCES})\n"
    'set_target_properties(mylib_amd PROPERTIES HIP_ARCHITECTURES "gfx90a;gfx942")\n'
    "add_compile_definitions(MYLIB_ON_HIP)\n"
)


def _project(root: Path, amd: str | None = AMD_BUILD) -> None:
    files = {
        "lib/CMakeLists.txt": TOP,
        "lib/lib-cu/CMakeLists.txt": CU_BUILD,
        "lib/lib-cu/common.cuh": COMMON,
        "lib/lib-cu/vendor/hipmap.h": HIPMAP,
        "lib/lib-cu/reduce.cu": REDUCE,
        "lib/lib-cu/bare.cu": BARE,
    }
    if amd is not None:
        files["lib/lib-amd/CMakeLists.txt"] = amd
    write_tree(root, files)


def _cmake(root: Path) -> list[tuple[Path, str, bytes]]:
    return [(p, p.relative_to(root).as_posix(), p.read_bytes()) for p in root.rglob("*.txt")]


def _findings(result, name: str) -> tuple[list, list]:
    reported = [d for d in result.diagnostics if Path(d.path).name == name]
    guarded = [d for d in result.guarded if Path(d.path).name == name]
    return reported, guarded


# -- the listing -------------------------------------------------------------------------------
def test_a_hip_target_globbing_another_folder_lists_it(tmp_path: Path) -> None:
    _project(tmp_path)
    (found,) = hip_listings.listings(_cmake(tmp_path))
    cu = (tmp_path / "lib/lib-cu").resolve()
    assert found.folder == cu and found.build_file == "lib/lib-amd/CMakeLists.txt"
    assert found.line == 2 and found.files == {cu / "reduce.cu", cu / "bare.cu"}
    assert hip_listings.compiled([found], (tmp_path / "lib").resolve()) is found
    assert hip_listings.compiled([found], (tmp_path / "lib/lib-amd").resolve()) is None


def test_no_hip_marker_or_a_cuda_branch_lists_nothing(tmp_path: Path) -> None:
    # find_package(hip) links a library and compiles nothing: no HIP target.
    linked = "find_package(hip)\nfile(GLOB S ../lib-cu/*.cu)\nadd_library(x ${S})\n"
    _project(tmp_path, amd=linked)
    assert hip_listings.listings(_cmake(tmp_path)) == []
    # The CUDA branch of a vendor chain whose other branch is the HIP one.
    chain = (
        'if(MYLIB_VENDOR STREQUAL "cuda")\n  file(GLOB S ../lib-cu/*.cu)\n'
        '  add_library(x ${S})\nelseif(MYLIB_VENDOR STREQUAL "hip")\n'
        "  enable_language(HIP)\n  add_library(x k.hip)\nendif()\n"
    )
    _project(tmp_path, amd=chain)
    assert hip_listings.listings(_cmake(tmp_path)) == []


def test_a_quoted_hash_is_no_comment(tmp_path: Path) -> None:
    # `#` inside a quoted argument: stripping it as a comment would unbalance the call.
    amd = 'file(WRITE gen.cpp "#include <x.h>")\n' + AMD_BUILD
    _project(tmp_path, amd=amd)
    (found,) = hip_listings.listings(_cmake(tmp_path))
    assert found.line == 3


# -- signal 1 ----------------------------------------------------------------------------------
def test_an_arch_specific_folder_a_hip_target_compiles_is_no_component(tmp_path: Path) -> None:
    _project(tmp_path)
    result = lint_rules(tmp_path / "lib", *RULES)
    reported, _ = _findings(result, "bare.cu")
    assert [d.rule for d in reported] == ["warp-mask-32bit"]  # reported: ROCm compiles it
    # Only the folder's own build file, NVIDIA-only by its target, is the CUDA half.
    (summary,) = [d for d in result.diagnostics if d.rule == "cuda-only-component"]
    assert summary.severity.value == "info" and "lib-amd/CMakeLists.txt:2" in summary.message
    held = {Path(d.path).name for d in result.guarded if "the CUDA build of" in (d.guarded or "")}
    assert held == {"CMakeLists.txt"}


def test_without_the_hip_target_signal_1_still_guards_it(tmp_path: Path) -> None:
    _project(tmp_path, amd=None)
    result = lint_rules(tmp_path / "lib", *RULES)
    assert [d for d in result.diagnostics if d.rule == "cuda-only-component"]
    _, guarded = _findings(result, "bare.cu")
    assert guarded and "architecture-specific" in guarded[0].guarded


# -- the folder's compat header is the port there ----------------------------------------------
def test_the_targets_definition_selects_the_folders_port(tmp_path: Path) -> None:
    _project(tmp_path)
    root = tmp_path / "lib"
    defined = build_defines.index(_cmake(root))
    assert "MYLIB_ON_HIP" in defined.rocm and "lib-amd" in defined.rocm["MYLIB_ON_HIP"].why
    result = lint_rules(root, *RULES)
    reported, guarded = _findings(result, "reduce.cu")
    # __shfl_xor_sync(0xffffffff, ...) and cudaStream_t go through vendor/hipmap.h on ROCm.
    assert reported == [] and guarded == []
    reported, _ = _findings(result, "common.cuh")
    assert reported == []  # <cuda_runtime.h> sits in the #else ROCm never takes
    reported, _ = _findings(result, "bare.cu")
    assert [d.rule for d in reported] == ["warp-mask-32bit"]  # it does not include the port


def test_a_cuda_spelled_mapping_is_no_port(tmp_path: Path) -> None:
    # A header that maps the builtin in CUDA's own terms keeps CUDA's meaning under hipcc.
    _project(tmp_path)
    cuda_map = "#pragma once\n#define __shfl_xor_sync(m, v, l, w) __shfl_xor_sync(m, v, l, w)\n"
    cuda_map += "#define cudaStream_t CUstream_st*\n"
    write_tree(tmp_path, {"lib/lib-cu/vendor/hipmap.h": cuda_map})
    reported, _ = _findings(lint_rules(tmp_path / "lib", *RULES), "reduce.cu")
    assert "hip-stream" in {d.rule for d in reported}


def test_a_mapping_through_a_name_the_header_mapped_above(tmp_path: Path) -> None:
    # `cublasSetMathMode` -> `CUBLAS_STATUS_SUCCESS`, which the header maps to hipBLAS above.
    _project(tmp_path)
    header = HIPMAP + (
        "#define CUBLAS_STATUS_SUCCESS HIPBLAS_STATUS_SUCCESS\n"
        "#define cublasSetMathMode(handle, mode) CUBLAS_STATUS_SUCCESS\n"
    )
    use = '#include "common.cuh"\nvoid tune(void* h) { cublasSetMathMode(h, 0); }\n'
    write_tree(tmp_path, {"lib/lib-cu/vendor/hipmap.h": header, "lib/lib-cu/tune.cu": use})
    reported, _ = _findings(lint_rules(tmp_path / "lib", *RULES), "tune.cu")
    assert reported == []
    # Without the mapping above it, hipmap.h (a file only ROCm compiles: it includes the HIP
    # runtime and nothing of CUDA's) still defines the call for hipcc, so the call is the
    # project's name; the unmapped cuBLAS status inside the definition is what to change.
    header = HIPMAP + "#define cublasSetMathMode(handle, mode) CUBLAS_STATUS_SUCCESS\n"
    write_tree(tmp_path, {"lib/lib-cu/vendor/hipmap.h": header})
    result = lint_rules(tmp_path / "lib", *RULES)
    assert _findings(result, "tune.cu")[0] == []
    reported, _ = _findings(result, "hipmap.h")
    assert [(d.rule, d.position.line) for d in reported] == [("hip-stream", 6)]
    assert "CUBLAS_STATUS_SUCCESS" in reported[0].message


def test_a_helper_defined_through_names_an_included_header_maps(tmp_path: Path) -> None:
    # common.cuh's helper spells cuBLAS's status, which vendor/hipmap.h (included above,
    # under the HIP target's definition) maps to hipBLAS: hipcc expands it to HIP names.
    _project(tmp_path)
    header = HIPMAP + "#define CUBLAS_STATUS_SUCCESS HIPBLAS_STATUS_SUCCESS\n"
    helper = "#define CUBLAS_TRY(e) do { if ((e) != CUBLAS_STATUS_SUCCESS) return; } while (0)\n"
    use = '#include "common.cuh"\nint status();\nvoid go() { CUBLAS_TRY(status()); }\n'
    files = {"lib/lib-cu/common.cuh": COMMON + helper, "lib/lib-cu/go.cu": use}
    write_tree(tmp_path, {"lib/lib-cu/vendor/hipmap.h": header, **files})
    rules = (*RULES, "vendor-blas-dnn")
    reported, _ = _findings(lint_rules(tmp_path / "lib", *rules), "go.cu")
    assert reported == []
    write_tree(tmp_path, {"lib/lib-cu/vendor/hipmap.h": HIPMAP})  # nothing maps the status
    reported, _ = _findings(lint_rules(tmp_path / "lib", *rules), "go.cu")
    assert [d.rule for d in reported] == ["vendor-blas-dnn"]


def test_an_arch_value_the_port_defines(tmp_path: Path) -> None:
    # The port header gives `__CUDA_ARCH__` a value on ROCm: the comparison is the project's.
    _project(tmp_path)
    use = '#include "common.cuh"\n#if __CUDA_ARCH__ >= 700\nint fast();\n#endif\n'
    write_tree(tmp_path, {"lib/lib-cu/arch.cu": use})
    rules = (*RULES, "cuda-arch-macro")
    reported, _ = _findings(lint_rules(tmp_path / "lib", *rules), "arch.cu")
    assert [d.rule for d in reported] == ["cuda-arch-macro"]
    write_tree(tmp_path, {"lib/lib-cu/vendor/hipmap.h": HIPMAP + "#define __CUDA_ARCH__ 1300\n"})
    reported, _ = _findings(lint_rules(tmp_path / "lib", *rules), "arch.cu")
    assert reported == []


def test_an_overload_named_like_the_builtin_is_no_port(tmp_path: Path) -> None:
    # A function overload adds a signature; the call inside it is the builtin's, mask and all.
    _project(tmp_path)
    wrapper = (
        "__device__ inline double __shfl_xor_sync(unsigned mask, double v, int l) {\n"
        "    return __shfl_xor_sync(mask, v, l, 32);\n}\n"
    )
    write_tree(tmp_path, {"lib/lib-cu/wrap.cuh": wrapper})
    reported, _ = _findings(lint_rules(tmp_path / "lib", *RULES), "wrap.cuh")
    assert [d.position.line for d in reported if d.rule == "warp-mask-32bit"] == [1, 2]
