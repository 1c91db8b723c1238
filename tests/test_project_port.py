"""The project's own port (context/project_port.py): CUDA names a project header defines in code a
HIP pass may compile are the project's in every file that includes it (directly or through
another header); a file that does not include it, and a header whose definitions sit only where
ROCm skips them, keep their findings."""

from pathlib import Path

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.context import project_port
from cuda2rocm.engine import Linter
from cuda2rocm.frontends import cpp
from cuda2rocm.sources import SourceFile

#: Every spelling of a mapping, under the compiler's HIP macro.
PLATFORM_HEADER = """\
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#define cudaStream_t hipStream_t
#define cudaMemcpyAsync(...) hipMemcpyAsync(__VA_ARGS__)
using cudaEvent_t = hipEvent_t;
typedef hipGraph_t cudaGraph_t;
constexpr auto cudaSuccess = hipSuccess;
static const unsigned CU_STREAM_NON_BLOCKING = hipStreamNonBlocking;
inline hipError_t cudaHostAlloc(void** p, size_t n, unsigned f) { return hipHostMalloc(p, n, f); }
enum zephyr_copy_kind { cudaMemcpyHostToDevice = hipMemcpyHostToDevice };
namespace cub = hipcub;
#else
#include <cuda_runtime.h>
#endif
"""
#: A torch-style switch the build may or may not set (unknown here): HIP spellings only.
SWITCH_HEADER = """\
#pragma once
#ifdef USE_ROCM
typedef hipError_t cudaError_t;
#define cudaMemset hipMemset
#endif
#define CUBLAS_TRY(call) do { if ((call) != 0) return; } while (0)
"""
#: A project macro the CMake build defines for ROCm only.
PROJECT_HEADER = """\
#pragma once
#ifdef QUASAR_AMD_BUILD
#define cudaFree hipFree
#endif
"""
CMAKE = "if(QUASAR_WITH_ROCM)\n  add_definitions(-DQUASAR_AMD_BUILD)\nendif()\n"
#: Definitions only where ROCm never compiles them, or another vendor's mapping.
CUDA_SIDE_HEADER = """\
#pragma once
#ifndef __HIP_PLATFORM_AMD__
#define cudaDeviceSynchronize() cudaDeviceSynchronize_checked()
typedef int cudaEventQueryKind;
#elif defined(ZEPHYR_ON_MUSA)
#define cudaEventQuery musaEventQuery
#endif
#ifdef ZEPHYR_ON_MUSA
#define cudaDeviceSynchronize musaDeviceSynchronize
using cudaEventQuery = musaEventQuery;
#endif
"""
USES = """\
__global__ void k(float* p) { p[0] = 1; }
void run(float* d, float* h, unsigned n) {
  cudaStream_t s;
  cudaEvent_t e;
  cudaGraph_t g;
  void* pinned;
  cudaHostAlloc(&pinned, n, CU_STREAM_NON_BLOCKING);
  cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s);
  cudaError_t err = cudaMemset(d, 0, n);
  if (err != cudaSuccess) cudaFree(d);
  CUBLAS_TRY(0);
}
"""
INCLUDES = '#include "../ports/zephyr_gpu.h"\n#include "../ports/vega_switch.h"\n'


def _tree(root: Path) -> None:
    (root / "ports").mkdir()
    (root / "kern").mkdir()
    (root / "CMakeLists.txt").write_text(CMAKE)
    (root / "ports" / "zephyr_gpu.h").write_text(PLATFORM_HEADER)
    (root / "ports" / "vega_switch.h").write_text(SWITCH_HEADER)
    (root / "ports" / "quasar_port.h").write_text(PROJECT_HEADER)
    (root / "ports" / "nv_side.h").write_text(CUDA_SIDE_HEADER)
    quasar = '#include "../ports/quasar_port.h"\n'
    (root / "kern" / "direct.cu").write_text(INCLUDES + quasar + USES)
    (root / "kern" / "bridge.cuh").write_text("#pragma once\n" + INCLUDES + quasar)
    (root / "kern" / "indirect.cu").write_text('#include "bridge.cuh"\n' + USES)
    (root / "kern" / "lonely.cu").write_text("#include <cuda_runtime.h>\n" + USES)
    (root / "kern" / "nvside.cu").write_text(
        INCLUDES
        + '#include "../ports/nv_side.h"\n'
        + "void wait(cudaEvent_t e) { cudaEventQuery(e); cudaDeviceSynchronize(); }\n"
    )


def _findings(root: Path, rule: str) -> list[tuple[str, int, str]]:
    specs = [r for r in load_catalogue() if r.id == rule]
    result = runner.run(Linter(specs), [root])
    return sorted(
        (f"{Path(d.path).parent.name}/{Path(d.path).name}", d.position.line, d.message)
        for d in result.diagnostics
        if d.rule == rule and not d.guarded
    )


def test_mapped_names_are_ported_where_the_header_is_included(tmp_path):
    _tree(tmp_path)
    found = _findings(tmp_path, "hip-stream")
    files = {f for f, _, _ in found}
    # Directly and through bridge.cuh: every use is the project's port.
    assert "kern/direct.cu" not in files
    assert "kern/indirect.cu" not in files
    # The mapping lines themselves are never a finding.
    assert not any(f.startswith("ports/") for f in files)


def test_a_file_that_does_not_include_the_header_is_still_reported(tmp_path):
    _tree(tmp_path)
    found = _findings(tmp_path, "hip-stream")
    lonely = [(line, m) for f, line, m in found if f == "kern/lonely.cu"]
    assert [line for line, _ in lonely] == [4, 5, 6, 8, 9, 10, 11]
    # The message names the project's header, so the finding says where the mapping is.
    assert "ports/zephyr_gpu.h:4" in lonely[0][1] and "does not include" in lonely[0][1]


def test_definitions_where_rocm_skips_them_do_not_suppress(tmp_path):
    _tree(tmp_path)
    nvside = [m for f, _, m in _findings(tmp_path, "hip-stream") if f == "kern/nvside.cu"]
    assert len(nvside) == 1
    assert "`cudaEventQuery`" in nvside[0] and "`cudaDeviceSynchronize`" in nvside[0]


def test_a_project_macro_shaped_like_a_library_name_is_the_projects(tmp_path):
    _tree(tmp_path)
    blas = _findings(tmp_path, "vendor-blas-dnn")
    assert [f for f, _, m in blas if "CUBLAS_TRY" in m] == ["kern/lonely.cu"]


def _declared(text: str) -> list[tuple[str, str]]:
    view = cpp.parse(SourceFile("x.h", "cuda", text))
    return [
        (name, spelled)
        for name, _, spelled in project_port.definitions(
            view.tree.root_node, view.text, lambda n: n.start_point[0] + 1
        )
    ]


def test_declarations_at_file_scope_with_their_hip_spelling():
    found = dict(_declared(PLATFORM_HEADER))
    assert found == {
        "cudaStream_t": "hip",
        "cudaMemcpyAsync": "hip",
        "cudaEvent_t": "hip",
        "cudaGraph_t": "hip",
        "cudaSuccess": "hip",
        "CU_STREAM_NON_BLOCKING": "hip",
        "cudaHostAlloc": "hip",
        "cudaMemcpyHostToDevice": "hip",
        "cub": "hip",
    }
    # Another vendor's spelling is no HIP spelling; CUDA's own declaration spelled again keeps
    # CUDA's meaning; a namespace member or a local is not at file scope.
    assert _declared(CUDA_SIDE_HEADER)[-2:] == [
        ("cudaDeviceSynchronize", "other"),
        ("cudaEventQuery", "other"),
    ]
    # A forward declaration declares CUDA's own opaque type: CUDA's terms too.
    assert _declared("struct CUstream_st;\nusing cudaStream_t = CUstream_st *;\n") == [
        ("CUstream_st", "cuda"),
        ("cudaStream_t", "cuda"),
    ]
    assert project_port.counts(None, "hip") and not project_port.counts(None, "other")
    assert project_port.counts(True, "other") and not project_port.counts(True, "cuda")
    assert not project_port.counts(False, "hip")
    inner = "namespace orbit { using cudaStream_t = hipStream_t; }\nvoid f() { int cudaFree; }\n"
    assert _declared(inner) == []
    assert _declared('extern "C" { typedef hipEvent_t cudaEvent_t; }\n') == [("cudaEvent_t", "hip")]


def test_declarators_with_no_plain_name_are_skipped():
    """A typedef of a function-pointer type, or a parenthesised declarator, names nothing a
    plain walk of `declarator` fields reaches: skipped, not a crash."""
    text = "typedef void (*cudaHostFn_cb)(void*);\nint (cudaPeekHelper) = 0;\n"
    assert _declared(text) == []


# -- a file's own definitions ------------------------------------------------------------------
#: A stub that names neither vendor's runtime: every definition, and each use below it.
STUB = """\
#pragma once
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorNoDevice = 100 };
inline cudaError_t cudaGetDeviceCount(int* n) { *n = 0; return cudaErrorNoDevice; }
"""
#: Another vendor's mapping under its own build macro (unknown here), used inside and outside.
ACME = """\
#ifndef ORBIT_ACME_H
#define ORBIT_ACME_H
#if defined(ORBIT_USE_ACME)
#define cudaMalloc acmeMalloc
enum { cudaErrorNotReady = 600 };
inline int inside() { void* p; cudaMalloc(&p, 4); return cudaErrorNotReady; }
#ifdef ORBIT_DEBUG
inline int nested() { return cudaErrorNotReady; }
#endif
#else
inline int other_branch() { return cudaErrorNotReady; }
#endif
inline int outside() { void* p; cudaMalloc(&p, 4); return 0; }
#ifdef ORBIT_USE_ACME
inline int again() { return cudaErrorNotReady; }
#endif
#define ORBIT_USE_ACME 1
#ifdef ORBIT_USE_ACME
inline int redefined() { return cudaErrorNotReady; }
#endif
#endif
"""
#: A use above the definition, and one after an `#undef`; a macro body is read where it expands.
ORDER = """\
#pragma once
inline int early() { return cudaErrorInvalidValue; }
enum { cudaErrorInvalidValue = 1 };
inline int late() { return cudaErrorInvalidValue; }
#define cudaMemset acmeMemset
inline int mapped(void* p) { return cudaMemset(p, 0, 4); }
#undef cudaMemset
inline int undone(void* p) { return cudaMemset(p, 0, 4); }
#define ORBIT_NOT_READY cudaErrorNotReady
#define cudaErrorNotReady 600
"""


def _own_tree(root: Path) -> None:
    (root / "stub.h").write_text(STUB)
    (root / "acme.h").write_text(ACME)
    (root / "order.h").write_text(ORDER)
    (root / "user.cc").write_text(
        '#include "stub.h"\nint n() { int c; return cudaGetDeviceCount(&c) == 0 ? c : 0; }\n'
    )


def test_a_files_own_definitions_and_the_uses_below_them_are_not_findings(tmp_path):
    _own_tree(tmp_path)
    found = _findings(tmp_path, "hip-stream")
    assert not [f for f, _, _ in found if f.endswith("/stub.h")]
    acme = sorted(line for f, line, _ in found if f.endswith("/acme.h"))
    # The other branch, the use outside the branch, and one after the macro is redefined.
    assert acme == [11, 13, 19]


def test_uses_above_a_definition_or_after_an_undef_are_reported(tmp_path):
    _own_tree(tmp_path)
    found = _findings(tmp_path, "hip-stream")
    assert sorted(line for f, line, _ in found if f.endswith("/order.h")) == [2, 8]


def test_another_files_use_keeps_the_cross_file_rule(tmp_path):
    """A stub's function body names CUDA errors: spelled in CUDA terms, it ports nothing for
    an includer (project_port.counts)."""
    _own_tree(tmp_path)
    found = _findings(tmp_path, "hip-stream")
    assert [line for f, line, _ in found if f.endswith("/user.cc")] == [2]


def test_vendor_blas_dnn_skips_definitions_and_the_uses_below():
    text = (
        "#pragma once\ntypedef int cudnnStatus_t;\nenum { CUDNN_STATUS_SUCCESS = 0 };\n"
        "inline cudnnStatus_t cudnnCreate(void** h) { return CUDNN_STATUS_SUCCESS; }\n"
        "#ifdef ORBIT_FAKE_DNN\ntypedef int cudnnHandle_t;\n#endif\ncudnnHandle_t make();\n"
    )
    specs = [r for r in load_catalogue() if r.id == "vendor-blas-dnn"]
    found = Linter(specs).lint_source(SourceFile("dnn_stub.h", "cuda", text))
    assert [(d.position.line, d.data["cuda_name"]) for d in found] == [(8, "cudnnHandle_t")]


def test_branches_say_which_line_compiles_whenever_another_does():
    from cuda2rocm.context import preprocessor

    b = preprocessor.branches(ACME)
    assert b.encloses(4, 6) and b.encloses(4, 8) and b.encloses(4, 15)
    assert not b.encloses(4, 11) and not b.encloses(4, 13) and not b.encloses(4, 19)
    assert b.encloses(2, 13)  # the include guard holds every line
    assert preprocessor.branches(ORDER).undefined_between("cudaMemset", 5, 8)
