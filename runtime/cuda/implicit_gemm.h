// Our own Tensor-Core convolution (issue 27, item 3; the implicit-GEMM patent in
// ../shared/seeds/): a 2-D convolution over NHWC float16 or bfloat16 tensors computed as a GEMM
// whose A operand is never materialized. Row m of A is output pixel (n, p, q) of the
// N*P*Q pixels, column k is filter tap (r, s, c) of the R*S*C taps (c fastest, so a KRSC filter is
// B's columns as stored) and A[m][k] = x[n, p*stride - pad + r*dilation, q*stride - pad +
// s*dilation, c], zero outside the image. The output [N,P,Q,K] is the GEMM's M x K result, with
// float32 accumulation and an epilogue of a per-channel bias, a residual of the output's shape
// and an activation.
//
// The schedule is the patent's: GEMM_M split into bm (blockIdx.y), tm (warps), om (fragments per
// warp) and im (the WMMA fragment's rows); GEMM_N into bn (blockIdx.x), tn, on and in; GEMM_K
// into ok (steps of the main loop) and ik (16, the fragment's depth) times the steps per tile.
// Tiles of A and B are staged in shared memory, double buffered (the next tile's global loads
// are in flight while the Tensor Cores work on the current one), with 16-byte vector loads
// (eight channels of one tap: C and K multiples of 8). The tile sizes are template parameters of
// the instances compiled (TileConfigs()); the search (TileCandidates, then timing on the GPU)
// picks one per shape.
//
// This header is plain C++ (the host code and the tests include it); implicit_gemm.cu holds the
// kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/cuda/kernels.h"

#ifdef __CUDACC__
#define VERISUB_HOST_DEVICE __host__ __device__
#else
#define VERISUB_HOST_DEVICE
#endif

namespace verisub::runtime::cuda_backend {

// One convolution instance (group 1): input [n, h, w, c], filter [k, r, s, c], output
// [n, p, q, k], all row-major.
struct ConvGeometry {
  int n = 1, h = 1, w = 1, c = 1;
  int k = 1, r = 1, s = 1;
  int p = 1, q = 1;
  int stride_h = 1, stride_w = 1;
  int pad_h = 0, pad_w = 0;  // top and left (the bottom and right follow from p and q)
  int dilation_h = 1, dilation_w = 1;

  VERISUB_HOST_DEVICE int64_t GemmM() const { return int64_t{n} * p * q; }
  VERISUB_HOST_DEVICE int64_t GemmN() const { return k; }
  VERISUB_HOST_DEVICE int64_t GemmK() const { return int64_t{r} * s * c; }
  double Flops() const { return 2.0 * static_cast<double>(GemmM()) * GemmN() * GemmK(); }
};

// Where row m of A (output pixel (n, p, q)) reads its image: the image's offset in x and the
// window's top-left corner (negative within the padding).
struct PixelOrigin {
  int64_t image = 0;
  int y0 = 0, x0 = 0;
};
VERISUB_HOST_DEVICE inline PixelOrigin OutputPixelOrigin(const ConvGeometry& g, int64_t m) {
  const int64_t q = m % g.q, np = m / g.q;
  const int64_t p = np % g.p, n = np / g.p;
  PixelOrigin o;
  o.image = n * g.h * g.w * g.c;
  o.y0 = static_cast<int>(p * g.stride_h - g.pad_h);
  o.x0 = static_cast<int>(q * g.stride_w - g.pad_w);
  return o;
}

// The offset in x of A[m][kk] for the row's origin, tap kk = (r * s_extent + s) * c + channel;
// -1 where the tap falls in the padding.
VERISUB_HOST_DEVICE inline int64_t TapOffset(const ConvGeometry& g, const PixelOrigin& o,
                                             int64_t kk) {
  const int64_t c = kk % g.c, rs = kk / g.c;
  const int y = o.y0 + static_cast<int>(rs / g.s) * g.dilation_h;
  const int x = o.x0 + static_cast<int>(rs % g.s) * g.dilation_w;
  if (y < 0 || y >= g.h || x < 0 || x >= g.w) return -1;
  return o.image + (static_cast<int64_t>(y) * g.w + x) * g.c + c;
}

// A[m][kk] as one call (the tests compute a convolution through it on the CPU).
VERISUB_HOST_DEVICE inline int64_t ImplicitGemmOffset(const ConvGeometry& g, int64_t m,
                                                      int64_t kk) {
  return TapOffset(g, OutputPixelOrigin(g, m), kk);
}

// Output [p, q] of an input extent with padding, stride and dilation as ONNX computes them.
inline int ConvOutputExtent(int in, int kernel, int pad_begin, int pad_end, int stride,
                            int dilation) {
  return (in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride + 1;
}

// Host conversions of the two storage types (tests and benchmarks fill and read buffers).
template <class T>
float StoredToFloat(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else
    return __bfloat162float(v);
}
template <class T>
T FloatToStored(float v) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half(v);
  else
    return __float2bfloat16(v);
}

// The patent's tile parameters: WMMA fragments of im x in (x 16 deep), a tm x tn grid of warps
// per block, om x on fragments per warp, k_steps fragments deep per shared-memory tile.
struct TileConfig {
  int im = 16, in = 16;
  int tm = 2, tn = 2;
  int om = 2, on = 2;
  int k_steps = 2;

  int BlockM() const { return tm * om * im; }
  int BlockN() const { return tn * on * in; }
  int BlockK() const { return 16 * k_steps; }
  int Threads() const { return 32 * tm * tn; }
  // Shared memory of the two stages (A and B tiles, rows padded by 8 elements).
  int SharedBytes() const { return 2 * (BlockM() + BlockN()) * (BlockK() + 8) * 2; }
  std::string Name() const;  // "m16n16k16_w2x2_f2x2_k32"
  bool operator==(const TileConfig& o) const {
    return im == o.im && in == o.in && tm == o.tm && tn == o.tn && om == o.om && on == o.on &&
           k_steps == o.k_steps;
  }
};

// The instances compiled into implicit_gemm.cu (im, in, tm, tn, om, on, k_steps), per storage
// type alike: for each WMMA shape, a square-ish warp grid, one taller, one wider, and a small one
// for small layers. Every one fits the 48 KiB of static shared memory (SharedBytes at most 46080).
#define VERISUB_IMPLICIT_GEMM_TILES(X) \
  X(16, 16, 2, 2, 2, 2, 2)             \
  X(16, 16, 4, 2, 2, 2, 2)             \
  X(16, 16, 2, 4, 2, 2, 2)             \
  X(16, 16, 2, 2, 1, 1, 2)             \
  X(32, 8, 2, 2, 2, 2, 2)              \
  X(32, 8, 4, 2, 2, 2, 2)              \
  X(32, 8, 2, 4, 2, 2, 2)              \
  X(32, 8, 2, 2, 1, 1, 2)              \
  X(8, 32, 2, 2, 2, 2, 2)              \
  X(8, 32, 4, 2, 2, 2, 2)              \
  X(8, 32, 2, 4, 2, 2, 2)              \
  X(8, 32, 2, 2, 1, 1, 2)

const std::vector<TileConfig>& TileConfigs();

// Whether the kernels compute `g` (no GPU needed): channels and filters multiples of 8 (the
// vector loads and stores), positive extents, indices within int32 per tile row; an empty string
// when they do, else why not.
std::string ImplicitGemmUnsupported(const ConvGeometry& g);

// The patent's search space for `g`: the fragment shape by how GEMM_M divides (a multiple of 32:
// im in {8, 16, 32}; of 16: {8, 16}; else 8) with in = 256 / im, then every compiled instance of
// those shapes whose block tile is not wholly larger than the problem (its rows or columns more
// than twice GEMM_M or GEMM_N rounded up to 32, unless it is the smallest of its shape). In the
// order of TileConfigs(); never empty for a supported geometry.
std::vector<TileConfig> TileCandidates(const ConvGeometry& g);

// Enqueues y = act(conv(x, w) + bias + residual) on `stream` with the instance `tile` in storage
// type `t` (kF16 or kBF16); bias (float32, k values) and residual (y's shape and type) may be
// null; act is a specs::Activation code as in kernels.h. cudaErrorInvalidValue for a tile not in
// TileConfigs(), a type not 16-bit or a geometry ImplicitGemmUnsupported rejects. No
// synchronization: capturable in a CUDA graph.
cudaError_t LaunchImplicitGemmConv(cudaStream_t stream, DType t, const TileConfig& tile,
                                   const ConvGeometry& g, const void* x, const void* w,
                                   const float* bias, const void* residual, int act, void* y);

}  // namespace verisub::runtime::cuda_backend
