// Device helpers the CUDA backend's kernels share (kernels.cu, implicit_gemm.cu): loads and
// stores in the storage type with float32 arithmetic, and specs::Activation's functions.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace verisub::runtime::cuda_backend {

// Loads and stores in the storage type; arithmetic in float32.
__device__ __forceinline__ float Load(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float Load(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float Load(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}
__device__ __forceinline__ void Store(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void Store(__half* p, int64_t i, float v) { p[i] = __float2half(v); }
__device__ __forceinline__ void Store(__nv_bfloat16* p, int64_t i, float v) {
  p[i] = __float2bfloat16(v);
}

// specs::Activation's functions, as the reference computes them.
__device__ __forceinline__ float Act(int a, float x) {
  switch (a) {
    case 1:
      return fmaxf(x, 0.f);
    case 2:
      return 1.f / (1.f + expf(-x));
    case 3:
      return tanhf(x);
    case 4:
      return fminf(fmaxf(x, 0.f), 6.f);
    case 5:
      return fminf(fmaxf(x / 6.f + 0.5f, 0.f), 1.f);
    case 6:
      return x * fminf(fmaxf(x / 6.f + 0.5f, 0.f), 1.f);
    case 7:
      return x / (1.f + expf(-x));
    case 8:
      return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case 9:
      return 0.5f * x * (1.f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case 10:
      return expf(x);
    case 11:
      return erff(x);
    default:
      return x;
  }
}

}  // namespace verisub::runtime::cuda_backend
