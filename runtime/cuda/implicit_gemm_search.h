// The tile search of the implicit-GEMM convolution (implicit_gemm.h, the patent's parameter
// search): every candidate tile of a geometry timed on the GPU, the times kept in a cost table
// per GPU so a shape is searched once.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/cost/cost_table.h"
#include "runtime/cuda/implicit_gemm.h"

namespace verisub::runtime::cuda_backend {

struct TileTiming {
  TileConfig tile;
  double seconds = 0;
  bool from_table = false;  // found in the table, not measured now
};

// The table key of one (type, geometry, tile): "igemm f16 n1 h56 w56 c64 k64 r3 s3 p56 q56 u1 v1
// ph1 pw1 dh1 dw1 m16n16k16_w2x2_f2x2_k32".
std::string TileKey(DType t, const ConvGeometry& g, const TileConfig& tile);

// Times every candidate of TileCandidates(g) in type `t` (kF16 or kBF16) on `stream`
// (cuda_util::MedianLaunchSeconds) with the device buffers x, w and y of g's shapes, taking the
// times `table` already holds (null: none) and inserting those measured. Fastest first (ties in
// the order of TileConfigs()); an error naming the tile when a launch fails, or when the geometry
// is unsupported (ImplicitGemmUnsupported says why).
StatusOr<std::vector<TileTiming>> SearchTiles(cudaStream_t stream, DType t, const ConvGeometry& g,
                                              const void* x, const void* w, void* y,
                                              CostTable* table = nullptr);

}  // namespace verisub::runtime::cuda_backend
