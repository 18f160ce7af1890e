// Names and rank rules of the typed layouts.
#include "specs/layout.h"

#include <utility>

namespace verisub::specs {
namespace {

constexpr std::string_view kNames[kNumLayouts] = {"plain", "nhwc", "nchw8c", "nchw16c",
                                                  "col_major"};

}  // namespace

std::string_view LayoutName(Layout l) {
  int i = static_cast<int>(l);
  return i >= 0 && i < kNumLayouts ? kNames[i] : std::string_view("invalid");
}

std::optional<Layout> ParseLayout(std::string_view name) {
  for (int i = 0; i < kNumLayouts; ++i)
    if (kNames[i] == name) return static_cast<Layout>(i);
  return std::nullopt;
}

bool LayoutFitsRank(Layout l, int rank) {
  switch (l) {
    case Layout::kPlain:
      return true;
    case Layout::kNHWC:
    case Layout::kNCHW8c:
    case Layout::kNCHW16c:
      return rank == 4;
    case Layout::kColMajor:
      return rank >= 2;
    case Layout::kNumLayouts:
      break;
  }
  return false;
}

int LayoutChannelBlock(Layout l) {
  if (l == Layout::kNCHW8c) return 8;
  if (l == Layout::kNCHW16c) return 16;
  return 1;
}

std::optional<std::vector<int64_t>> LayoutStrides(const std::vector<int64_t>& dims, Layout l) {
  const int rank = static_cast<int>(dims.size());
  if (!LayoutFitsRank(l, rank) || LayoutChannelBlock(l) > 1) return std::nullopt;
  // The dimensions from outermost to innermost in memory.
  std::vector<int> order(rank);
  for (int d = 0; d < rank; ++d) order[d] = d;
  if (l == Layout::kNHWC) order = {0, 2, 3, 1};
  if (l == Layout::kColMajor) std::swap(order[rank - 2], order[rank - 1]);
  std::vector<int64_t> strides(rank);
  int64_t step = 1;
  for (int k = rank - 1; k >= 0; --k) {
    strides[order[k]] = step;
    step *= dims[order[k]];
  }
  return strides;
}

std::optional<int64_t> ContiguousPieceOffset(const std::vector<int64_t>& x_dims,
                                             const std::vector<int64_t>& y_dims,
                                             const std::vector<int64_t>& offsets, Layout l) {
  const size_t rank = x_dims.size();
  if (y_dims.size() != rank || offsets.size() != rank) return std::nullopt;
  const int64_t block = LayoutChannelBlock(l);
  if (l != Layout::kPlain && (block == 1 || rank != 4)) return std::nullopt;
  // The first axis cut: every axis before it of extent 1, every axis after it whole.
  size_t cut = 0;
  while (cut < rank && y_dims[cut] == x_dims[cut]) ++cut;
  if (cut == rank) return std::nullopt;
  for (size_t k = 0; k < cut; ++k)
    if (x_dims[k] != 1) return std::nullopt;
  for (size_t k = cut + 1; k < rank; ++k)
    if (y_dims[k] != x_dims[k] || offsets[k] != 0) return std::nullopt;
  if (offsets[cut] < 0 || offsets[cut] + y_dims[cut] > x_dims[cut]) return std::nullopt;
  if (block > 1 && (cut != 1 || offsets[1] % block != 0 || y_dims[1] % block != 0))
    return std::nullopt;
  // One image: a blocked layout's blocks of the cut channels lie as the plain layout's rows.
  int64_t inner = 1;
  for (size_t k = cut + 1; k < rank; ++k) inner *= x_dims[k];
  return offsets[cut] * inner;
}

bool PiecesAreContiguous(const std::vector<int64_t>& x_dims,
                         const std::vector<std::vector<int64_t>>& pieces, int64_t axis,
                         int64_t start, Layout l) {
  if (axis < 0 || axis >= static_cast<int64_t>(x_dims.size())) return false;
  for (const std::vector<int64_t>& y : pieces) {
    if (y.size() != x_dims.size()) return false;
    std::vector<int64_t> offsets(x_dims.size(), 0);
    offsets[axis] = start;
    if (!ContiguousPieceOffset(x_dims, y, offsets, l)) return false;
    start += y[axis];
  }
  return true;
}

bool TransposeIsRelabeling(const std::vector<int64_t>& x_dims, Layout x_layout,
                           const std::vector<int>& perm, Layout y_layout) {
  if (perm.size() != x_dims.size()) return false;
  std::vector<int64_t> y_dims;
  for (int p : perm) {
    if (p < 0 || p >= static_cast<int>(x_dims.size())) return false;
    y_dims.push_back(x_dims[p]);
  }
  const auto xs = LayoutStrides(x_dims, x_layout);
  const auto ys = LayoutStrides(y_dims, y_layout);
  if (!xs || !ys) return false;
  // y's element i is x's element j with j[perm[d]] = i[d]: y's stride along d must be x's along
  // perm[d].
  for (size_t d = 0; d < perm.size(); ++d)
    if (y_dims[d] != 1 && (*ys)[d] != (*xs)[perm[d]]) return false;
  return true;
}

}  // namespace verisub::specs
