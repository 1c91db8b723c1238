// Stand-in, for bench/real_builds.py only: the hipBLAS 2.x declarations (ROCm 6.0 / 6.1) that
// hipBLAS 5.2's hipblas.h lacks and cuBLAS code mapped by cuda2rocm calls. Written from the
// signatures and enumerator values of ROCm/hipBLAS rocm-6.2.2 library/include/hipblas.h
// (hipblasComputeType_t: hipBLAS 2.0, ROCm 6.0; hipblasMath_t, hipblasSetMathMode /
// hipblasGetMathMode: hipBLAS 2.1, ROCm 6.1). Declarations only: nothing links against them.
#ifndef CUDA2ROCM_BENCH_HIPBLAS_ROCM6_H
#define CUDA2ROCM_BENCH_HIPBLAS_ROCM6_H
#include <hipblas/hipblas.h>

typedef enum {
  HIPBLAS_COMPUTE_16F = 0,
  HIPBLAS_COMPUTE_16F_PEDANTIC = 1,
  HIPBLAS_COMPUTE_32F = 2,
  HIPBLAS_COMPUTE_32F_PEDANTIC = 3,
  HIPBLAS_COMPUTE_32F_FAST_16F = 4,
  HIPBLAS_COMPUTE_32F_FAST_16BF = 5,
  HIPBLAS_COMPUTE_32F_FAST_TF32 = 6,
  HIPBLAS_COMPUTE_64F = 7,
  HIPBLAS_COMPUTE_64F_PEDANTIC = 8,
  HIPBLAS_COMPUTE_32I = 9,
  HIPBLAS_COMPUTE_32I_PEDANTIC = 10,
} hipblasComputeType_t;

typedef enum {
  HIPBLAS_DEFAULT_MATH,
  HIPBLAS_XF32_XDL_MATH,
  HIPBLAS_PEDANTIC_MATH,
  HIPBLAS_TF32_TENSOR_OP_MATH,
  HIPBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
  HIPBLAS_TENSOR_OP_MATH
} hipblasMath_t;

#ifdef __cplusplus
extern "C" {
#endif
hipblasStatus_t hipblasSetMathMode(hipblasHandle_t handle, hipblasMath_t mode);
hipblasStatus_t hipblasGetMathMode(hipblasHandle_t handle, hipblasMath_t* mode);
#ifdef __cplusplus
}
#endif
#endif  // CUDA2ROCM_BENCH_HIPBLAS_ROCM6_H
