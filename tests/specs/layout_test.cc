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
// A piece of one image along its channels is contiguous plain, and blocked on whole blocks; at
// its offset in elements (the blocks of the cut channels lie as the plain layout's rows). Batches
// of more than one image, channels-last, a cut inside a block, or a cut along a later axis of
// more than one plane are not; nor is the whole tensor.
TEST(LayoutTest, ContiguousPiecesOfOneImage) {
  const std::vector<int64_t> x = {1, 64, 5, 7};
  EXPECT_EQ(ContiguousPieceOffset(x, {1, 16, 5, 7}, {0, 32, 0, 0}, Layout::kPlain), 32 * 35);
  EXPECT_EQ(ContiguousPieceOffset(x, {1, 16, 5, 7}, {0, 32, 0, 0}, Layout::kNCHW16c), 32 * 35);
  EXPECT_EQ(ContiguousPieceOffset(x, {1, 8, 5, 7}, {0, 8, 0, 0}, Layout::kNCHW8c), 8 * 35);
  EXPECT_FALSE(ContiguousPieceOffset(x, {1, 8, 5, 7}, {0, 8, 0, 0}, Layout::kNCHW16c));
  EXPECT_FALSE(ContiguousPieceOffset(x, {1, 16, 5, 7}, {0, 32, 0, 0}, Layout::kNHWC));
  EXPECT_FALSE(ContiguousPieceOffset({2, 64, 5, 7}, {2, 16, 5, 7}, {0, 32, 0, 0}, Layout::kPlain));
  // Rows of a single plane are contiguous; the same rows of 64 planes are not.
  EXPECT_EQ(ContiguousPieceOffset({1, 1, 5, 7}, {1, 1, 2, 7}, {0, 0, 3, 0}, Layout::kPlain), 21);
  EXPECT_FALSE(ContiguousPieceOffset(x, {1, 64, 2, 7}, {0, 0, 3, 0}, Layout::kPlain));
  EXPECT_FALSE(ContiguousPieceOffset(x, {1, 16, 2, 7}, {0, 0, 3, 0}, Layout::kPlain));
  EXPECT_FALSE(ContiguousPieceOffset(x, x, {0, 0, 0, 0}, Layout::kPlain));
  // A transformer's [1, tokens, 3 * d] split along its last axis: strided.
  EXPECT_FALSE(ContiguousPieceOffset({1, 128, 96}, {1, 128, 32}, {0, 0, 32}, Layout::kPlain));
}

}  // namespace verisub::specs
