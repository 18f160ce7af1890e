// Typed data layouts: how a tensor's elements are laid out in memory. A property of a value in a
// prepared graph (chosen by the layout pass, honoured by backends), never of an operator's meaning:
// layouts are outside the op-set fingerprint, so layout work never invalidates a rules file.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace verisub::specs {

enum class Layout : uint8_t {
  kPlain,     // row-major in the logical dimension order: NCHW for images, NC, [.., M, K]
  kNHWC,      // channels last (rank 4)
  kNCHW8c,    // channels blocked by 8, padded: N, C/8, H, W, 8 (rank 4)
  kNCHW16c,   // channels blocked by 16, padded: N, C/16, H, W, 16 (rank 4)
  kColMajor,  // matrices (rank >= 2): the last two dimensions swapped in memory
  kNumLayouts,
};
inline constexpr int kNumLayouts = static_cast<int>(Layout::kNumLayouts);

// "plain", "nhwc", "nchw8c", "nchw16c", "col_major".
std::string_view LayoutName(Layout l);
std::optional<Layout> ParseLayout(std::string_view name);

// True when a tensor of `rank` can be stored in layout `l` (blocked and NHWC need rank 4,
// column-major rank >= 2; plain fits everything).
bool LayoutFitsRank(Layout l, int rank);

// Channel block of a blocked layout (8, 16), 1 otherwise.
int LayoutChannelBlock(Layout l);

// Element strides of a tensor of `dims` stored in `l`, for the layouts without blocks (plain,
// nhwc, col_major); nullopt for blocked layouts and ranks `l` does not fit.
std::optional<std::vector<int64_t>> LayoutStrides(const std::vector<int64_t>& dims, Layout l);

// True when y = transpose(x, perm) stored in `y_layout` is x's buffer stored in `x_layout` read
// as it is: the transpose only renames dimensions (channels-last NCHW read as NHWC, and back), so
// a backend runs it as a view. Dimensions of size 1 take any stride.
bool TransposeIsRelabeling(const std::vector<int64_t>& x_dims, Layout x_layout,
                           const std::vector<int>& perm, Layout y_layout);

// The offset in elements of y, the sub-tensor of x (`x_dims`) at `offsets` with `y_dims`, when y
// stored in `l` is one contiguous piece of x stored in `l` (a split of one image along its
// channels stored plain, or blocked with the piece on whole blocks: a backend runs it as a view
// of x's buffer); nullopt otherwise, and where y is x.
std::optional<int64_t> ContiguousPieceOffset(const std::vector<int64_t>& x_dims,
                                             const std::vector<int64_t>& y_dims,
                                             const std::vector<int64_t>& offsets, Layout l);

// Whether `pieces`, sub-tensors of x laid one after the other along `axis` from `start` (a
// split's outputs, a slice's one), are each one contiguous piece of x stored in `l`
// (ContiguousPieceOffset): the views a backend makes of x's buffer.
bool PiecesAreContiguous(const std::vector<int64_t>& x_dims,
                         const std::vector<std::vector<int64_t>>& pieces, int64_t axis,
                         int64_t start, Layout l);

// The layouts an operator's kernels accept for its inputs and produce for its outputs. The
// reference kernels take plain only; a backend may accept more (it says so when asked).
struct LayoutSupport {
  // Layouts the operator's kernel variants exist for; empty means plain only.
  std::vector<Layout> layouts;
  // True when the operator works elementwise on its data (relu, add of equal shapes): it can run
  // in any layout, producing its output in the layout of its inputs.
  bool layout_agnostic = false;
};

}  // namespace verisub::specs
