// The implicit-GEMM Tensor-Core convolution (see implicit_gemm.h): one block computes a
// BlockM x BlockN tile of the output (bm = blockIdx.y, bn = blockIdx.x), its tm x tn warps each
// om x on WMMA fragments of im x in, walking GEMM_K in tiles of BlockK staged through shared
// memory in two buffers (register-staged: the next tile's 16-byte global loads are issued before
// the Tensor Cores work on the current one and stored after).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include "runtime/cuda/device_math.cuh"
#include "runtime/cuda/implicit_gemm.h"

namespace verisub::runtime::cuda_backend {
namespace {

using namespace nvcuda;

template <int IM, int IN, int TM, int TN, int OM, int ON, int KS>
struct Shape {
  static constexpr int kBM = TM * OM * IM, kBN = TN * ON * IN, kBK = 16 * KS;
  static constexpr int kThreads = 32 * TM * TN;
  static constexpr int kLd = kBK + 8;         // shared row length in elements (padded)
  static constexpr int kVecsPerRow = kBK / 8;  // 16-byte vectors of eight elements
  static constexpr int kAVecs = kBM * kVecsPerRow, kBVecs = kBN * kVecsPerRow;
  static constexpr int kAPer = (kAVecs + kThreads - 1) / kThreads;  // per thread
  static constexpr int kBPer = (kBVecs + kThreads - 1) / kThreads;
  static constexpr int kStage = (kBM + kBN) * kLd;  // elements of one buffer (A then B)
};

template <class T, int IM, int IN, int TM, int TN, int OM, int ON, int KS>
__global__ void __launch_bounds__(32 * TM * TN)
    ImplicitGemmKernel(ConvGeometry g, const T* __restrict__ x, const T* __restrict__ w,
                       const float* __restrict__ bias, const T* __restrict__ residual, int act,
                       T* __restrict__ y) {
  using S = Shape<IM, IN, TM, TN, OM, ON, KS>;
  static_assert(2 * S::kStage * sizeof(T) <= 48 * 1024, "static shared memory");
  static_assert(2 * S::kStage * sizeof(T) >= TM * TN * IM * IN * sizeof(float),
                "the epilogue's scratch fits the tiles' memory");
  __shared__ __align__(128) T smem[2 * S::kStage];
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int warp_m = warp / TN, warp_n = warp % TN;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * S::kBM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * S::kBN;
  const int64_t gm = g.GemmM(), gn = g.GemmN(), gk = g.GemmK();

  // The output pixel of each A row this thread loads, fixed over the K loop; `a_row` false past
  // the last row.
  PixelOrigin a_origin[S::kAPer];
  bool a_row[S::kAPer];
#pragma unroll
  for (int i = 0; i < S::kAPer; ++i) {
    const int v = tid + i * S::kThreads;
    const int64_t m = m0 + v / S::kVecsPerRow;
    a_row[i] = v < S::kAVecs && m < gm;
    a_origin[i] = OutputPixelOrigin(g, a_row[i] ? m : 0);
  }
  uint4 a_reg[S::kAPer], b_reg[S::kBPer];
  // Global loads of the K tile starting at k0 into registers, zeros outside.
  auto load = [&](int64_t k0) {
#pragma unroll
    for (int i = 0; i < S::kAPer; ++i) {
      const int v = tid + i * S::kThreads;
      const int64_t kk = k0 + (v % S::kVecsPerRow) * 8;
      uint4 val = make_uint4(0, 0, 0, 0);
      if (a_row[i] && kk < gk) {
        const int64_t offset = TapOffset(g, a_origin[i], kk);  // eight channels of one tap
        if (offset >= 0) val = *reinterpret_cast<const uint4*>(x + offset);
      }
      a_reg[i] = val;
    }
#pragma unroll
    for (int i = 0; i < S::kBPer; ++i) {
      const int v = tid + i * S::kThreads;
      const int64_t n = n0 + v / S::kVecsPerRow;
      const int64_t kk = k0 + (v % S::kVecsPerRow) * 8;
      uint4 val = make_uint4(0, 0, 0, 0);
      if (v < S::kBVecs && n < gn && kk < gk)
        val = *reinterpret_cast<const uint4*>(w + n * gk + kk);
      b_reg[i] = val;
    }
  };
  // The registers into buffer `stage`: A rows [BM][Ld], then B rows (one per output channel,
  // K contiguous: WMMA's column-major matrix_b) [BN][Ld].
  auto store = [&](int stage) {
    T* a = smem + stage * S::kStage;
    T* b = a + S::kBM * S::kLd;
#pragma unroll
    for (int i = 0; i < S::kAPer; ++i) {
      const int v = tid + i * S::kThreads;
      if (v < S::kAVecs)
        *reinterpret_cast<uint4*>(a + (v / S::kVecsPerRow) * S::kLd + (v % S::kVecsPerRow) * 8) =
            a_reg[i];
    }
#pragma unroll
    for (int i = 0; i < S::kBPer; ++i) {
      const int v = tid + i * S::kThreads;
      if (v < S::kBVecs)
        *reinterpret_cast<uint4*>(b + (v / S::kVecsPerRow) * S::kLd + (v % S::kVecsPerRow) * 8) =
            b_reg[i];
    }
  };

  wmma::fragment<wmma::accumulator, IM, IN, 16, float> acc[OM][ON];
#pragma unroll
  for (int i = 0; i < OM; ++i)
#pragma unroll
    for (int j = 0; j < ON; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  const int64_t k_tiles = (gk + S::kBK - 1) / S::kBK;
  load(0);
  store(0);
  __syncthreads();
  for (int64_t t = 0; t < k_tiles; ++t) {
    const int stage = static_cast<int>(t & 1);
    if (t + 1 < k_tiles) load((t + 1) * S::kBK);  // in flight during the MMAs below
    const T* a = smem + stage * S::kStage;
    const T* b = a + S::kBM * S::kLd;
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      wmma::fragment<wmma::matrix_a, IM, IN, 16, T, wmma::row_major> fa[OM];
      wmma::fragment<wmma::matrix_b, IM, IN, 16, T, wmma::col_major> fb[ON];
#pragma unroll
      for (int i = 0; i < OM; ++i)
        wmma::load_matrix_sync(fa[i], a + (warp_m * OM * IM + i * IM) * S::kLd + ks * 16, S::kLd);
#pragma unroll
      for (int j = 0; j < ON; ++j)
        wmma::load_matrix_sync(fb[j], b + (warp_n * ON * IN + j * IN) * S::kLd + ks * 16, S::kLd);
#pragma unroll
      for (int i = 0; i < OM; ++i)
#pragma unroll
        for (int j = 0; j < ON; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    // The other buffer was last read in step t - 1, which every warp has left (the barrier
    // below it).
    if (t + 1 < k_tiles) store(stage ^ 1);
    __syncthreads();
  }

  // Epilogue, fragment by fragment through a per-warp scratch in the (now idle) tiles' memory:
  // bias, residual, activation, in the storage type; rows and channels past the end skipped.
  float* scratch = reinterpret_cast<float*>(smem) + warp * IM * IN;
#pragma unroll
  for (int i = 0; i < OM; ++i)
#pragma unroll
    for (int j = 0; j < ON; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], IN, wmma::mem_row_major);
      __syncwarp();
      const int64_t row0 = m0 + warp_m * OM * IM + i * IM;
      const int64_t col0 = n0 + warp_n * ON * IN + j * IN;
      for (int e = lane; e < IM * IN; e += 32) {
        const int64_t m = row0 + e / IN, n = col0 + e % IN;
        if (m >= gm || n >= gn) continue;
        float v = scratch[e];
        if (bias) v += bias[n];
        const int64_t o = m * gn + n;
        if (residual) v += Load(residual, o);
        Store(y, o, Act(act, v));
      }
      __syncwarp();
    }
}

template <class T, int IM, int IN, int TM, int TN, int OM, int ON, int KS>
cudaError_t LaunchInstance(cudaStream_t stream, const ConvGeometry& g, const void* x,
                           const void* w, const float* bias, const void* residual, int act,
                           void* y) {
  using S = Shape<IM, IN, TM, TN, OM, ON, KS>;
  const int64_t blocks_m = (g.GemmM() + S::kBM - 1) / S::kBM;
  const int64_t blocks_n = (g.GemmN() + S::kBN - 1) / S::kBN;
  if (blocks_m > 65535 || blocks_n > 65535) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(blocks_n), static_cast<unsigned>(blocks_m));
  ImplicitGemmKernel<T, IM, IN, TM, TN, OM, ON, KS><<<grid, S::kThreads, 0, stream>>>(
      g, static_cast<const T*>(x), static_cast<const T*>(w), bias,
      static_cast<const T*>(residual), act, static_cast<T*>(y));
  return cudaGetLastError();
}

template <class T>
cudaError_t LaunchTyped(cudaStream_t stream, const TileConfig& tile, const ConvGeometry& g,
                        const void* x, const void* w, const float* bias, const void* residual,
                        int act, void* y) {
#define VERISUB_TILE_CASE(im, in, tm, tn, om, on, ks)                                      \
  if (tile == TileConfig{im, in, tm, tn, om, on, ks})                                      \
    return LaunchInstance<T, im, in, tm, tn, om, on, ks>(stream, g, x, w, bias, residual, \
                                                         act, y);
  VERISUB_IMPLICIT_GEMM_TILES(VERISUB_TILE_CASE)
#undef VERISUB_TILE_CASE
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t LaunchImplicitGemmConv(cudaStream_t stream, DType t, const TileConfig& tile,
                                   const ConvGeometry& g, const void* x, const void* w,
                                   const float* bias, const void* residual, int act, void* y) {
  if (!ImplicitGemmUnsupported(g).empty()) return cudaErrorInvalidValue;
  if (t == DType::kF16)
    return LaunchTyped<__half>(stream, tile, g, x, w, bias, residual, act, y);
  if (t == DType::kBF16)
    return LaunchTyped<__nv_bfloat16>(stream, tile, g, x, w, bias, residual, act, y);
  return cudaErrorInvalidValue;
}

}  // namespace verisub::runtime::cuda_backend
