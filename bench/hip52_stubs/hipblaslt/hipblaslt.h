// Stand-in, for bench/real_builds.py only: the part of hipBLASLt's API (ROCm 6.0 and later)
// that cuBLASLt code mapped by cuda2rocm calls, for a HIP 5.2 install that has no hipBLASLt.
// Written from the declarations of ROCm/hipBLASLt rocm-6.2.2 library/include/hipblaslt.h
// (the same at rocm-6.0.0: hipDataType and hipBLAS's hipblasComputeType_t), installed as
// include/hipblaslt/hipblaslt.h. Like the real header it includes <hipblas/hipblas.h>, whose
// ROCm 6 additions come from hipblas-rocm6.h. Declarations only: nothing links against them.
#ifndef CUDA2ROCM_BENCH_HIPBLASLT_H
#define CUDA2ROCM_BENCH_HIPBLASLT_H
#include <hip/hip_runtime.h>
#include <hip/library_types.h>
#include <stddef.h>
#include <stdint.h>
#include "hipblas-rocm6.h"

typedef enum {
  HIPBLASLT_EPILOGUE_DEFAULT = 1,
  HIPBLASLT_EPILOGUE_RELU = 2,
  HIPBLASLT_EPILOGUE_BIAS = 4,
  HIPBLASLT_EPILOGUE_RELU_BIAS = 6,
  HIPBLASLT_EPILOGUE_GELU = 32,
  HIPBLASLT_EPILOGUE_GELU_BIAS = 36,
  HIPBLASLT_EPILOGUE_GELU_AUX = 160,
  HIPBLASLT_EPILOGUE_GELU_AUX_BIAS = 164,
  HIPBLASLT_EPILOGUE_DGELU = 192,
  HIPBLASLT_EPILOGUE_DGELU_BGRAD = 208,
  HIPBLASLT_EPILOGUE_BGRADA = 256,
  HIPBLASLT_EPILOGUE_BGRADB = 512
} hipblasLtEpilogue_t;

typedef enum {
  HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 0,           // int32_t
  HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 1,  // int64_t
  HIPBLASLT_MATRIX_LAYOUT_TYPE = 2,
  HIPBLASLT_MATRIX_LAYOUT_ORDER = 3,
  HIPBLASLT_MATRIX_LAYOUT_ROWS = 4,
  HIPBLASLT_MATRIX_LAYOUT_COLS = 5,
  HIPBLASLT_MATRIX_LAYOUT_LD = 6
} hipblasLtMatrixLayoutAttribute_t;

typedef enum {
  HIPBLASLT_MATMUL_DESC_TRANSA = 0,                 // int32_t
  HIPBLASLT_MATMUL_DESC_TRANSB = 1,                 // int32_t
  HIPBLASLT_MATMUL_DESC_EPILOGUE = 2,               // uint32_t
  HIPBLASLT_MATMUL_DESC_BIAS_POINTER = 3,           // pointer
  HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 4,         // int32_t (hipDataType)
  HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 10,  // pointer
  HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 11,       // int64_t
  HIPBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE = 12
} hipblasLtMatmulDescAttributes_t;

typedef enum {
  HIPBLASLT_MATMUL_PREF_SEARCH_MODE = 0,
  HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1  // uint64_t
} hipblasLtMatmulPreferenceAttributes_t;

typedef struct { uint64_t data[4]; } hipblasLtMatmulDescOpaque_t;
typedef struct { uint64_t data[4]; } hipblasLtMatrixLayoutOpaque_t;
typedef struct { uint64_t data[5]; } hipblasLtMatmulPreferenceOpaque_t;
typedef void* hipblasLtHandle_t;
typedef hipblasLtMatmulDescOpaque_t* hipblasLtMatmulDesc_t;
typedef hipblasLtMatrixLayoutOpaque_t* hipblasLtMatrixLayout_t;
typedef hipblasLtMatmulPreferenceOpaque_t* hipblasLtMatmulPreference_t;

typedef struct {
  uint8_t data[16];
  size_t max_workspace_bytes;
} hipblasLtMatmulAlgo_t;

typedef struct {
  hipblasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  hipblasStatus_t state;
  float wavesCount;
  int reserved[4];
} hipblasLtMatmulHeuristicResult_t;

#ifdef __cplusplus
extern "C" {
#endif
hipblasStatus_t hipblasLtCreate(hipblasLtHandle_t* handle);
hipblasStatus_t hipblasLtDestroy(const hipblasLtHandle_t handle);
hipblasStatus_t hipblasLtMatrixLayoutCreate(hipblasLtMatrixLayout_t* matLayout, hipDataType type,
                                            uint64_t rows, uint64_t cols, int64_t ld);
hipblasStatus_t hipblasLtMatrixLayoutDestroy(const hipblasLtMatrixLayout_t matLayout);
hipblasStatus_t hipblasLtMatrixLayoutSetAttribute(hipblasLtMatrixLayout_t matLayout,
                                                  hipblasLtMatrixLayoutAttribute_t attr,
                                                  const void* buf, size_t sizeInBytes);
hipblasStatus_t hipblasLtMatmulDescCreate(hipblasLtMatmulDesc_t* matmulDesc,
                                          hipblasComputeType_t computeType,
                                          hipDataType scaleType);
hipblasStatus_t hipblasLtMatmulDescDestroy(const hipblasLtMatmulDesc_t matmulDesc);
hipblasStatus_t hipblasLtMatmulDescSetAttribute(hipblasLtMatmulDesc_t matmulDesc,
                                                hipblasLtMatmulDescAttributes_t attr,
                                                const void* buf, size_t sizeInBytes);
hipblasStatus_t hipblasLtMatmulPreferenceCreate(hipblasLtMatmulPreference_t* pref);
hipblasStatus_t hipblasLtMatmulPreferenceDestroy(const hipblasLtMatmulPreference_t pref);
hipblasStatus_t hipblasLtMatmulPreferenceSetAttribute(hipblasLtMatmulPreference_t pref,
                                                      hipblasLtMatmulPreferenceAttributes_t attr,
                                                      const void* buf, size_t sizeInBytes);
hipblasStatus_t hipblasLtMatmulAlgoGetHeuristic(
    hipblasLtHandle_t handle, hipblasLtMatmulDesc_t matmulDesc, hipblasLtMatrixLayout_t Adesc,
    hipblasLtMatrixLayout_t Bdesc, hipblasLtMatrixLayout_t Cdesc, hipblasLtMatrixLayout_t Ddesc,
    hipblasLtMatmulPreference_t pref, int requestedAlgoCount,
    hipblasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount);
hipblasStatus_t hipblasLtMatmul(hipblasLtHandle_t handle, hipblasLtMatmulDesc_t matmulDesc,
                                const void* alpha, const void* A, hipblasLtMatrixLayout_t Adesc,
                                const void* B, hipblasLtMatrixLayout_t Bdesc, const void* beta,
                                const void* C, hipblasLtMatrixLayout_t Cdesc, void* D,
                                hipblasLtMatrixLayout_t Ddesc, const hipblasLtMatmulAlgo_t* algo,
                                void* workspace, size_t workspaceSizeInBytes,
                                hipStream_t stream);
#ifdef __cplusplus
}
#endif
#endif  // CUDA2ROCM_BENCH_HIPBLASLT_H
