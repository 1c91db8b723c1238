#pragma once
// Benchmark stand-in (HIP 5.2 has no hip_bf16.h; HIP >= 6.0 does): the types and the
// conversions CUDA code calls, with HIP 6's names, on float arithmetic (round to nearest even).
#include <hip/hip_runtime.h>

struct __hip_bfloat16 {
  unsigned short data;
  __hip_bfloat16() = default;
  __host__ __device__ __hip_bfloat16(float f) {
    unsigned int u = __builtin_bit_cast(unsigned int, f);
    u += 0x7fffu + ((u >> 16) & 1u);
    data = static_cast<unsigned short>(u >> 16);
  }
  __host__ __device__ operator float() const {
    return __builtin_bit_cast(float, static_cast<unsigned int>(data) << 16);
  }
};
struct __hip_bfloat162 {
  __hip_bfloat16 x, y;
  __hip_bfloat162() = default;
  __host__ __device__ __hip_bfloat162(__hip_bfloat16 a, __hip_bfloat16 b) : x(a), y(b) {}
};
__host__ __device__ inline float __bfloat162float(__hip_bfloat16 a) { return float(a); }
__host__ __device__ inline __hip_bfloat16 __float2bfloat16(float a) { return __hip_bfloat16(a); }
__host__ __device__ inline __hip_bfloat16 __float2bfloat16_rn(float a) { return __hip_bfloat16(a); }
__host__ __device__ inline __hip_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return __hip_bfloat162(__hip_bfloat16(a), __hip_bfloat16(b));
}
__host__ __device__ inline __hip_bfloat162 __float2bfloat162_rn(float a) {
  return __floats2bfloat162_rn(a, a);
}
__host__ __device__ inline float2 __bfloat1622float2(__hip_bfloat162 a) {
  return make_float2(float(a.x), float(a.y));
}
__host__ __device__ inline __hip_bfloat16 __low2bfloat16(__hip_bfloat162 a) { return a.x; }
__host__ __device__ inline __hip_bfloat16 __high2bfloat16(__hip_bfloat162 a) { return a.y; }
