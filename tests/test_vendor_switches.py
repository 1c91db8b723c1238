"""A project macro is a vendor switch by what its branches hold (context/vendor_switches.py):
an arm that spells CUDA before a sibling arm that spells HIP is CUDA-only, project-wide."""

from pathlib import Path

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.context.vendor_switches import infer
from cuda2rocm.engine import Linter

SWITCH = """\
#pragma once
#if defined(QX_NVGPU)
#include <cuda_runtime.h>
#define qxStream_t cudaStream_t
#elif defined(QX_AMDGPU)
#include <hip/hip_runtime.h>
#define qxStream_t hipStream_t
#endif
"""
USER = """\
#include "qx_gpu.h"
#ifdef QX_NVGPU
static void drain(cudaStream_t s) { cudaStreamSynchronize(s); }
#endif
"""


def _lint(root: Path):
    result = runner.run(Linter(load_catalogue()), [root])
    shown = {(Path(d.path).name, d.position.line, d.rule) for d in result.diagnostics}
    guarded = {(Path(d.path).name, d.position.line, d.rule): d.guarded for d in result.guarded}
    return shown, guarded


def test_the_cuda_arm_before_a_hip_sibling_is_cuda_only_everywhere(tmp_path):
    (tmp_path / "qx_gpu.h").write_text(SWITCH)
    (tmp_path / "drain.cc").write_text(USER)
    shown, guarded = _lint(tmp_path)
    assert not {s for s in shown if s[0] in ("qx_gpu.h", "drain.cc") and s[2] == "hip-stream"}
    assert "sibling branch at" in guarded[("qx_gpu.h", 4, "hip-stream")]
    assert "`QX_NVGPU` guards CUDA code" in guarded[("drain.cc", 3, "hip-stream")]


def test_a_project_define_of_the_macro_keeps_it_unknown(tmp_path):
    """A header that defines the CUDA-side macro itself (a ROCm build that goes through the
    CUDA code) decides, not the chain: the macro may be defined on ROCm."""
    (tmp_path / "qx_gpu.h").write_text(SWITCH)
    (tmp_path / "entry.cuh").write_text('#define QX_NVGPU\n#include "qx_gpu.h"\n')
    (tmp_path / "drain.cc").write_text(USER)
    shown, _ = _lint(tmp_path)
    assert ("drain.cc", 3, "hip-stream") in shown


def test_only_simple_tests_before_the_hip_arm_are_inferred():
    text = """\
#if defined(QX_CPU)
int plain;
#elif QX_NV && QX_FAST
#include <cuda_fp16.h>
#elif defined(QX_AMD)
#include <hip/hip_fp16.h>
#elif defined(QX_LATE)
#include <cuda_bf16.h>
#endif
#ifndef QX_NOT_NV
#include <cuda.h>
#else
#include <hip/hip_runtime.h>
#endif
#if defined(QX_ALONE)
#include <cuda.h>
#endif
"""
    # QX_CPU spells neither vendor; a compound test is not one macro; QX_LATE comes after the
    # HIP arm; `#ifndef` tests absence; QX_ALONE has no HIP sibling.
    assert infer({"a.h": text}) == {}


def test_a_macro_some_chain_puts_on_the_hip_side_is_never_cuda_only():
    first = "#if QX_GPU\n#include <cuda.h>\n#elif QX_HIPGPU\n#include <hip/hip_runtime.h>\n#endif\n"
    other = "#ifdef QX_GPU\n#include <hip/hip_runtime.h>\n#endif\n"
    assert set(infer({"a.h": first})) == {"QX_GPU"}
    assert infer({"a.h": first, "b.h": other}) == {}


def test_nested_chains_are_judged_each_on_their_own():
    text = """\
#ifdef QX_OUTER
#if defined(QX_NV)
#include <cublas_v2.h>
#else
#include <hipblas/hipblas.h>
#endif
#endif
"""
    assert set(infer({"a.h": text})) == {"QX_NV"}


def test_a_build_that_defines_the_macro_for_rocm_wins():
    from cuda2rocm.context.build_defines import BuildDefines
    from cuda2rocm.context.preprocessor import Val

    build = BuildDefines(rocm={"QX_NVGPU": Val(True)}, unknown={"QX_OTHER"})
    merged = build.with_cuda_only({"QX_NVGPU": "inferred", "QX_OTHER": "inferred"})
    assert "QX_NVGPU" in merged.rocm and "QX_NVGPU" not in merged.cuda_only
    assert merged.cuda_only == {"QX_OTHER": "inferred"} and merged.unknown == set()
    assert build.unknown == {"QX_OTHER"}  # the build's own facts are left as they were


# -- arms judged by the project headers they include --------------------------------------------
RADEON = """\
#ifndef ZK_BACKEND_RADEON_HPP
#define ZK_BACKEND_RADEON_HPP
#include "radeon_rt.hpp"
#define zkEvent_t hipEvent_t
#endif
"""
RADEON_RT = "#pragma once\n#include <hip/hip_runtime.h>\n"
GEFORCE = "#pragma once\n#include <cuda_runtime.h>\ntypedef cudaEvent_t zkEvent_t;\n"
PICK_AMD_FIRST = """\
#pragma once
#if defined(ZK_WITH_RADEON)
#include "backend/radeon.hpp"
#elif defined(ZK_WITH_GEFORCE)
#include "backend/geforce.hpp"
#endif
"""
PICK_NV_FIRST = PICK_AMD_FIRST.replace("RADEON", "TMP").replace("GEFORCE", "RADEON")
PICK_NV_FIRST = PICK_NV_FIRST.replace("TMP", "GEFORCE").replace('radeon.hpp"', 'X"')
PICK_NV_FIRST = PICK_NV_FIRST.replace('geforce.hpp"', 'radeon.hpp"').replace('X"', 'geforce.hpp"')
BACKENDS = {
    "include/backend/radeon.hpp": RADEON,
    "include/backend/radeon_rt.hpp": RADEON_RT,
    "include/backend/geforce.hpp": GEFORCE,
}


def _finder(texts):
    """Beside the includer, else the one path ending with the include (as ProjectMacros)."""
    import os

    def find(include, includer):
        beside = os.path.normpath(os.path.join(os.path.dirname(includer), include))
        if beside in texts:
            return beside
        hits = [p for p in texts if ("/" + p).endswith("/" + include)]
        return hits[0] if len(hits) == 1 else None

    return find


def _judge(texts, hipified=None):
    from cuda2rocm.context.vendor_switches import judge

    return judge(texts, _finder(texts), hipified)


def test_an_arm_is_hip_or_cuda_by_the_project_headers_it_includes():
    assert PICK_NV_FIRST.index("GEFORCE") < PICK_NV_FIRST.index("RADEON")
    texts = {**BACKENDS, "src/pick.hpp": PICK_NV_FIRST}
    found = _judge(texts)
    assert set(found.cuda_only) == {"ZK_WITH_GEFORCE"}
    assert "src/pick.hpp:4" in found.cuda_only["ZK_WITH_GEFORCE"]
    assert set(found.rocm) == {"ZK_WITH_RADEON"}  # through radeon.hpp -> radeon_rt.hpp
    assert infer(texts) == {}  # without resolving includes no arm is HIP


def test_the_hip_runtime_arm_of_a_runtime_selection_is_the_rocm_switch():
    found = _judge({**BACKENDS, "src/pick.hpp": PICK_AMD_FIRST})
    assert found.cuda_only == {}  # the CUDA arm comes after the HIP one
    assert "selects the HIP runtime (src/pick.hpp:2)" in found.rocm["ZK_WITH_RADEON"]
    assert found.valued == set()
    valued = PICK_AMD_FIRST.replace("#if defined(ZK_WITH_RADEON)", "#if ZK_WITH_RADEON")
    assert _judge({**BACKENDS, "src/pick.hpp": valued}).valued == {"ZK_WITH_RADEON"}


def test_a_header_reaching_no_hip_header_leaves_the_arm_other():
    texts = {
        "scalar.hpp": '#pragma once\n#include <cmath>\n#include "util.hpp"\n',
        "util.hpp": "#pragma once\nint zk_util();\n",
        # both vendors, each only under a condition: no arm that includes it is either
        "portable.hpp": (
            "#pragma once\n#ifdef __HIP_PLATFORM_AMD__\n#include <hip/hip_runtime.h>\n"
            "#else\n#include <cuda_runtime.h>\n#endif\n"
        ),
        "pick.hpp": (
            '#if defined(ZK_SCALAR)\n#include "scalar.hpp"\n'
            '#elif defined(ZK_PORTABLE)\n#include "portable.hpp"\n'
            "#elif defined(ZK_AMD)\n#include <hip/hip_runtime.h>\n#endif\n"
            '#ifdef ZK_MAYBE\n#include "portable.hpp"\n#else\n#include <cuda_runtime.h>\n#endif\n'
        ),
        "nv.hpp": (
            "#if defined(ZK_MAYBE)\n#include <cuda.h>\n"
            "#elif ZK_AMD\n#include <hipblas/hipblas.h>\n#endif\n"
        ),
    }
    found = _judge(texts)
    assert found.cuda_only == {"ZK_MAYBE": found.cuda_only["ZK_MAYBE"]}  # only nv.hpp says it
    assert found.rocm == {}  # ZK_AMD's arm has no CUDA-runtime sibling; ZK_MAYBE's is no HIP


def test_include_cycles_end():
    texts = {
        "a.hpp": '#pragma once\n#include "b.hpp"\n#include "a.hpp"\n',
        "b.hpp": '#pragma once\n#include "a.hpp"\n#include "rt.hpp"\n',
        "rt.hpp": "#pragma once\n#include <hip/hip_runtime.h>\n",
        "c.hpp": '#pragma once\n#include "d.hpp"\n',
        "d.hpp": '#pragma once\n#include "c.hpp"\n',
        "pick.hpp": (
            '#if ZK_NV\n#include <cuda_runtime.h>\n#elif ZK_LOOP\n#include "c.hpp"\n'
            '#elif ZK_CYCLE\n#include "a.hpp"\n#endif\n'
        ),
    }
    found = _judge(texts)
    assert set(found.cuda_only) == {"ZK_NV"}
    assert set(found.rocm) == {
        "ZK_CYCLE"
    }  # a.hpp -> b.hpp -> rt.hpp; c.hpp <-> d.hpp reach nothing


def test_a_macro_some_chain_puts_on_the_hip_side_through_a_header_is_never_cuda_only():
    first = (
        "#if ZK_DEV\n#include <cuda_runtime.h>\n"
        "#elif ZK_ALT\n#include <hip/hip_runtime.h>\n#endif\n"
    )
    other = '#ifdef ZK_DEV\n#include "backend/radeon.hpp"\n#endif\n'
    assert set(_judge({**BACKENDS, "a.hpp": first}).cuda_only) == {"ZK_DEV"}
    found = _judge({**BACKENDS, "a.hpp": first, "b.hpp": other})
    assert found.cuda_only == {}
    assert set(found.rocm) == {"ZK_ALT"}


def test_what_a_rocm_switch_is_not():
    library = (  # an option choosing a library, not the runtime
        "#ifdef ZK_TRACE_AMD\n#include <roctracer/roctx.h>\n#else\n#include <nvtx3/nvToolsExt.h>\n"
        "#endif\n"
    )
    assert _judge({"t.hpp": library}).rocm == {}
    pick = {**BACKENDS, "src/pick.hpp": PICK_AMD_FIRST}
    on_cuda_side = "#ifdef ZK_WITH_RADEON\ncudaEvent_t e;\n#else\nhipEvent_t e;\n#endif\n"
    mapped = "#ifdef ZK_WITH_RADEON\ncudaEvent_t e;\n#endif\n"  # names radeon.hpp maps
    assert set(_judge({**pick, "m.cc": mapped}).rocm) == {"ZK_WITH_RADEON"}
    assert _judge({**pick, "u.cc": on_cuda_side}).rocm == {}
    defined_here = "#pragma once\n#define ZK_WITH_RADEON 1\n"
    assert _judge({**pick, "cfg.hpp": defined_here}).rocm == {}
    assert _judge(pick, hipified=lambda path: path == "src/pick.hpp").rocm == {}


def test_a_build_that_passes_the_switch_only_to_cuda_keeps_its_word():
    from cuda2rocm.context.build_defines import BuildDefines
    from cuda2rocm.context.preprocessor import Val

    build = BuildDefines(cuda_only={"ZK_A": "cmake"}, unknown={"ZK_B"})
    merged = build.with_cuda_only({}, {"ZK_A": "chain", "ZK_B": "chain", "ZK_C": "chain"}, {"ZK_C"})
    assert "ZK_A" not in merged.rocm and merged.cuda_only == {"ZK_A": "cmake"}
    assert merged.rocm["ZK_B"] == Val(True, why="chain") and merged.unknown == set()
    assert (merged.rocm["ZK_C"].lo, merged.rocm["ZK_C"].defined) == (1, True)


ROCM_USER = """\
#include "pick.hpp"
#ifndef ZK_WITH_RADEON
static void drain(cudaStream_t s) { cudaStreamSynchronize(s); }
#else
static void drain(hipStream_t s) { hipStreamSynchronize(s); }
#endif
"""


def _tree(root: Path, files):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_the_cuda_side_of_the_rocm_switch_is_guarded_end_to_end(tmp_path):
    _tree(tmp_path, {**BACKENDS, "src/pick.hpp": PICK_AMD_FIRST, "src/use.cc": ROCM_USER})
    shown, guarded = _lint(tmp_path)
    assert ("use.cc", 3, "hip-stream") not in shown
    assert "selects the HIP runtime" in guarded[("use.cc", 3, "hip-stream")]


def test_without_the_runtime_sibling_the_cuda_side_stays_reported(tmp_path):
    alone = PICK_AMD_FIRST.replace('#include "backend/geforce.hpp"\n', "int zk_cpu;\n")
    _tree(tmp_path, {**BACKENDS, "src/pick.hpp": alone, "src/use.cc": ROCM_USER})
    shown, _ = _lint(tmp_path)
    assert ("use.cc", 3, "hip-stream") in shown


# -- project macros #defined in vendor-selected arms (project_macros follows the switch) ----------
LANES = """\
#pragma once
#if defined(ZK_WITH_GEFORCE)
#include "backend/geforce.hpp"
#define ZK_TENSOR_PATH 1
#define ZK_LANES 32
#elif defined(ZK_WITH_RADEON)
#include "backend/radeon.hpp"
#define ZK_LANES 64
#endif
"""
LANE_USER = """\
#include "lanes.hpp"
#if ZK_LANES == 32
static void drain32(cudaStream_t s) { cudaStreamSynchronize(s); }
#endif
#ifdef ZK_TENSOR_PATH
__device__ int bump(int v) { asm volatile("add.s32 %0, %0, 1;" : "+r"(v)); return v; }
#endif
"""


def test_macros_defined_in_the_hip_arm_hold_on_rocm_and_the_cuda_arms_do_not(tmp_path):
    _tree(tmp_path, {**BACKENDS, "src/lanes.hpp": LANES, "src/lane_use.cc": LANE_USER})
    shown, guarded = _lint(tmp_path)
    assert not {s for s in shown if s[0] == "lane_use.cc"}
    assert "`#if ZK_LANES == 32`" in guarded[("lane_use.cc", 3, "hip-stream")]
    assert "`#ifdef ZK_TENSOR_PATH`" in guarded[("lane_use.cc", 6, "inline-ptx")]


def test_a_compilation_database_leaves_no_switch_to_infer():
    from cuda2rocm.context.build_defines import BuildDefines

    complete = BuildDefines(complete=True).with_cuda_only({}, {"ZK_A": "chain"})
    assert complete.rocm == {} and complete.complete
