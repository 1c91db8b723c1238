"""The project's own HIP shim (context/hip_only.py, project_port): a header only ROCm compiles
(the HIP arm of the project's runtime switch, or HIP by what it holds) defines CUDA names in
HIP terms. Its definitions are the port, never a use; in a HIP-only file any definition the
project writes is its own name, whatever it spells; a stub header only a no-GPU build selects
is never compiled by ROCm. CUDA names nothing in the project defines stay reported, in HIP-only
files and in shared ones."""

from pathlib import Path

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.context import hip_only, project_port
from cuda2rocm.engine import Linter

SETUP = """\
import os
from setuptools import setup, Extension

amd = os.environ.get("ROCM_HOME") is not None
try:
    import torch
    amd = amd or torch.version.hip is not None
except ImportError:
    pass

flags = [("TINYGPU_ON_HIP", "1")] if amd else []
setup(
    name="tinygpu",
    ext_modules=[
        Extension(
            "tinygpu._core",
            ["src/transfer.cpp", "src/core.pyx"],
            include_dirs=["tinygpu_backends"],
            define_macros=flags,
        )
    ],
)
"""
#: The runtime switch: the HIP shim and its helpers, a no-GPU stub, or CUDA itself.
DISPATCH = """\
#pragma once
#if TINYGPU_ON_HIP
#include "hip/tinygpu_hip_runtime.h"
#include "hip/tinygpu_hip_helpers.h"
#elif TINYGPU_CPU_ONLY
#include "stub/tinygpu_stub_runtime.h"
#else
#include "cuda/tinygpu_cuda_runtime.h"
#endif
"""
#: The shim: CUDA names in HIP terms, some spelled in CUDA's own terms (a declaration, an
#: opaque type) because only hipcc ever reads this file.
SHIM = """\
#pragma once
#include <hip/hip_runtime.h>

typedef hipError_t cudaError_t;
typedef hipStream_t cudaStream_t;
typedef hipExtent cudaExtent;
using cudaEvent_t = hipEvent_t;
#define cudaSuccess hipSuccess
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost

struct CUmod_st;
typedef CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;

enum tinygpu_copy_kind { cudaMemcpyHostToDevice = hipMemcpyHostToDevice };

inline cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, int how,
                                   cudaStream_t lane) {
  return hipMemcpyAsync(to, from, bytes, static_cast<hipMemcpyKind>(how), lane);
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t lane) {
  return hipStreamSynchronize(lane);
}
cudaError_t cudaGetLastError();
cudaError_t cuModuleUnload(CUmodule mod);
struct cudaPointerAttributes {
  hipMemoryType type;
  int device;
};
"""
#: A helper of the shim folder: uses what the shim defines (included first by every
#: includer), and two CUDA names nothing in the project defines (lines 9, 10).
HELPERS = """\
#pragma once
inline cudaError_t tinygpu_drain(cudaStream_t lane) {
  cudaError_t e = cudaStreamSynchronize(lane);
  if (e != cudaSuccess) return e;
  return cudaGetLastError();
}
inline int tinygpu_drop(CUmodule mod) { return cuModuleUnload(mod) == cudaSuccess; }
inline int tinygpu_capture(cudaStream_t lane) {
  cudaGraph_t graph;
  return cudaStreamBeginCapture(lane, cudaStreamCaptureModeGlobal) == cudaSuccess;
}
inline int tinygpu_where(const cudaPointerAttributes& at) { return at.device; }
"""
CUDA_SIDE = """\
#pragma once
#include <cuda_runtime.h>
"""
#: Placeholders for a build with no GPU, and one CUDA call it does not define (line 6).
STUB = """\
#pragma once
typedef int cudaError_t;
typedef void* cudaStream_t;
#define cudaSuccess 0
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return 1; }
inline void tinygpu_reset() { cudaDeviceReset(); }
"""
#: A source built for every vendor: the shim's names, and `cudaMalloc` (line 6) it lacks.
SHARED = """\
#include "backend_runtime.h"

int pull(void* host, const void* dev, size_t bytes, cudaStream_t lane) {
  cudaError_t e = cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, lane);
  void* scratch = nullptr;
  cudaMalloc(&scratch, bytes);
  e = cudaStreamSynchronize(lane);
  return e == cudaSuccess ? 0 : 1;
}
"""
CYTHON = """\
cdef extern from "backend_runtime.h":
    ctypedef int cudaError_t
    ctypedef void* cudaStream_t
    cudaError_t cudaStreamSynchronize(cudaStream_t lane) nogil

def drain():
    return cudaStreamSynchronize(NULL)
"""


def _project(root: Path, **changes: str | None) -> None:
    files = {
        "setup.py": SETUP,
        "tinygpu_backends/backend_runtime.h": DISPATCH,
        "tinygpu_backends/hip/tinygpu_hip_runtime.h": SHIM,
        "tinygpu_backends/hip/tinygpu_hip_helpers.h": HELPERS,
        "tinygpu_backends/cuda/tinygpu_cuda_runtime.h": CUDA_SIDE,
        "tinygpu_backends/stub/tinygpu_stub_runtime.h": STUB,
        "src/transfer.cpp": SHARED,
        "src/core.pyx": CYTHON,
    }
    files.update(changes)
    for name, text in files.items():
        if text is None:
            continue
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _findings(root: Path, guarded: bool = False) -> dict[str, list[int]]:
    """Lines of hip-stream findings per file (reported, or with `guarded` the guarded ones)."""
    specs = [r for r in load_catalogue() if r.id == "hip-stream"]
    result = runner.run(Linter(specs), [root])
    out: dict[str, list[int]] = {}
    for d in result.guarded if guarded else result.diagnostics:
        if d.rule == "hip-stream" and bool(d.guarded) == guarded:
            where = Path(d.path).resolve().relative_to(root.resolve()).as_posix()
            out.setdefault(where, []).append(d.position.line)
    return out


SHIM_PATH = "tinygpu_backends/hip/tinygpu_hip_runtime.h"
HELPERS_PATH = "tinygpu_backends/hip/tinygpu_hip_helpers.h"


def test_the_shims_definitions_are_no_findings(tmp_path):
    _project(tmp_path)
    assert SHIM_PATH not in _findings(tmp_path)


def test_a_hip_only_helper_uses_the_shims_names_and_keeps_undefined_ones(tmp_path):
    _project(tmp_path)
    # cudaGetLastError / cuModuleUnload are declared in CUDA's terms, but only hipcc reads the
    # shim; cudaGraph_t and cudaStreamBeginCapture are defined nowhere in the project.
    assert _findings(tmp_path).get(HELPERS_PATH) == [9, 10]


def test_a_shared_source_keeps_the_cuda_call_the_shim_lacks(tmp_path):
    _project(tmp_path)
    assert _findings(tmp_path).get("src/transfer.cpp") == [6]


def test_the_stub_a_no_gpu_build_selects_is_guarded(tmp_path):
    _project(tmp_path)
    assert "tinygpu_backends/stub/tinygpu_stub_runtime.h" not in _findings(tmp_path)
    assert _findings(tmp_path, guarded=True).get("tinygpu_backends/stub/tinygpu_stub_runtime.h")


def test_the_switch_is_read_from_the_chain_when_the_build_does_not_say(tmp_path):
    _project(tmp_path, **{"setup.py": None})
    found = _findings(tmp_path)
    assert SHIM_PATH not in found
    assert found.get(HELPERS_PATH) == [9, 10]
    assert found.get("src/transfer.cpp") == [6]
    assert "tinygpu_backends/stub/tinygpu_stub_runtime.h" not in found


def test_a_helper_included_outside_the_switch_is_shared_code(tmp_path):
    # A source includes the helper directly: the helper is compiled without the shim before
    # it there, so its uses are CUDA uses again.
    probe = '#include "../tinygpu_backends/hip/tinygpu_hip_helpers.h"\n'
    _project(tmp_path, **{"src/probe.cpp": probe})
    assert _findings(tmp_path).get(HELPERS_PATH) == [2, 3, 4, 5, 7, 8, 9, 10, 12]


def test_a_cuda_spelled_declaration_in_a_shared_header_ports_nothing(tmp_path):
    # No vendor switch: the declaration keeps CUDA's meaning under hipcc, so a use is a port.
    _project(
        tmp_path,
        **{
            "src/decl.h": "#pragma once\nstruct CUctx_st;\nint cudaGetLastError();\n",
            "src/use.cpp": '#include "decl.h"\nint f(CUctx_st* c) { return cudaGetLastError(); }\n',
        },
    )
    found = _findings(tmp_path)
    # The forward declaration names CUDA's own opaque type (the line to change for hipcc, as
    # in hip-stream's catalogue example); a CUDA-spelled function declaration is no use.
    assert found.get("src/decl.h") == [2]
    assert found.get("src/use.cpp") == [2]


# -- the model on texts ------------------------------------------------------------------------


def _hip_only(texts: dict[str, str], extra=None) -> frozenset[str]:
    from cuda2rocm.context.runtime_provided import include_lines

    def find(name: str, includer: str) -> str | None:
        return name if name in texts else None

    return hip_only.files(texts, find, lambda p, t: include_lines(t), lambda p, n: True, extra)


def test_hip_arm_includes_and_hip_headers_are_hip_only():
    texts = {
        "sw.h": DISPATCH,
        "hip/tinygpu_hip_runtime.h": SHIM,
        "hip/tinygpu_hip_helpers.h": HELPERS,
        "cuda/tinygpu_cuda_runtime.h": CUDA_SIDE,
        "stub/tinygpu_stub_runtime.h": STUB,
        "a.cpp": '#include "sw.h"\n',
    }
    assert _hip_only(texts) == {"hip/tinygpu_hip_runtime.h", "hip/tinygpu_hip_helpers.h"}


def test_an_include_guard_is_no_hip_arm():
    texts = {
        "g.h": (
            '#ifndef G_H\n#define G_H\nint n = hipGetLastError();\n#include "inner.h"\n#endif\n'
        ),
        "inner.h": "#pragma once\nint k;\n",
        "a.cpp": '#include "g.h"\n',
    }
    assert "inner.h" not in _hip_only(texts)


def test_an_arm_with_both_vendors_or_a_cython_includer_is_not_hip_only():
    both = (
        '#ifdef GPU\n#include <hip/hip_runtime.h>\n#include <cuda_runtime.h>\n#include "x.h"\n'
        "#endif\n"
    )
    texts = {"b.h": both, "x.h": "#pragma once\nint k;\n", "a.cpp": '#include "b.h"\n'}
    assert "x.h" not in _hip_only(texts)
    texts = {"sw.h": DISPATCH, "hip/tinygpu_hip_helpers.h": HELPERS, "a.cpp": '#include "sw.h"\n'}
    assert "hip/tinygpu_hip_helpers.h" in _hip_only(texts)
    extra = {"core.pyx": [("hip/tinygpu_hip_helpers.h", 1)]}
    assert "hip/tinygpu_hip_helpers.h" not in _hip_only(texts, extra)


def test_definitions_in_a_hip_only_file_count_whatever_they_spell():
    assert project_port.counts(True, "cuda", hip_only=True)
    assert project_port.counts(None, "other", hip_only=True)
    assert not project_port.counts(False, "hip", hip_only=True)
    assert not project_port.counts(True, "cuda")


def test_forward_declarations_are_definitions_in_cuda_terms():
    found = project_port.text_definitions(
        "struct CUmod_st;\ntypedef struct CUfunc_st* CUfunction;\nstruct CUstream_st* s;\n"
    )
    assert ("CUmod_st", 1, "cuda") in found
    assert ("CUfunc_st", 2, "cuda") in found
    assert all(name != "CUstream_st" for name, _, _ in found)  # a use in a declaration


def test_a_blas_shim_on_the_hip_side_is_the_projects_and_cudnn_stays_reported(tmp_path):
    files = {
        "ops/blas_switch.h": (
            "#pragma once\n#ifdef TINYGPU_ON_HIP\n#include <hip/hip_runtime.h>\n"
            '#include "hip/blas_shim.h"\n#include "hip/blas_user.h"\n#else\n'
            "#include <cuda_runtime.h>\n#include <cublas_v2.h>\n#endif\n"
        ),
        "ops/hip/blas_shim.h": (
            "#pragma once\n#include <hipblas/hipblas.h>\n"
            "typedef hipblasStatus_t cublasStatus_t;\ntypedef hipblasHandle_t cublasHandle_t;\n"
            "cublasStatus_t cublasDestroy(cublasHandle_t h);\n"
        ),
        "ops/hip/blas_user.h": (
            "#pragma once\ninline int drop(cublasHandle_t h) { return (int)cublasDestroy(h); }\n"
            "inline void knob(cudnnHandle_t d) {}\n"
        ),
        "ops/gemm.cpp": '#include "blas_switch.h"\nint g(cublasHandle_t h) { return drop(h); }\n',
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    specs = [r for r in load_catalogue() if r.id in ("hip-stream", "vendor-blas-dnn")]
    result = runner.run(Linter(specs), [tmp_path])
    shown = {
        (Path(d.path).resolve().relative_to(tmp_path.resolve()).as_posix(), d.position.line)
        for d in result.diagnostics
        if not d.guarded
    }
    assert shown == {("ops/hip/blas_user.h", 3)}  # cuDNN: nothing in the project defines it
