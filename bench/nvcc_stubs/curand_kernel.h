// Stand-in for cuRAND's device API, for bench/fix_regression.py only: this machine's CUDA 13
// toolkit ships no cuRAND, and flash-attention's layer_norm kernels draw dropout masks with it.
// The names and signatures are cuRAND's (Philox4_32_10 generator, as its documentation spells
// them); the bodies return zeros, because nvcc's whole-program mode needs a definition for
// every device function called and these units are compiled, never run.
#pragma once

struct curandStatePhilox4_32_10 {
  unsigned int ctr[4], key[2], output[4];
  int STATE;
};
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;

__device__ inline void curand_init(unsigned long long, unsigned long long, unsigned long long,
                                   curandStatePhilox4_32_10_t* state) {
  *state = curandStatePhilox4_32_10_t{};
}
__device__ inline unsigned int curand(curandStatePhilox4_32_10_t*) { return 0u; }
__device__ inline float curand_uniform(curandStatePhilox4_32_10_t*) { return 0.f; }
__device__ inline float4 curand_uniform4(curandStatePhilox4_32_10_t*) {
  return make_float4(0.f, 0.f, 0.f, 0.f);
}
