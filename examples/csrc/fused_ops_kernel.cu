// Fused softmax(x + bias) over the last dimension, used by the attention bottleneck.
#include <torch/extension.h>

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#if CUDA_VERSION >= 11000
#include <cuda_bf16.h>
#endif

#define WARP_SIZE 32

namespace {

__device__ __forceinline__ unsigned lane_id() {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(double v) { return static_cast<float>(v); }
__device__ __forceinline__ float to_float(at::Half v) { return __half2float(static_cast<__half>(v)); }

__device__ __forceinline__ float to_float(at::BFloat16 v) {
#if __CUDA_ARCH__ >= 800
  return __bfloat162float(static_cast<__nv_bfloat16>(v));
#else
  return static_cast<float>(v);
#endif
}

struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

template <typename Op>
__device__ __forceinline__ float warp_reduce(float v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = op(v, __shfl_xor_sync(0xffffffff, v, offset));
  }
  return v;
}

template <typename Op>
__device__ float block_reduce(float v, Op op, float identity) {
  __shared__ float partial[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int num_warps = (blockDim.x + WARP_SIZE - 1) / WARP_SIZE;

  v = warp_reduce(v, op);
  if (lane == 0) partial[warp] = v;
  __syncthreads();

  v = threadIdx.x < num_warps ? partial[lane] : identity;
  if (warp == 0) v = warp_reduce(v, op);
  if (threadIdx.x == 0) partial[0] = v;
  __syncthreads();
  const float result = partial[0];
  __syncthreads();
  return result;
}

// One block per row, for long rows.
template <typename scalar_t>
__global__ void bias_softmax_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ bias,
                                    scalar_t* __restrict__ y, int64_t cols, int64_t bias_rows) {
  const int64_t row = blockIdx.x;
  const scalar_t* xr = x + row * cols;
  const scalar_t* br = bias + (row % bias_rows) * cols;
  scalar_t* yr = y + row * cols;

  float local_max = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    local_max = fmaxf(local_max, to_float(xr[c]) + to_float(br[c]));
  }
  const float row_max = block_reduce(local_max, MaxOp(), -INFINITY);

  float local_sum = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    local_sum += __expf(to_float(xr[c]) + to_float(br[c]) - row_max);
  }
  const float inv_sum = 1.f / block_reduce(local_sum, SumOp(), 0.f);

  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    yr[c] = static_cast<scalar_t>(__expf(to_float(xr[c]) + to_float(br[c]) - row_max) * inv_sum);
  }
}

// One warp per row, for rows of at most ELEMS * 32 columns (attention windows).
template <typename scalar_t, int ELEMS>
__global__ void bias_softmax_warp_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ bias,
                                         scalar_t* __restrict__ y, int64_t rows, int64_t cols,
                                         int64_t bias_rows) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= rows) return;
  const unsigned lane = lane_id();
  const scalar_t* xr = x + row * cols;
  const scalar_t* br = bias + (row % bias_rows) * cols;

  float v[ELEMS];
  float row_max = -INFINITY;
#pragma unroll
  for (int i = 0; i < ELEMS; ++i) {
    const int64_t c = lane + i * WARP_SIZE;
    v[i] = c < cols ? to_float(xr[c]) + to_float(br[c]) : -INFINITY;
    row_max = fmaxf(row_max, v[i]);
  }
  row_max = warp_reduce(row_max, MaxOp());

  float row_sum = 0.f;
#pragma unroll
  for (int i = 0; i < ELEMS; ++i) {
    v[i] = __expf(v[i] - row_max);
    row_sum += v[i];
  }
  const float inv_sum = 1.f / warp_reduce(row_sum, SumOp());

#pragma unroll
  for (int i = 0; i < ELEMS; ++i) {
    const int64_t c = lane + i * WARP_SIZE;
    if (c < cols) y[row * cols + c] = static_cast<scalar_t>(v[i] * inv_sum);
  }
}

}  // namespace

torch::Tensor bias_softmax_cuda(const torch::Tensor& x, const torch::Tensor& bias) {
  const c10::cuda::CUDAGuard device_guard(x.device());
  auto y = torch::empty_like(x);
  const int64_t cols = x.size(-1);
  const int64_t rows = x.numel() / cols;
  const int64_t bias_rows = bias.numel() / cols;
  if (rows == 0) return y;
  TORCH_CHECK(rows % bias_rows == 0, "bias does not broadcast over x");

  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, x.scalar_type(),
                                  "bias_softmax_cuda", [&] {
    if (cols <= 4 * WARP_SIZE) {
      constexpr int rows_per_block = 8;
      const dim3 threads(rows_per_block * WARP_SIZE);
      const dim3 blocks((rows + rows_per_block - 1) / rows_per_block);
      bias_softmax_warp_kernel<scalar_t, 4><<<blocks, threads, 0, stream>>>(
          x.data_ptr<scalar_t>(), bias.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), rows, cols, bias_rows);
    } else {
      const dim3 threads(cols >= 2048 ? 1024 : 256);
      const dim3 blocks(rows);
      bias_softmax_kernel<scalar_t><<<blocks, threads, 0, stream>>>(
          x.data_ptr<scalar_t>(), bias.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), cols, bias_rows);
    }
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
