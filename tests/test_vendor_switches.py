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
