"""A fixed project builds with both compilers: each cause of a broken build after `fix` (first
seen on real projects, issue 15), on a fixture project of ours.

tests/fixtures/cuda_project/ has headers in two folders, a bf16 include under `#ifdef`, CUB,
cuBLASLt, a header relying on nvcc's implicit runtime include, a kernel passed to
cudaFuncSetAttribute through a pointer, helpers behind the runtime's include guard and
`cg::reduce`. Compiles skip when the compiler is missing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

from cuda2rocm import compat_header, names

PROJECT = ROOT / "tests" / "fixtures" / "cuda_project"
HEADER = "cuda2rocm_compat.h"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
needs_hipcc = pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")


def nvcc(path: Path, *flags: str) -> subprocess.CompletedProcess:
    cmd = ["nvcc", "-arch=sm_80", *flags, "-c", str(path), "-o", f"{path}.nv.o"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def hipcc(path: Path, *flags: str) -> subprocess.CompletedProcess:
    cmd = ["hipcc", "--offload-arch=gfx90a", "--offload-arch=gfx1030", *flags, "-x", "hip"]
    cmd += ["-c", str(path), "-o", f"{path}.amd.o"]
    env = dict(os.environ, HIP_PLATFORM="amd")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


@pytest.fixture(autouse=True)
def hip_5_2_port(tmp_path):
    """These causes were reproduced with hipcc 5.2.3: every tree here is a port whose oldest
    ROCm release is 5.2 (the configuration above it says so), so the findings and fixes are
    those of HIP 5.2."""
    (tmp_path / "cuda2rocm.toml").write_text('rocm-version = "5.2"\n')


@pytest.fixture
def fixed(tmp_path, cli):
    """fixed(target) -> the project's src folder after `fix --unsafe --target target`."""

    def _fixed(target: str = "portable") -> Path:
        tree = tmp_path / target
        shutil.copytree(PROJECT, tree)
        result = cli("fix", "--unsafe", "--exit-zero", "--target", target, str(tree / "src"))
        assert result.returncode == 0, result.stdout + result.stderr
        return tree / "src"

    return _fixed


# -- 1. one header per project, macro guard ----------------------------------------------------
def test_one_header_for_the_whole_project_with_a_macro_guard(fixed):
    src = fixed("portable")
    headers = sorted(p.relative_to(src).as_posix() for p in src.rglob(HEADER))
    assert headers == [HEADER]
    text = (src / HEADER).read_text()
    assert "#ifndef CUDA2ROCM_COMPAT_H\n#define CUDA2ROCM_COMPAT_H" in text
    assert text.rstrip().endswith("#endif  // CUDA2ROCM_COMPAT_H")
    assert f'#include "../{HEADER}"' in (src / "util" / "stream.cuh").read_text()
    assert f'#include "../{HEADER}"' in (src / "layers" / "scale.cuh").read_text()
    assert f'#include "{HEADER}"' in (src / "main.cu").read_text()


def test_a_second_run_on_a_subfolder_reuses_the_projects_header(fixed, cli):
    src = fixed("portable")
    (src / "extra").mkdir()
    (src / "extra" / "more.cu").write_text(
        "#include <cuda_runtime.h>\nvoid wait_all() { cudaDeviceSynchronize(); }\n"
    )
    assert cli("fix", "--unsafe", "--exit-zero", str(src / "extra")).returncode == 0
    assert [p.parent.name for p in src.rglob(HEADER)] == [src.name]
    assert f'#include "../{HEADER}"' in (src / "extra" / "more.cu").read_text()
    assert "cudaDeviceSynchronize" in (src / HEADER).read_text()


@needs_nvcc
def test_nvcc_builds_the_fixed_project(fixed):
    result = nvcc(fixed("portable") / "main.cu")
    assert result.returncode == 0, result.stderr


@needs_hipcc
def test_hipcc_builds_the_fixed_project_for_wave64_and_wave32(fixed):
    result = hipcc(fixed("portable") / "main.cu")
    assert result.returncode == 0, result.stderr


# -- 2. includes stay under their conditions; the header maps only the runtime -----------------
def test_conditional_include_stays_under_its_condition(fixed):
    src = fixed("portable")
    scale = (src / "layers" / "scale.cuh").read_text()
    guarded = scale.split("#ifdef SCALE_BF16", 1)[1].split("\n#endif\n", 1)[0]
    assert "#include <hip/hip_bf16.h>" in guarded and "#include <cuda_bf16.h>" in guarded
    header = (src / HEADER).read_text()
    # The header includes neither (its comments may name the types its shuffles move).
    assert not re.search(r"#\s*include\s*[<\"][^>\"]*(bf16|fp16)", header)
    assert "#include <hip/hip_runtime.h>" in header


# -- 3. CUB -> hipCUB ---------------------------------------------------------------------------
def test_cub_maps_to_hipcub_in_place_for_portable(fixed):
    reduce = (fixed("portable") / "reduce.cu").read_text()
    hip_branch = reduce.split("#include <hipcub/hipcub.hpp>", 1)[1].split("#else", 1)[0]
    assert "namespace cub = hipcub;" in hip_branch
    assert "#include <cub/block/block_reduce.cuh>" in reduce  # nvcc's branch


def test_cub_is_renamed_for_the_hip_target(fixed):
    reduce = (fixed("hip") / "reduce.cu").read_text()
    assert "#include <hipcub/hipcub.hpp>" in reduce
    assert "hipcub::BlockReduce<float, 128>" in reduce and "cub::BlockReduce" not in reduce.replace(
        "hipcub::", ""
    )


@needs_nvcc
def test_nvcc_builds_the_portable_cub_and_bf16_file(fixed):
    result = nvcc(fixed("portable") / "reduce.cu")
    assert result.returncode == 0, result.stderr


# -- 4. bf16 types --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cuda", "hip"),
    [
        ("__nv_bfloat16", "__hip_bfloat16"),
        ("__nv_bfloat162", "__hip_bfloat162"),
        ("nv_bfloat16", "__hip_bfloat16"),
        ("nv_bfloat162", "__hip_bfloat162"),
    ],
)
def test_bf16_types_map_to_hip_bf16_types(cuda, hip):
    row = names.api_name(cuda)
    assert row is not None and row.hip == hip and row.supported


def test_bf16_intrinsics_keep_their_names():
    # HIP's hip_bf16.h declares them with CUDA's names: nothing to rename.
    assert names.api_name("__float2bfloat16") is None
    assert names.api_name("__bfloat162float") is None


def test_bf16_types_renamed_for_hip_and_mapped_for_portable(fixed):
    hip = (fixed("hip") / "reduce.cu").read_text()
    assert "const __hip_bfloat16* in" in hip and "__hip_bfloat162* out" in hip
    assert "__bfloat162float(" in hip
    header = (fixed("portable") / HEADER).read_text()
    assert "#define __nv_bfloat16 __hip_bfloat16" in header
    assert "#define nv_bfloat162 __hip_bfloat162" in header


# -- 5. library headers as installed ---------------------------------------------------------
def test_cublaslt_header_is_where_hipblaslt_installs_it(fixed):
    assert "#include <hipblaslt/hipblaslt.h>" in (fixed("hip") / "gemm.cpp").read_text()
    portable = (fixed("portable") / "gemm.cpp").read_text()
    assert "#include <hipblaslt/hipblaslt.h>\n#else\n#include <cublasLt.h>" in portable


@pytest.mark.parametrize(
    ("cuda", "hip"),
    [
        ("cublas_v2.h", "hipblas/hipblas.h"),
        ("cusparse.h", "hipsparse/hipsparse.h"),
        ("cusolverDn.h", "hipsolver/hipsolver.h"),
        ("curand_kernel.h", "hiprand/hiprand_kernel.h"),
    ],
)
def test_library_headers_follow_the_install_layout(cuda, hip):
    assert names.header(cuda).hip == hip


def test_installed_library_headers_exist_when_the_library_is_installed():
    """Every mapped header of a library present here exists at the mapped path."""
    checked = 0
    for row in names.table().values():
        if row.kind != "header" or not row.supported or "/" not in row.hip:
            continue
        folder = Path("/usr/include") / row.hip.split("/", 1)[0]
        if row.hip.startswith("hip/") or not folder.is_dir():
            continue
        assert (Path("/usr/include") / row.hip).is_file(), (row.cuda, row.hip)
        checked += 1
    if not checked:
        pytest.skip("no ROCm library installed under /usr/include")


# -- 6. nvcc's implicit runtime include ------------------------------------------------------
def test_hip_target_includes_the_runtime_where_nvcc_did_implicitly(fixed):
    math = (fixed("hip") / "layers" / "math.cuh").read_text()
    assert "#include <hip/hip_runtime.h>" in math


@needs_hipcc
def test_hipcc_builds_the_header_alone_after_the_hip_fix(fixed):
    header = fixed("hip") / "layers" / "math.cuh"
    result = hipcc(header)
    assert result.returncode == 0, result.stderr


# -- 7. kernels through a pointer ---------------------------------------------------------------
def test_kernel_pointer_variable_is_cast(fixed):
    main = (fixed("portable") / "main.cu").read_text()
    assert "cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel)," in main


# -- placement policy (shared with the generated-file / SYCL work) ----------------------------
def test_generated_and_sycl_files_never_get_the_header():
    assert compat_header.may_include("a.cu", "// @generated by tool\n#include <cuda.h>\n") is False
    assert compat_header.may_include("a.cpp", "#include <sycl/sycl.hpp>\n") is False
    assert compat_header.may_include("a.cu", "#include <cuda_runtime.h>\n") is True


# -- headers the runtime does not include stay -------------------------------------------------
def test_driver_and_profiler_headers_are_mapped_in_place_not_replaced(tmp_path, cli):
    """cuda.h defines CUDA_VERSION and cuda_profiler_api.h cudaProfilerStart; cuda_runtime.h
    (all the compatibility header includes for nvcc) has neither."""
    src = tmp_path / "k.cu"
    src.write_text(
        "#include <cuda.h>\n#include <cuda_profiler_api.h>\n#if CUDA_VERSION < 8000\n"
        '#error "old CUDA"\n#endif\nvoid go() { cudaProfilerStart(); }\n'
    )
    assert cli("fix", "--unsafe", "--exit-zero", str(tmp_path)).returncode == 0
    text = src.read_text()
    assert "#else\n#include <cuda.h>\n#endif" in text
    assert "#else\n#include <cuda_profiler_api.h>\n#endif" in text
    if shutil.which("nvcc"):
        result = nvcc(src)
        assert result.returncode == 0, result.stderr


# -- helpers guarded by the runtime's include guard ----------------------------------------------
def test_runtime_include_guards_are_defined_for_hip(fixed):
    header = (fixed("portable") / HEADER).read_text()
    hip_branch = header.split("#if CUDA2ROCM_HIP", 1)[1].split("#else", 1)[0]
    assert "#  define __CUDA_RUNTIME_H__" in hip_branch


@needs_hipcc
def test_hipcc_sees_helpers_guarded_by_the_runtime_include_guard(fixed):
    result = hipcc(fixed("portable") / "count.cu")
    assert result.returncode == 0, result.stderr


@needs_hipcc
def test_hip_target_tests_the_hip_headers_include_guard(fixed):
    src = fixed("hip")
    assert "#ifdef HIP_INCLUDE_HIP_HIP_RUNTIME_H" in (src / "util" / "checks.h").read_text()
    result = hipcc(src / "count.cu")
    assert result.returncode == 0, result.stderr


# -- cooperative_groups::reduce (no HIP counterpart before ROCm 7.13) ------------------------
def test_cg_reduce_header_stays_for_nvcc_and_the_compat_header_covers_hip(fixed, cli):
    src = fixed("portable")
    text = (src / "warp_sum.cu").read_text()
    nvcc_only = "#if !(defined(__HIP__) || defined(__HIP_PLATFORM_AMD__))\n"
    assert nvcc_only + "#include <cooperative_groups/reduce.h>\n#endif" in text
    header = (src / HEADER).read_text()
    assert "cooperative_groups/reduce.h" in header.split("\n", 3)[2]  # the names line
    assert "reduce(const thread_block_tile<Size, Parent>&" in header
    found = cli("lint", "--no-cache", "--select", "cooperative-groups", str(src / "warp_sum.cu"))
    assert "does not exist in HIP 5.2" not in found.stdout  # fixed: not reported again


def test_cg_reduce_polyfill_is_not_in_headers_of_projects_without_it(tmp_path, cli):
    (tmp_path / "k.cu").write_text("#include <cuda_runtime.h>\nvoid f() { cudaFree(0); }\n")
    assert cli("fix", "--unsafe", "--exit-zero", str(tmp_path)).returncode == 0
    assert "CUDA2ROCM_CG_REDUCE" not in (tmp_path / HEADER).read_text()


def test_meta_group_rank_of_a_block_tile_is_computed_from_the_block(fixed):
    text = (fixed("portable") / "warp_sum.cu").read_text()
    assert "(block.thread_rank() / tile.size())" in text and "meta_group_rank" not in text


@needs_hipcc
@pytest.mark.parametrize("target", ["portable", "hip"])
def test_hipcc_builds_cg_reduce_after_the_fix(fixed, target):
    result = hipcc(fixed(target) / "warp_sum.cu")
    assert result.returncode == 0, result.stderr


@needs_nvcc
def test_nvcc_builds_cg_reduce_after_the_portable_fix(fixed):
    result = nvcc(fixed("portable") / "warp_sum.cu")
    assert result.returncode == 0, result.stderr


# -- HIP 5.2's cooperative-groups header needs the runtime first ------------------------------
TILE_SYNC = """#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void step(float* x) {
  cg::thread_block block = cg::this_thread_block();
  x[block.thread_rank()] *= 2.0f;
  block.sync();
}
"""


def test_cooperative_groups_alone_gets_the_runtime_for_hip(tmp_path, cli):
    (tmp_path / "hip").mkdir()
    (tmp_path / "hip" / "step.cu").write_text(TILE_SYNC)
    assert (
        cli("fix", "--unsafe", "--exit-zero", "--target", "hip", str(tmp_path / "hip")).returncode
        == 0
    )
    assert (tmp_path / "hip" / "step.cu").read_text().startswith("#include <hip/hip_runtime.h>\n")


@needs_hipcc
def test_hipcc_builds_cooperative_groups_alone_after_the_portable_fix(tmp_path, cli):
    (tmp_path / "step.cu").write_text(TILE_SYNC)
    assert cli("fix", "--unsafe", "--exit-zero", str(tmp_path)).returncode == 0
    result = hipcc(tmp_path / "step.cu")
    assert result.returncode == 0, result.stderr


# -- tile shuffles of non-arithmetic values (every HIP rejects them: static_assert) -------------
TILE_SHUFFLE = """#include <cooperative_groups.h>
namespace cg = cooperative_groups;

struct pair4 {
  uint4 lo, hi;
};

__global__ void swap_lanes(uint4* data, float* sums) {
  cg::thread_block block = cg::this_thread_block();
  auto tile = cg::tiled_partition<16>(block);
  uint4 v = data[block.thread_rank()];
  pair4 both = {v, v};
  v = tile.shfl_xor(v, 1);
  both.hi = tile.shfl_down(both.hi, 2);
  float s = sums[block.thread_rank()];
  s += tile.shfl_xor(s, 1);
  data[block.thread_rank()] = v;
  data[block.thread_rank() + 1] = both.hi;
  sums[block.thread_rank()] = s;
}
"""


@pytest.fixture
def tile_shuffle(tmp_path, cli):
    def _fixed(target: str) -> Path:
        (tmp_path / target).mkdir()
        path = tmp_path / target / "swap.cu"
        path.write_text(TILE_SHUFFLE)
        done = cli("fix", "--unsafe", "--exit-zero", "--target", target, str(path.parent))
        assert done.returncode == 0, done.stdout + done.stderr
        return path

    return _fixed


@pytest.mark.parametrize("target", ["portable", "hip"])
def test_tile_shuffles_of_other_types_go_through_the_compat_header(tile_shuffle, target):
    path = tile_shuffle(target)
    text = path.read_text()
    assert "v = cuda2rocm_tile_shfl_xor(tile, v, 1);" in text
    assert "both.hi = cuda2rocm_tile_shfl_down(tile, both.hi, 2);" in text
    assert "s += tile.shfl_xor(s, 1);" in text  # a float: HIP's member takes it
    header = (path.parent / HEADER).read_text()
    assert "cuda2rocm_tile_shfl" in header.split("\n", 3)[2]  # recorded on the names line
    assert "cuda2rocm_tile_##NAME" in header


def test_the_tile_shuffle_helper_is_only_in_headers_that_need_it(tmp_path, cli):
    (tmp_path / "k.cu").write_text("#include <cuda_runtime.h>\nvoid f() { cudaFree(0); }\n")
    assert cli("fix", "--unsafe", "--exit-zero", str(tmp_path)).returncode == 0
    assert "cuda2rocm_tile_" not in (tmp_path / HEADER).read_text()


@pytest.mark.parametrize(
    ("value", "before", "kind"),
    [
        ("v", "uint4 v = data[0];", "other"),
        ("both.hi", "pair4 both = {v, v};", "other"),
        ("s", "const float s = 1;", "arithmetic"),
        ("n", "void f(unsigned long long n) {", "arithmetic"),
        ("3", "", "arithmetic"),
        ("x", "auto x = d[0];", "unknown"),
        ("x", "template <class T> __device__ T f(T x) {", "unknown"),
        ("h", "__half h = a;", "other"),  # a class in HIP: its tile members reject it
        ("y", "int x = 0;", "unknown"),
        ("r", "return r;", "unknown"),
    ],
)
def test_declared_type_of_a_shuffled_value(value, before, kind):
    from cuda2rocm.checks.cooperative_groups import _declared_type

    assert _declared_type(value, before) == kind


@needs_hipcc
@pytest.mark.parametrize("target", ["portable", "hip"])
def test_hipcc_builds_tile_shuffles_of_vectors_after_the_fix(tile_shuffle, target):
    result = hipcc(tile_shuffle(target))
    assert result.returncode == 0, result.stderr


@needs_nvcc
def test_nvcc_builds_tile_shuffles_after_the_portable_fix(tile_shuffle):
    result = nvcc(tile_shuffle("portable"))
    assert result.returncode == 0, result.stderr


def test_a_comment_naming_the_block_does_not_hide_the_meta_group_fix(tmp_path, cli):
    # "warps in a block, and" in a comment once read as a declaration of `block` ("a", then
    # the word): the tile's parent looked like something other than the thread block.
    (tmp_path / "k.cu").write_text(
        "#include <cooperative_groups.h>\n"
        "namespace cg = cooperative_groups;\n"
        "__global__ void k(float* out) {\n"
        "    cg::thread_block block = cg::this_thread_block();\n"
        "    // one row per warp: there are several warps in a block, and\n"
        "    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n"
        "    out[warp.meta_group_rank()] = warp.meta_group_size();\n"
        "}\n"
    )
    assert cli("fix", "--unsafe", "--exit-zero", str(tmp_path)).returncode == 0
    text = (tmp_path / "k.cu").read_text()
    assert "meta_group" not in text.split("\n", 6)[6], text
