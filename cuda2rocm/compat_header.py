"""The project-local compatibility header that portable fixes include (`cuda2rocm_compat.h`).

Portable fixes keep CUDA spellings, so one source builds with nvcc and hipcc: under HIP-Clang
(`__HIP__`, defined by the compiler; `__HIP_PLATFORM_AMD__` once HIP headers are in) the header
includes the HIP headers and maps exactly the CUDA names the project uses; otherwise it includes
the CUDA headers. It also gives warp code portable spellings: the wavefront size, a lane-mask
type, and `*_sync` warp functions that call the CUDA builtins under nvcc and the HIP ones
(64-bit masks) under hipcc.

The names come from the files of a run (original and fixed text, so removed includes count) and
from the header already on disk (its `cuda2rocm-names:` line), so re-running `fix` on part of a
tree never drops a mapping.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import PurePath

from cuda2rocm import names
from cuda2rocm.frontends import cpp
from cuda2rocm.sources import SourceFile

NAMES_LINE = "// cuda2rocm-names:"
#: Always included: every CUDA file needs the runtime; fp16 is cheap and common.
BASE_HEADERS = ("cuda_runtime.h", "cuda_fp16.h")

_WARP = """\
// Warp size: HIP device passes know it per target (__GFX9__ = 64-lane CDNA, else 32-lane RDNA,
// as torch's C10_WARP_SIZE does); host passes get the upper bound. Size static arrays with it,
// launch configurations with a runtime query (hipDeviceProp_t::warpSize).
#if CUDA2ROCM_HIP
#  if defined(__HIP_DEVICE_COMPILE__) && !defined(__GFX9__)
#    define CUDA2ROCM_WARP_SIZE 32
#  else
#    define CUDA2ROCM_WARP_SIZE 64
#  endif
typedef unsigned long long cuda2rocm_lane_mask_t;
#  define CUDA2ROCM_FULL_MASK (~0ull)
#else
#  define CUDA2ROCM_WARP_SIZE 32
typedef unsigned int cuda2rocm_lane_mask_t;
#  define CUDA2ROCM_FULL_MASK 0xffffffffu
#endif

// Warp functions with CUDA's *_sync signatures. HIP before ROCm 6.2 has no *_sync builtins;
// its non-sync ones act on the whole wavefront, so the mask is not used there.
#if CUDA2ROCM_HIP
template <class T> __device__ __forceinline__ T
cuda2rocm_shfl_sync(cuda2rocm_lane_mask_t, T v, int src, int width = warpSize) {
  return __shfl(v, src, width);
}
template <class T> __device__ __forceinline__ T
cuda2rocm_shfl_up_sync(cuda2rocm_lane_mask_t, T v, unsigned d, int width = warpSize) {
  return __shfl_up(v, d, width);
}
template <class T> __device__ __forceinline__ T
cuda2rocm_shfl_down_sync(cuda2rocm_lane_mask_t, T v, unsigned d, int width = warpSize) {
  return __shfl_down(v, d, width);
}
template <class T> __device__ __forceinline__ T
cuda2rocm_shfl_xor_sync(cuda2rocm_lane_mask_t, T v, int m, int width = warpSize) {
  return __shfl_xor(v, m, width);
}
__device__ __forceinline__ cuda2rocm_lane_mask_t cuda2rocm_ballot_sync(cuda2rocm_lane_mask_t,
                                                                      int p) {
  return __ballot(p);
}
__device__ __forceinline__ int cuda2rocm_any_sync(cuda2rocm_lane_mask_t, int p) { return __any(p); }
__device__ __forceinline__ int cuda2rocm_all_sync(cuda2rocm_lane_mask_t, int p) { return __all(p); }
__device__ __forceinline__ cuda2rocm_lane_mask_t cuda2rocm_activemask() { return __ballot(1); }
__device__ __forceinline__ int cuda2rocm_popc_mask(cuda2rocm_lane_mask_t m) { return __popcll(m); }
__device__ __forceinline__ int cuda2rocm_ffs_mask(cuda2rocm_lane_mask_t m) { return __ffsll(m); }
#else
template <class T> __device__ __forceinline__ T
cuda2rocm_shfl_sync(cuda2rocm_lane_mask_t m, T v, int src, int width = warpSize) {
  return __shfl_sync(m, v, src, width);
}
template <class T> __device__ __forceinline__ T
cuda2rocm_shfl_up_sync(cuda2rocm_lane_mask_t m, T v, unsigned d, int width = warpSize) {
  return __shfl_up_sync(m, v, d, width);
}
template <class T> __device__ __forceinline__ T
cuda2rocm_shfl_down_sync(cuda2rocm_lane_mask_t m, T v, unsigned d, int width = warpSize) {
  return __shfl_down_sync(m, v, d, width);
}
template <class T> __device__ __forceinline__ T
cuda2rocm_shfl_xor_sync(cuda2rocm_lane_mask_t m, T v, int x, int width = warpSize) {
  return __shfl_xor_sync(m, v, x, width);
}
__device__ __forceinline__ cuda2rocm_lane_mask_t cuda2rocm_ballot_sync(cuda2rocm_lane_mask_t m,
                                                                      int p) {
  return __ballot_sync(m, p);
}
__device__ __forceinline__ int cuda2rocm_any_sync(cuda2rocm_lane_mask_t m, int p) {
  return __any_sync(m, p);
}
__device__ __forceinline__ int cuda2rocm_all_sync(cuda2rocm_lane_mask_t m, int p) {
  return __all_sync(m, p);
}
__device__ __forceinline__ cuda2rocm_lane_mask_t cuda2rocm_activemask() { return __activemask(); }
__device__ __forceinline__ int cuda2rocm_popc_mask(cuda2rocm_lane_mask_t m) { return __popc(m); }
__device__ __forceinline__ int cuda2rocm_ffs_mask(cuda2rocm_lane_mask_t m) { return __ffs(m); }
#endif
"""


def render(used: set[str]) -> str:
    """The header text for the CUDA names (identifiers and header names) a project uses."""
    headers = sorted(
        {h for h in used if names.compat_covers(h)} | set(BASE_HEADERS),
        key=lambda h: (BASE_HEADERS.index(h) if h in BASE_HEADERS else len(BASE_HEADERS), h),
    )
    identifiers = sorted(
        n for n in used if (row := names.api_name(n)) is not None and row.supported
    )
    hip_includes = list(dict.fromkeys(names.header(h).hip for h in headers))
    out = [
        "// Generated by cuda2rocm fix; regenerated on every run. Do not edit by hand:",
        "// one source builds with nvcc (CUDA spellings) and with hipcc (mapped below).",
        f"{NAMES_LINE} {' '.join(sorted(set(headers) | set(identifiers)))}",
        "#pragma once",
        "",
        "#if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__)",
        "#  define CUDA2ROCM_HIP 1",
        "#else",
        "#  define CUDA2ROCM_HIP 0",
        "#endif",
        "",
        "#if CUDA2ROCM_HIP",
    ]
    out += [f"#include <{h}>" for h in hip_includes]
    for name in identifiers:
        out += [f"#ifndef {name}", f"#define {name} {names.api_name(name).hip}", "#endif"]
    out += ["#else"]
    out += [f"#include <{h}>" for h in headers]
    out += ["#endif", "", _WARP]
    return "\n".join(out)


def used_names(text: str) -> set[str]:
    """CUDA names in the code of one C++ file (never in its comments or strings)."""
    view = cpp.parse(SourceFile("<compat>", "cuda", text))
    found = {inc.name for inc in view.includes if names.header(inc.name)}
    found |= {view.text(n) for n in view.identifiers if names.api_name(view.text(n))}
    found |= {t.name for t in view.macro_tokens if names.api_name(t.name)}
    return found


def recorded_names(header_text: str) -> set[str]:
    for line in header_text.splitlines():
        if line.startswith(NAMES_LINE):
            return set(line[len(NAMES_LINE) :].split())
    return set()


def plan(
    files: Mapping[str, tuple[str, str]],
    existing: Mapping[str, str] | None = None,
    header: str = cpp.DEFAULT_COMPAT_HEADER,
) -> dict[str, str]:
    """Headers to write for a run: {path: content}, one beside every fixed file that includes it.

    `files` maps each C++ path of the run to (original text, fixed text); `existing` gives the
    text of compatibility headers already on disk, by path. Every header gets the same content:
    the union of the names the whole run (and the existing headers) use.
    """
    existing = existing or {}
    include = re.compile(rf'#\s*include\s*"{re.escape(header)}"')
    used: set[str] = set()
    dirs: set[str] = set()
    for path, (original, fixed) in files.items():
        if not include.search(fixed):
            continue
        dirs.add(os.path.dirname(path))
        used |= used_names(original) | used_names(fixed)
    for text in existing.values():
        used |= recorded_names(text)
    if not dirs:
        return {}
    content = render(used)
    return {str(PurePath(d) / header) if d else header: content for d in sorted(dirs)}
