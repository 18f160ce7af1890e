// Layout algebra: element strides of the unblocked layouts, and which transposes only rename the
// dimensions of a buffer.
#include "specs/layout.h"

#include <gtest/gtest.h>

namespace verisub::specs {
namespace {

TEST(LayoutTest, StridesOfTheUnblockedLayouts) {
  const std::vector<int64_t> dims = {2, 3, 4, 5};
  EXPECT_EQ(*LayoutStrides(dims, Layout::kPlain), (std::vector<int64_t>{60, 20, 5, 1}));
  EXPECT_EQ(*LayoutStrides(dims, Layout::kNHWC), (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_EQ(*LayoutStrides(dims, Layout::kColMajor), (std::vector<int64_t>{60, 20, 1, 4}));
  EXPECT_FALSE(LayoutStrides(dims, Layout::kNCHW16c));
  EXPECT_FALSE(LayoutStrides({3, 4}, Layout::kNHWC));  // channels-last needs rank 4
}

TEST(LayoutTest, TransposesThatOnlyRenameDimensions) {
  const std::vector<int64_t> nchw = {2, 3, 4, 5};
  const std::vector<int> to_last = {0, 2, 3, 1}, to_first = {0, 3, 1, 2};
  // NCHW stored channels-last is NHWC stored plain, and back.
  EXPECT_TRUE(TransposeIsRelabeling(nchw, Layout::kNHWC, to_last, Layout::kPlain));
  EXPECT_TRUE(TransposeIsRelabeling({2, 4, 5, 3}, Layout::kPlain, to_first, Layout::kNHWC));
  // Not when both sides are plain, nor with the permutation the other way round.
  EXPECT_FALSE(TransposeIsRelabeling(nchw, Layout::kPlain, to_last, Layout::kPlain));
  EXPECT_FALSE(TransposeIsRelabeling(nchw, Layout::kNHWC, to_first, Layout::kPlain));
  // Swapping a matrix's last two dimensions: plain read as column-major.
  EXPECT_TRUE(TransposeIsRelabeling({3, 4}, Layout::kPlain, {1, 0}, Layout::kColMajor));
  // Moving a dimension of size 1 renames nothing that matters, in plain layouts.
  EXPECT_TRUE(TransposeIsRelabeling({1, 3, 4}, Layout::kPlain, {1, 0, 2}, Layout::kPlain));
  EXPECT_FALSE(TransposeIsRelabeling({2, 3, 4}, Layout::kPlain, {1, 0, 2}, Layout::kPlain));
  // Blocked layouts and malformed permutations never.
  EXPECT_FALSE(TransposeIsRelabeling(nchw, Layout::kNCHW8c, to_last, Layout::kPlain));
  EXPECT_FALSE(TransposeIsRelabeling(nchw, Layout::kNHWC, {0, 2, 3}, Layout::kPlain));
  EXPECT_FALSE(TransposeIsRelabeling(nchw, Layout::kNHWC, {0, 2, 3, 4}, Layout::kPlain));
}

}  // namespace
}  // namespace verisub::specs
