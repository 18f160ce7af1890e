// The CUDA backend's own kernels (see kernels.h). Memory-bound element-wise kernels walk the
// tensor with a grid-stride loop; row kernels (softmax, layer normalization, mean) give each row
// a block or a warp and reduce with warp shuffles.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "runtime/cuda/device_math.cuh"
#include "runtime/cuda/kernels.h"

namespace verisub::runtime::cuda_backend {
namespace {

constexpr int kThreads = 256;

// Enough blocks to fill the GPU several times over; the loops stride over the rest.
int Blocks(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(b, 65535)));
}

// Calls f with a null pointer of the storage type of `t` (for template dispatch).
template <class F>
cudaError_t Dispatch(DType t, F&& f) {
  switch (t) {
    case DType::kF32:
      return f(static_cast<float*>(nullptr));
    case DType::kF16:
      return f(static_cast<__half*>(nullptr));
    case DType::kBF16:
      return f(static_cast<__nv_bfloat16*>(nullptr));
  }
  return cudaErrorInvalidValue;
}

template <class A, class B>
__global__ void CastKernel(const A* x, B* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    Store(y, i, Load(x, i));
}

template <class T>
__global__ void UnaryKernel(int act, const T* __restrict__ x, T* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    Store(y, i, Act(act, Load(x, i)));
}

template <class T>
__global__ void AffineKernel(Affine a, const T* x, T* y, int64_t n) {
  const T* z = static_cast<const T*>(a.z);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = (i / a.inner) % a.channels;
    float v = Load(x, i);
    if (a.scale) v *= a.scale[c];
    if (a.shift) v += a.shift[c];
    if (z) v += Load(z, i);
    Store(y, i, Act(a.act, v));
  }
}

template <class T>
__global__ void ScalarMulKernel(const T* x, const float* s, T* y, int64_t n) {
  const float k = *s;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    Store(y, i, Load(x, i) * k);
}

template <class T>
__global__ void BinaryKernel(int op, const T* a, const T* b, T* y, Broadcast s, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
      const int64_t k = rest % s.dims[d];
      rest /= s.dims[d];
      ia += k * s.a_strides[d];
      ib += k * s.b_strides[d];
    }
    const float u = Load(a, ia), v = Load(b, ib);
    Store(y, i,
          op == kBinaryAdd   ? u + v
          : op == kBinarySub ? u - v
          : op == kBinaryMul ? u * v
                             : u / v);
  }
}

__device__ __forceinline__ int64_t GatherOffset(const Gather& g, int64_t i) {
  int64_t rest = i, off = g.x_offset;
  for (int d = g.rank - 1; d >= 0; --d) {
    off += (rest % g.dims[d]) * g.x_strides[d];
    rest /= g.dims[d];
  }
  return off;
}

template <class T>
__global__ void GatherKernel(const T* __restrict__ x, T* y, Gather g, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    y[i] = x[GatherOffset(g, i)];
}

__device__ __forceinline__ float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The block's sum (max when `max`) of one value per thread, returned to every thread.
__device__ float BlockReduce(float v, bool max) {
  __shared__ float partial[kThreads / 32];
  __shared__ float result;
  v = max ? WarpMax(v) : WarpSum(v);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float w = lane < blockDim.x / 32 ? partial[lane] : (max ? -INFINITY : 0.f);
    w = max ? WarpMax(w) : WarpSum(w);
    if (lane == 0) result = w;
  }
  __syncthreads();
  const float r = result;
  __syncthreads();  // `result` and `partial` are reused by the next call
  return r;
}

// One block per contiguous row.
template <class T>
__global__ void SoftmaxRowKernel(const T* x, T* y, int64_t dim) {
  const T* xr = x + blockIdx.x * dim;
  T* yr = y + blockIdx.x * dim;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) m = fmaxf(m, Load(xr, j));
  m = BlockReduce(m, true);
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) s += expf(Load(xr, j) - m);
  s = BlockReduce(s, false);
  const float r = 1.f / s;
  for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) Store(yr, j, expf(Load(xr, j) - m) * r);
}

// One thread per (outer, inner) column of a strided axis.
template <class T>
__global__ void SoftmaxColumnKernel(const T* x, T* y, int64_t outer, int64_t dim, int64_t inner) {
  for (int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; c < outer * inner;
       c += int64_t{gridDim.x} * blockDim.x) {
    const int64_t base = (c / inner) * dim * inner + c % inner;
    float m = -INFINITY;
    for (int64_t j = 0; j < dim; ++j) m = fmaxf(m, Load(x, base + j * inner));
    float s = 0.f;
    for (int64_t j = 0; j < dim; ++j) s += expf(Load(x, base + j * inner) - m);
    const float r = 1.f / s;
    for (int64_t j = 0; j < dim; ++j)
      Store(y, base + j * inner, expf(Load(x, base + j * inner) - m) * r);
  }
}

template <class T>
__global__ void LayerNormKernel(const T* x, const float* scale, const float* bias, T* y, int64_t n,
                                float eps) {
  const T* xr = x + blockIdx.x * n;
  T* yr = y + blockIdx.x * n;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += Load(xr, j);
  const float mean = BlockReduce(s, false) / static_cast<float>(n);
  float q = 0.f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const float d = Load(xr, j) - mean;
    q += d * d;
  }
  const float k = rsqrtf(BlockReduce(q, false) / static_cast<float>(n) + eps);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    Store(yr, j, (Load(xr, j) - mean) * k * scale[j] + bias[j]);
}

// One warp per output element.
template <class T>
__global__ void ReduceMeanKernel(const T* x, T* y, Reduction r, int64_t n) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * blockDim.x / 32;
  for (int64_t o = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32; o < n; o += warps) {
    const int64_t base = GatherOffset(r.outer, o);
    float s = 0.f;
    for (int64_t j = lane; j < r.count; j += 32) {
      int64_t rest = j, off = base;
      for (int d = r.red_rank - 1; d >= 0; --d) {
        off += (rest % r.red_dims[d]) * r.red_strides[d];
        rest /= r.red_dims[d];
      }
      s += Load(x, off);
    }
    s = WarpSum(s);
    if (lane == 0) Store(y, o, s / static_cast<float>(r.count));
  }
}

}  // namespace

cudaError_t LaunchCast(cudaStream_t stream, DType from, const void* src, DType to, void* dst,
                       int64_t n) {
  if (n <= 0) return cudaSuccess;
  return Dispatch(from, [&](auto* a) {
    using A = std::remove_pointer_t<decltype(a)>;
    return Dispatch(to, [&](auto* b) {
      using B = std::remove_pointer_t<decltype(b)>;
      CastKernel<<<Blocks(n), kThreads, 0, stream>>>(static_cast<const A*>(src),
                                                     static_cast<B*>(dst), n);
      return cudaGetLastError();
    });
  });
}

cudaError_t LaunchUnary(cudaStream_t stream, DType t, int act, const void* x, void* y, int64_t n) {
  if (n <= 0) return cudaSuccess;
  return Dispatch(t, [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    UnaryKernel<<<Blocks(n), kThreads, 0, stream>>>(act, static_cast<const T*>(x),
                                                    static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchAffine(cudaStream_t stream, DType t, const Affine& a, const void* x, void* y,
                         int64_t n) {
  if (n <= 0) return cudaSuccess;
  return Dispatch(t, [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    AffineKernel<<<Blocks(n), kThreads, 0, stream>>>(a, static_cast<const T*>(x),
                                                     static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchScalarMul(cudaStream_t stream, DType t, const void* x, const float* s, void* y,
                            int64_t n) {
  if (n <= 0) return cudaSuccess;
  return Dispatch(t, [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    ScalarMulKernel<<<Blocks(n), kThreads, 0, stream>>>(static_cast<const T*>(x), s,
                                                        static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchBinary(cudaStream_t stream, DType t, int op, const void* a, const void* b,
                         void* y, const Broadcast& s, int64_t n) {
  if (n <= 0) return cudaSuccess;
  return Dispatch(t, [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    BinaryKernel<<<Blocks(n), kThreads, 0, stream>>>(
        op, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(y), s, n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchGather(cudaStream_t stream, DType t, const void* x, void* y, const Gather& g,
                         int64_t n) {
  if (n <= 0) return cudaSuccess;
  return Dispatch(t, [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    GatherKernel<<<Blocks(n), kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                     g, n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchSoftmax(cudaStream_t stream, DType t, const void* x, void* y, int64_t outer,
                          int64_t dim, int64_t inner) {
  if (outer * dim * inner <= 0) return cudaSuccess;
  return Dispatch(t, [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    const T* xt = static_cast<const T*>(x);
    T* yt = static_cast<T*>(y);
    if (inner == 1 && outer <= 0x7fffffff)
      SoftmaxRowKernel<<<static_cast<unsigned>(outer), kThreads, 0, stream>>>(xt, yt, dim);
    else
      SoftmaxColumnKernel<<<Blocks(outer * inner), kThreads, 0, stream>>>(xt, yt, outer, dim,
                                                                          inner);
    return cudaGetLastError();
  });
}

cudaError_t LaunchLayerNorm(cudaStream_t stream, DType t, const void* x, const float* scale,
                            const float* bias, void* y, int64_t rows, int64_t n, float eps) {
  if (rows <= 0 || n <= 0) return cudaSuccess;
  if (rows > 0x7fffffff) return cudaErrorInvalidValue;
  return Dispatch(t, [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    LayerNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(x), scale, bias, static_cast<T*>(y), n, eps);
    return cudaGetLastError();
  });
}

cudaError_t LaunchReduceMean(cudaStream_t stream, DType t, const void* x, void* y,
                             const Reduction& r, int64_t n) {
  if (n <= 0) return cudaSuccess;
  return Dispatch(t, [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    ReduceMeanKernel<<<Blocks(n * 32), kThreads, 0, stream>>>(static_cast<const T*>(x),
                                                              static_cast<T*>(y), r, n);
    return cudaGetLastError();
  });
}

}  // namespace verisub::runtime::cuda_backend
