#include "runtime/cuda/implicit_gemm.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "runtime/cuda/cuda_util.h"
#include "runtime/cuda/implicit_gemm_search.h"

namespace verisub::runtime::cuda_backend {

std::string TileConfig::Name() const {
  return "m" + std::to_string(im) + "n" + std::to_string(in) + "k16_w" + std::to_string(tm) + "x" +
         std::to_string(tn) + "_f" + std::to_string(om) + "x" + std::to_string(on) + "_k" +
         std::to_string(BlockK());
}

const std::vector<TileConfig>& TileConfigs() {
  static const std::vector<TileConfig> configs = {
#define VERISUB_TILE_ENTRY(im, in, tm, tn, om, on, ks) TileConfig{im, in, tm, tn, om, on, ks},
      VERISUB_IMPLICIT_GEMM_TILES(VERISUB_TILE_ENTRY)
#undef VERISUB_TILE_ENTRY
  };
  return configs;
}

std::string ImplicitGemmUnsupported(const ConvGeometry& g) {
  for (int v : {g.n, g.h, g.w, g.c, g.k, g.r, g.s, g.p, g.q, g.stride_h, g.stride_w, g.dilation_h,
                g.dilation_w})
    if (v <= 0) return "an extent, stride or dilation that is not positive";
  if (g.pad_h < 0 || g.pad_w < 0) return "negative padding";
  if (g.c % 8 != 0) return "input channels not a multiple of 8 (" + std::to_string(g.c) + ")";
  if (g.k % 8 != 0) return "output channels not a multiple of 8 (" + std::to_string(g.k) + ")";
  // Offsets are computed in 64 bits; the grid's rows of blocks are limited to 65535.
  const int64_t rows = (g.GemmM() + 15) / 16;
  if (rows > 65535) return "more output pixels than the grid holds";
  return "";
}

std::vector<TileConfig> TileCandidates(const ConvGeometry& g) {
  std::vector<TileConfig> out;
  if (!ImplicitGemmUnsupported(g).empty()) return out;
  const int64_t m = g.GemmM(), n = g.GemmN();
  std::vector<int> shapes = {8};  // im; in = 256 / im
  if (m % 16 == 0) shapes.push_back(16);
  if (m % 32 == 0) shapes.push_back(32);
  auto round32 = [](int64_t v) { return (v + 31) / 32 * 32; };
  for (int im : shapes) {
    const TileConfig* smallest = nullptr;
    size_t before = out.size();
    for (const TileConfig& t : TileConfigs()) {
      if (t.im != im) continue;
      if (!smallest || t.BlockM() * t.BlockN() < smallest->BlockM() * smallest->BlockN())
        smallest = &t;
      if (t.BlockM() > 2 * round32(m) || t.BlockN() > 2 * round32(n)) continue;
      out.push_back(t);
    }
    if (out.size() == before && smallest) out.push_back(*smallest);
  }
  // In the order of TileConfigs().
  const std::vector<TileConfig>& all = TileConfigs();
  auto index = [&](const TileConfig& t) {
    return std::find(all.begin(), all.end(), t) - all.begin();
  };
  std::sort(out.begin(), out.end(),
            [&](const TileConfig& a, const TileConfig& b) { return index(a) < index(b); });
  return out;
}

std::string TileKey(DType t, const ConvGeometry& g, const TileConfig& tile) {
  std::string key = t == DType::kF16 ? "igemm f16" : t == DType::kBF16 ? "igemm bf16" : "igemm f32";
  const std::pair<const char*, int> fields[] = {
      {"n", g.n},      {"h", g.h},           {"w", g.w},          {"c", g.c},
      {"k", g.k},      {"r", g.r},           {"s", g.s},          {"p", g.p},
      {"q", g.q},      {"u", g.stride_h},    {"v", g.stride_w},   {"ph", g.pad_h},
      {"pw", g.pad_w}, {"dh", g.dilation_h}, {"dw", g.dilation_w}};
  for (const auto& [name, value] : fields) key += std::string(" ") + name + std::to_string(value);
  return key + " " + tile.Name();
}

StatusOr<std::vector<TileTiming>> SearchTiles(cudaStream_t stream, DType t, const ConvGeometry& g,
                                              const void* x, const void* w, void* y,
                                              CostTable* table) {
  if (std::string why = ImplicitGemmUnsupported(g); !why.empty())
    return InvalidArgument("implicit GEMM convolution: " + why);
  if (t != DType::kF16 && t != DType::kBF16)
    return InvalidArgument("implicit GEMM convolution: float16 or bfloat16 storage only");
  std::vector<TileTiming> out;
  for (const TileConfig& tile : TileCandidates(g)) {
    TileTiming timing;
    timing.tile = tile;
    const std::string key = TileKey(t, g, tile);
    if (std::optional<double> us = table ? table->Find(key) : std::nullopt) {
      timing.seconds = *us * 1e-6;
      timing.from_table = true;
    } else {
      int launches = 0;
      auto seconds = cuda_util::MedianLaunchSeconds(
          stream,
          [&]() -> Status {
            return cuda_util::Check(
                LaunchImplicitGemmConv(stream, t, tile, g, x, w, nullptr, nullptr, 0, y),
                "implicit GEMM convolution");
          },
          cuda_util::TimingOptions(), &launches);
      if (!seconds.ok()) return seconds.status().WithContext("tile " + tile.Name());
      timing.seconds = *seconds;
      if (table) table->Insert(key, *seconds * 1e6, launches);
    }
    out.push_back(timing);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TileTiming& a, const TileTiming& b) { return a.seconds < b.seconds; });
  return out;
}

}  // namespace verisub::runtime::cuda_backend
