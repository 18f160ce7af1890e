// The CUDA backend's own kernels (kernels.cu): element-wise functions, per-channel affine maps
// with a residual and an activation, broadcasting binary operators, transposes, softmax, layer
// normalization, mean reductions and type conversions over row-major (NCHW) tensors stored in
// float32, float16 or bfloat16 (`DType`; arithmetic in float32, per-channel vectors and layer
// normalization's scale and bias always float32). Each launcher enqueues on `stream` and
// returns the launch's error; none synchronizes, so every one of them can be captured in a CUDA
// graph. Callers check shapes; these trust them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace verisub::runtime::cuda_backend {

inline constexpr int kMaxKernelRank = 6;

enum class DType { kF32 = 0, kF16 = 1, kBF16 = 2 };
inline int DTypeSize(DType t) { return t == DType::kF32 ? 4 : 2; }

// dst = src converted, n elements.
cudaError_t LaunchCast(cudaStream_t stream, DType from, const void* src, DType to, void* dst,
                       int64_t n);

// Activation codes are specs::Activation's values (0 none, 1 relu, ... 11 erf).
// y = act(x), n elements; y may be x.
cudaError_t LaunchUnary(cudaStream_t stream, DType t, int act, const void* x, void* y, int64_t n);

// y = act(x * scale[c] + shift[c] + z), c = (i / inner) % channels; scale, shift and z may each
// be null (absent); y may be x or z.
struct Affine {
  const float* scale = nullptr;
  const float* shift = nullptr;
  const void* z = nullptr;  // of the tensor's type
  int act = 0;
  int64_t channels = 1, inner = 1;
};
cudaError_t LaunchAffine(cudaStream_t stream, DType t, const Affine& a, const void* x, void* y,
                         int64_t n);

// y = x * s[0] for a device float32 scalar s.
cudaError_t LaunchScalarMul(cudaStream_t stream, DType t, const void* x, const float* s, void* y,
                            int64_t n);

// y = a op b with NumPy broadcasting: `dims` is y's shape (rank <= kMaxKernelRank) and
// `a_strides`/`b_strides` the element strides of a and b along y's axes (0 where broadcast).
enum BinaryOp { kBinaryAdd = 0, kBinarySub = 1, kBinaryMul = 2, kBinaryDiv = 3 };
struct Broadcast {
  int rank = 0;
  int64_t dims[kMaxKernelRank] = {};
  int64_t a_strides[kMaxKernelRank] = {};
  int64_t b_strides[kMaxKernelRank] = {};
};
cudaError_t LaunchBinary(cudaStream_t stream, DType t, int op, const void* a, const void* b,
                         void* y, const Broadcast& s, int64_t n);

// y[i] = x[sum_d i_d * x_strides[d]] over y's shape `dims` (a permutation, a strided gather).
struct Gather {
  int rank = 0;
  int64_t dims[kMaxKernelRank] = {};
  int64_t x_strides[kMaxKernelRank] = {};
  int64_t x_offset = 0;
};
cudaError_t LaunchGather(cudaStream_t stream, DType t, const void* x, void* y, const Gather& g,
                         int64_t n);

// Softmax along an axis of extent `dim`, the tensor seen as [outer, dim, inner].
cudaError_t LaunchSoftmax(cudaStream_t stream, DType t, const void* x, void* y, int64_t outer,
                          int64_t dim, int64_t inner);

// Layer normalization of `rows` rows of n elements: (x - mean) / sqrt(var + eps) * scale + bias.
cudaError_t LaunchLayerNorm(cudaStream_t stream, DType t, const void* x, const float* scale,
                            const float* bias, void* y, int64_t rows, int64_t n, float eps);

// y[o] = mean over `count` elements x[base(o) + sum_r j_r * red_strides[r]]: base(o) walks y's
// shape `dims` with `x_strides`; the reduced axes are `red_dims`.
struct Reduction {
  Gather outer;
  int red_rank = 0;
  int64_t red_dims[kMaxKernelRank] = {};
  int64_t red_strides[kMaxKernelRank] = {};
  int64_t count = 1;
};
cudaError_t LaunchReduceMean(cudaStream_t stream, DType t, const void* x, void* y,
                             const Reduction& r, int64_t n);

}  // namespace verisub::runtime::cuda_backend
