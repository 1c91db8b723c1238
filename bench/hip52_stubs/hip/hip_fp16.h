// Stand-in, for bench/real_builds.py only: HIP's own hip_fp16.h plus the __half functions that
// later HIP declares and HIP 5.2's amd_hip_fp16.h lacks, which code written for ROCm calls
// (ggml's vendors/hip.h path: `__hmax`, `__shfl_xor(half2, ...)`). Written here, after the
// declarations of:
// - __hmax / __hmin: HIP 5.5 (ROCm/hipamd rocm-5.5.0 include/hip/amd_detail/amd_hip_fp16.h;
//   absent at rocm-5.4.0);
// - __shfl / __shfl_up / __shfl_down / __shfl_xor of __half and __half2: HIP 5.6 (ROCm/clr
//   rocm-5.6.0 hipamd/include/hip/amd_detail/amd_hip_fp16.h; absent from hipamd rocm-5.5.0).
// Each block is compiled only for a HIP older than the release that has it.
#include_next <hip/hip_fp16.h>
#ifndef CUDA2ROCM_BENCH_HIP_FP16_H
#define CUDA2ROCM_BENCH_HIP_FP16_H
#include <hip/hip_runtime.h>  // warpSize, __shfl of int

#if defined(__cplusplus) && defined(__HIP__)
#if HIP_VERSION_MAJOR * 100 + HIP_VERSION_MINOR < 505
__device__ inline __half __hmax(const __half a, const __half b) {
  return __float2half(fmaxf(__half2float(a), __half2float(b)));
}
__device__ inline __half __hmin(const __half a, const __half b) {
  return __float2half(fminf(__half2float(a), __half2float(b)));
}
#endif
#if HIP_VERSION_MAJOR * 100 + HIP_VERSION_MINOR < 506
namespace cuda2rocm_bench {
template <class T, class F> __device__ inline T shfl_bits(T v, F shfl) {
  static_assert(sizeof(T) <= sizeof(int), "one 32-bit word");
  int word = 0;
  __builtin_memcpy(&word, &v, sizeof(T));
  word = shfl(word);
  __builtin_memcpy(&v, &word, sizeof(T));
  return v;
}
}  // namespace cuda2rocm_bench
#define CUDA2ROCM_BENCH_HALF_SHFL(T)                                                        \
  __device__ inline T __shfl(T v, int src, int width = warpSize) {                          \
    return cuda2rocm_bench::shfl_bits(v, [=](int w) { return __shfl(w, src, width); });    \
  }                                                                                         \
  __device__ inline T __shfl_up(T v, unsigned int d, int width = warpSize) {                \
    return cuda2rocm_bench::shfl_bits(v, [=](int w) { return __shfl_up(w, d, width); });   \
  }                                                                                         \
  __device__ inline T __shfl_down(T v, unsigned int d, int width = warpSize) {              \
    return cuda2rocm_bench::shfl_bits(v, [=](int w) { return __shfl_down(w, d, width); }); \
  }                                                                                         \
  __device__ inline T __shfl_xor(T v, int mask, int width = warpSize) {                     \
    return cuda2rocm_bench::shfl_bits(v, [=](int w) { return __shfl_xor(w, mask, width); });\
  }
CUDA2ROCM_BENCH_HALF_SHFL(__half)
CUDA2ROCM_BENCH_HALF_SHFL(__half2)
#undef CUDA2ROCM_BENCH_HALF_SHFL
#endif
#endif
#endif  // CUDA2ROCM_BENCH_HIP_FP16_H
