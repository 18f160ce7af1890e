// Index-level normal forms: true rules the axioms leave unknown are proved (bias and scale moves,
// scales through a matmul, matmul algebra, fused activations, congruence through operators
// outside the fragment), false ones never are, sums are canonical up to the naming and order of
// their bound coordinates, and the prover uses the procedure only where Z3 gives up.
#include "verify/index_level.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tests/verify/rule_text.h"
#include "verify/prover.h"

namespace verisub::verify {
namespace {

using testing::Rule;

bool Proves(const std::string& text, const std::vector<int>& ranks) {
  IndexLevelResult r = ProveAtIndexLevel(Rule(text), ranks);
  return r.proved;
}

TEST(IndexLevelTest, ProvesTrueRulesTheAxiomsLeaveUnknown) {
  // Each of these is `unknown` from the axioms (data/rules/taso.unproved.txt).
  EXPECT_TRUE(Proves("(bias_add[axis=1] (ewadd ?a ?b) ?c) => (ewadd (bias_add[axis=1] ?a ?c) ?b)",
                     {4, 4, 1}));
  EXPECT_TRUE(
      Proves("(channel_scale[axis=0] (ewmul ?a ?b) ?c) => (ewmul (channel_scale[axis=0] ?a ?c) ?b)",
             {2, 2, 1}));
  EXPECT_TRUE(
      Proves("(channel_scale[axis=0] (matmul[activation=none] ?a ?b) ?c) => "
             "(matmul[activation=none] (channel_scale[axis=0] ?a ?c) ?b)",
             {2, 2, 1}));
  EXPECT_TRUE(
      Proves("(channel_scale[axis=0] (transpose[perm=[1,0]] ?a) ?b) => "
             "(transpose[perm=[1,0]] (channel_scale[axis=1] ?a ?b))",
             {2, 1}));
  EXPECT_TRUE(
      Proves("(channel_scale[axis=0] (smul ?a ?b) ?c) => (smul (channel_scale[axis=0] ?a ?c) ?b)",
             {2, 0, 1}));
}

TEST(IndexLevelTest, MatmulAlgebraWithCanonicalSums) {
  // Associativity: a sum inside a sum merges into one over both coordinates, whatever their
  // order and names.
  EXPECT_TRUE(
      Proves("(matmul[activation=none] ?a (matmul[activation=none] ?b ?c)) => "
             "(matmul[activation=none] (matmul[activation=none] ?a ?b) ?c)",
             {2, 2, 2}));
  EXPECT_TRUE(
      Proves("(transpose[perm=[1,0]] (matmul[activation=none] ?a ?b)) => "
             "(matmul[activation=none] (transpose[perm=[1,0]] ?b) (transpose[perm=[1,0]] ?a))",
             {2, 2}));
  // Linearity, a fused activation, a scalar through the product.
  EXPECT_TRUE(
      Proves("(matmul[activation=none] (ewadd ?a ?b) ?c) => "
             "(ewadd (matmul[activation=none] ?a ?c) (matmul[activation=none] ?b ?c))",
             {2, 2, 2}));
  EXPECT_TRUE(
      Proves("(matmul[activation=relu] ?a ?b) => (relu (matmul[activation=none] ?a ?b))", {2, 2}));
  EXPECT_TRUE(Proves(
      "(matmul[activation=none] (smul ?a ?s) ?b) => (smul (matmul[activation=none] ?a ?b) ?s)",
      {2, 0, 2}));
  // A product of two sums equals the sum of the products: (ab)(cd) elementwise.
  EXPECT_TRUE(
      Proves("(ewmul (matmul[activation=none] ?a ?b) (matmul[activation=none] ?c ?d)) => "
             "(ewmul (matmul[activation=none] ?c ?d) (matmul[activation=none] ?a ?b))",
             {2, 2, 2, 2}));
}

TEST(IndexLevelTest, IdentitiesMeansAndCountedSums) {
  // An identity matrix is a Kronecker delta, which a sum over its coordinate substitutes.
  EXPECT_TRUE(Proves("(matmul[activation=none] (const_imatmul ?a) ?b) => ?b", {2, 2}));
  EXPECT_TRUE(
      Proves("(matmul[activation=none] (matmul[activation=none] (const_imatmul ?a) ?b) "
             "(const_imatmul ?a)) => ?b",
             {2, 2}));
  EXPECT_FALSE(
      Proves("(matmul[activation=none] (const_imatmul ?a) ?b) => (const_imatmul ?b)", {2, 2}));
  EXPECT_TRUE(Proves("(ewmul ?a (const_ones ?a)) => ?a", {3}));
  // A mean is 1/N times a sum; a term the sum does not index is counted N times.
  EXPECT_TRUE(
      Proves("(bias_add[axis=1] (reduce_mean[axes=12,keepdims=1] ?a) ?b) => "
             "(reduce_mean[axes=12,keepdims=1] (bias_add[axis=1] ?a ?b))",
             {4, 1}));
  EXPECT_TRUE(
      Proves("(channel_scale[axis=1] (reduce_mean[axes=12,keepdims=0] ?a) ?b) => "
             "(reduce_mean[axes=12,keepdims=0] (channel_scale[axis=1] ?a ?b))",
             {4, 1}));
  EXPECT_TRUE(
      Proves("(reduce_mean[axes=12,keepdims=1] (reduce_mean[axes=12,keepdims=1] ?a)) => "
             "(reduce_mean[axes=12,keepdims=1] ?a)",
             {4}));
  EXPECT_FALSE(
      Proves("(reduce_mean[axes=12,keepdims=1] (ewmul ?a ?a)) => "
             "(ewmul (reduce_mean[axes=12,keepdims=1] ?a) (reduce_mean[axes=12,keepdims=1] ?a))",
             {4}));
  // Over axis 1 (mask 2) the left bias has the kept axis's one element and the right one the
  // reduced axis's: both sides type-check only where that axis is 1, and there they agree.
  EXPECT_TRUE(
      Proves("(bias_add[axis=1] (reduce_mean[axes=2,keepdims=1] ?a) ?b) => "
             "(reduce_mean[axes=2,keepdims=1] (bias_add[axis=1] ?a ?b))",
             {3, 1}));
  EXPECT_FALSE(
      Proves("(bias_add[axis=0] (reduce_mean[axes=2,keepdims=1] ?a) ?b) => "
             "(reduce_mean[axes=2,keepdims=1] (bias_add[axis=1] ?a ?b))",
             {3, 1}));
}

TEST(IndexLevelTest, ConvolutionsAndPools) {
  const std::string conv = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";
  const std::string conv2 = "conv2d[stride_h=2,stride_w=2,padding=same,activation=none,group=1]";
  const std::string dw = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=dw]";
  // A scale of output channels is a scale of the kernels; of the batch, of the input.
  EXPECT_TRUE(Proves("(channel_scale[axis=1] (" + conv2 + " ?a ?b) ?c) => (" + conv2 +
                         " ?a (channel_scale[axis=0] ?b ?c))",
                     {4, 4, 1}));
  EXPECT_TRUE(Proves("(channel_scale[axis=0] (" + dw + " ?a ?b) ?c) => (" + dw +
                         " (channel_scale[axis=0] ?a ?c) ?b)",
                     {4, 4, 1}));
  // Linear in each operand, padding included (a zero padded position contributes zero).
  EXPECT_TRUE(
      Proves("(" + conv + " (ewadd ?a ?b) ?c) => (ewadd (" + conv + " ?a ?c) (" + conv + " ?b ?c))",
             {4, 4, 4}));
  EXPECT_TRUE(
      Proves("(" + conv + " ?a (smul ?b ?c)) => (smul (" + conv + " ?a ?b) ?c)", {4, 4, 0}));
  // A bias on the input is not a bias on the output where the window reads padding.
  EXPECT_FALSE(Proves(
      "(" + conv + " (bias_add[axis=1] ?a ?b) ?c) => (bias_add[axis=1] (" + conv + " ?a ?c) ?b)",
      {4, 1, 4}));
  EXPECT_FALSE(Proves("(" + conv + " ?a ?b) => (" + conv2 + " ?a ?b)", {4, 4}));
  // An average pool is a depthwise convolution with the pool constant.
  EXPECT_TRUE(Proves(
      "(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=dw] ?a "
      "(const_pool[kernel_h=3,kernel_w=3] ?a)) => "
      "(pool_avg[kernel_h=3,kernel_w=3,stride_h=1,stride_w=1,padding=same,activation=none] ?a)",
      {4}));
  EXPECT_FALSE(Proves(
      "(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=dw] ?a "
      "(const_pool[kernel_h=3,kernel_w=3] ?a)) => "
      "(pool_avg[kernel_h=3,kernel_w=3,stride_h=2,stride_w=2,padding=same,activation=none] ?a)",
      {4}));
}

// The identity kernel reads the window's centre, which at stride 1 with padding same is the
// output coordinate itself and never padding; elsewhere (valid padding, stride 2) it is not.
TEST(IndexLevelTest, TheIdentityKernelReadsTheCentre) {
  const std::string iconv = "(const_iconv[kernel_h=3,kernel_w=3] ?b)";
  const std::string relu = "conv2d[stride_h=1,stride_w=1,padding=same,activation=relu,group=1]";
  EXPECT_TRUE(Proves("(smul (smul (" + relu + " ?a " + iconv +
                         ") ?c) ?c) => "
                         "(smul (relu ?a) (smul ?c ?c))",
                     {4, 4, 0}));
  // A bias on the input is one on the output here: the centre is never a padded position.
  EXPECT_TRUE(
      Proves("(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] "
             "(bias_add[axis=1] ?a ?c) " +
                 iconv + ") => (bias_add[axis=1] ?a ?c)",
             {4, 1, 4}));
  EXPECT_TRUE(
      Proves("(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] "
             "(ewadd ?a ?c) (const_iconv[kernel_h=5,kernel_w=3] ?b)) => (ewadd ?a ?c)",
             {4, 4, 4}));
  EXPECT_FALSE(
      Proves("(conv2d[stride_h=1,stride_w=1,padding=valid,activation=none,group=1] "
             "(ewadd ?a ?c) " +
                 iconv + ") => (ewadd ?a ?c)",
             {4, 4, 4}));
  EXPECT_FALSE(
      Proves("(conv2d[stride_h=2,stride_w=2,padding=same,activation=none,group=1] "
             "(ewadd ?a ?c) " +
                 iconv + ") => (ewadd ?a ?c)",
             {4, 4, 4}));
  // Through a convolution that pads, the centre of the outer window is not the inner's.
  EXPECT_FALSE(
      Proves("(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] "
             "(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] ?a ?c) " +
                 iconv +
                 ") => (conv2d[stride_h=1,stride_w=1,padding=valid,activation=none,"
                 "group=1] ?a ?c)",
             {4, 4, 4}));
}

// Window coordinates are affine (stride * o - padding + offset): a strided window's centre is
// stride * o, which a window read there at stride 1 reads as one of stride 2; the centre of a
// window with padding same (or of one of 1) is inside its input at every output position, and an
// unpadded window's reads always are.
TEST(IndexLevelTest, StridedAndUnpaddedWindowsCompose) {
  const std::string iconv = "(const_iconv[kernel_h=3,kernel_w=3] ?b)";
  const std::string s1 = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";
  const std::string s2 = "conv2d[stride_h=2,stride_w=2,padding=same,activation=none,group=1]";
  const std::string v1 = "conv2d[stride_h=1,stride_w=1,padding=valid,activation=none,group=1]";
  // Every other output of a stride-1 convolution is the stride-2 one.
  EXPECT_TRUE(
      Proves("(" + s2 + " (" + s1 + " ?a ?c) " + iconv + ") => (" + s2 + " ?a ?c)", {4, 4, 4}));
  // A bias through the strided identity: its centre never reads padding.
  EXPECT_TRUE(Proves("(bias_add[axis=1] (" + s2 + " ?a " + iconv + ") ?c) => (" + s2 +
                         " (bias_add[axis=1] ?a ?c) " + iconv + ")",
                     {4, 4, 1}));
  // On a plane of one position (a global mean) the stride does not matter.
  EXPECT_TRUE(Proves("(" + s1 + " (reduce_mean[axes=12,keepdims=1] ?a) ?b) => (" + s2 +
                         " (reduce_mean[axes=12,keepdims=1] ?a) ?b)",
                     {4, 4}));
  // Two unpadded windows read at o + k1 + k2 in either order.
  EXPECT_TRUE(Proves("(" + v1 + " (" + v1 + " ?a " + iconv + ") (ewadd ?c ?c)) => (" + v1 +
                         " (ewadd (" + v1 + " ?a ?c) (" + v1 + " ?a ?c)) " + iconv + ")",
                     {4, 4, 4}));
  // A padded window read at the identity's unpadded centre o + 1 reads o + k, inside the input:
  // the average of the interior of ones is one.
  EXPECT_TRUE(Proves(
      "(" + v1 +
          " (ewmul (const_ones ?a) (const_ones ?a)) (const_iconv[kernel_h=3,kernel_w=3] "
          "?a)) => (" +
          v1 +
          " (pool_avg[kernel_h=3,kernel_w=3,stride_h=1,stride_w=1,padding=same,activation=none] "
          "(ewmul (const_ones ?a) (const_ones ?a))) (const_iconv[kernel_h=3,kernel_w=3] ?a))",
      {4}));
  // Not at the border: the same pool read through a padded identity averages padding in.
  EXPECT_FALSE(Proves(
      "(" + s1 +
          " (ewmul (const_ones ?a) (const_ones ?a)) (const_iconv[kernel_h=3,kernel_w=3] "
          "?a)) => (" +
          s1 +
          " (pool_avg[kernel_h=3,kernel_w=3,stride_h=1,stride_w=1,padding=same,activation=none] "
          "(ewmul (const_ones ?a) (const_ones ?a))) (const_iconv[kernel_h=3,kernel_w=3] ?a))",
      {4}));
  // Stride 2 then stride 1 is not stride 2 (the outer window reads the inner's neighbours).
  EXPECT_FALSE(
      Proves("(" + s1 + " (" + s2 + " ?a ?c) ?c) => (" + s2 + " (" + s1 + " ?a ?c) ?c)", {4, 4}));
}

// enlarge, pool_max and softmax have element definitions: a kernel already of the window's size
// is itself, a 1-wide one sits at the centre; a maximum over one element (or over equal ones) is
// that element; softmax is exp over the sum of exps along its axis, so it commutes with a
// transpose that moves the axis and is 1/N of a value constant along it.
TEST(IndexLevelTest, EnlargeMaxPoolAndSoftmax) {
  EXPECT_TRUE(
      Proves("(ewmul (enlarge[kernel_h=3,kernel_w=3] ?a) (smul ?a ?b)) => "
             "(smul (ewmul ?a ?a) ?b)",
             {4, 0}));
  // A 1x1 kernel enlarged to 3x3 convolves like itself.
  EXPECT_TRUE(
      Proves("(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] ?a "
             "(enlarge[kernel_h=3,kernel_w=3] (reduce_mean[axes=12,keepdims=1] ?b))) => "
             "(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] ?a "
             "(reduce_mean[axes=12,keepdims=1] ?b))",
             {4, 4}));
  EXPECT_FALSE(
      Proves("(conv2d[stride_h=1,stride_w=1,padding=valid,activation=none,group=1] ?a "
             "(enlarge[kernel_h=3,kernel_w=3] (reduce_mean[axes=12,keepdims=1] ?b))) => "
             "(conv2d[stride_h=1,stride_w=1,padding=valid,activation=none,group=1] ?a "
             "(reduce_mean[axes=12,keepdims=1] ?b))",
             {4, 4}));
  const std::string pool =
      "pool_max[kernel_h=3,kernel_w=3,stride_h=1,stride_w=1,padding=same,activation=none]";
  EXPECT_TRUE(Proves(
      "(" + pool + " (reduce_mean[axes=12,keepdims=1] ?a)) => (reduce_mean[axes=12,keepdims=1] ?a)",
      {4}));
  EXPECT_TRUE(
      Proves("(" + pool + " (ewmul (const_ones ?a) (const_ones ?a))) => (const_ones ?a)", {4}));
  EXPECT_FALSE(Proves("(" + pool + " ?a) => ?a", {4}));
  EXPECT_FALSE(Proves("(" + pool + " (relu ?a)) => (relu ?a)", {4}));
  EXPECT_TRUE(
      Proves("(softmax[axis=1] (transpose[perm=[1,0]] ?a)) => "
             "(transpose[perm=[1,0]] (softmax[axis=0] ?a))",
             {2}));
  EXPECT_TRUE(
      Proves("(softmax[axis=1] (gelu (transpose[perm=[1,0]] ?a))) => "
             "(transpose[perm=[1,0]] (softmax[axis=0] (gelu ?a)))",
             {2}));
  EXPECT_FALSE(
      Proves("(softmax[axis=1] (transpose[perm=[1,0]] ?a)) => "
             "(transpose[perm=[1,0]] (softmax[axis=1] ?a))",
             {2}));
  EXPECT_FALSE(Proves("(softmax[axis=1] ?a) => (softmax[axis=0] ?a)", {2}));
  // Along the other axis a concatenation's parts are separate rows.
  EXPECT_TRUE(
      Proves("(concat[axis=0] (softmax[axis=1] ?a) (softmax[axis=1] ?b)) => "
             "(softmax[axis=1] (concat[axis=0] ?a ?b))",
             {2, 2}));
  EXPECT_FALSE(
      Proves("(concat[axis=1] (softmax[axis=1] ?a) (softmax[axis=1] ?b)) => "
             "(softmax[axis=1] (concat[axis=1] ?a ?b))",
             {2, 2}));
}

// An indicator (a guard) in every term of an activation's argument moves out where the
// activation maps 0 to 0, and not elsewhere (sigmoid(0) = 1/2).
TEST(IndexLevelTest, GuardsMoveOutOfActivationsThatKeepZero) {
  const std::string s1 = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";
  const std::string s2 = "conv2d[stride_h=2,stride_w=2,padding=same,activation=none,group=1]";
  const std::string iconv = "(const_iconv[kernel_h=3,kernel_w=3] ?b)";
  EXPECT_TRUE(Proves("(" + s2 + " (" + s2 + " (relu6 ?a) " + iconv + ") " + iconv +
                         ") => (relu6 (" + s2 + " (" + s2 + " ?a " + iconv + ") " + iconv + "))",
                     {4, 4}));
  EXPECT_TRUE(Proves("(" + s1 + " (tanh ?a) " + iconv + ") => (tanh (" + s1 + " ?a " + iconv + "))",
                     {4, 4}));
}

TEST(IndexLevelTest, CongruenceThroughOpaqueOperators) {
  const std::string conv = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";
  const std::string conv_relu =
      "conv2d[stride_h=1,stride_w=1,padding=same,activation=relu,group=1]";
  EXPECT_TRUE(
      Proves("(" + conv + " (ewadd ?a ?b) ?w) => (" + conv + " (ewadd ?b ?a) ?w)", {4, 4, 4}));
  EXPECT_TRUE(Proves("(" + conv_relu + " ?a ?w) => (relu (" + conv + " ?a ?w))", {4, 4}));
  // An operator outside the fragment knows no linearity.
  const std::string pool =
      "pool_max[kernel_h=3,kernel_w=3,stride_h=1,stride_w=1,padding=same,activation=none]";
  EXPECT_FALSE(Proves("(" + pool + " (ewadd ?a ?b)) => (ewadd (" + pool + " ?a) (" + pool + " ?b))",
                      {4, 4}));
  EXPECT_TRUE(Proves("(" + pool + " (ewadd ?a ?b)) => (" + pool + " (ewadd ?b ?a))", {4, 4}));
}

TEST(IndexLevelTest, FalseRulesAreNeverProved) {
  EXPECT_FALSE(Proves("(ewadd ?a ?b) => (ewmul ?a ?b)", {2, 2}));
  EXPECT_FALSE(
      Proves("(matmul[activation=none] ?a ?b) => (matmul[activation=none] ?b ?a)", {2, 2}));
  EXPECT_FALSE(Proves("(transpose[perm=[1,0]] ?a) => ?a", {2}));
  EXPECT_FALSE(Proves("(relu (ewadd ?a ?b)) => (ewadd (relu ?a) (relu ?b))", {2, 2}));
  EXPECT_FALSE(
      Proves("(channel_scale[axis=0] (matmul[activation=none] ?a ?b) ?c) => "
             "(matmul[activation=none] ?a (channel_scale[axis=0] ?b ?c))",
             {2, 2, 1}));
  EXPECT_FALSE(Proves("(bias_add[axis=1] (ewmul ?a ?b) ?c) => (ewmul (bias_add[axis=1] ?a ?c) ?b)",
                      {2, 2, 1}));
  // (a + b)^2 is not a^2 + b^2: the polynomial is expanded with its cross term.
  EXPECT_FALSE(
      Proves("(ewmul (ewadd ?a ?b) (ewadd ?a ?b)) => (ewadd (ewmul ?a ?a) (ewmul ?b ?b))", {2, 2}));
  EXPECT_TRUE(
      Proves("(ewmul (ewadd ?a ?b) (ewadd ?a ?b)) => "
             "(ewadd (ewadd (ewmul ?a ?a) (ewmul ?b ?b)) (ewadd (ewmul ?a ?b) (ewmul ?b ?a)))",
             {2, 2}));
}

TEST(IndexLevelTest, BatchedMatmulsBroadcastSoundly) {
  // A batch axis of an operand not known equal to the output's may broadcast (dimension 1, index
  // 0): a scale along it moves through the product only where the dimensions are tied.
  EXPECT_TRUE(
      Proves("(channel_scale[axis=0] (matmul[activation=none] ?a ?b) ?c) => "
             "(matmul[activation=none] (channel_scale[axis=0] ?a ?c) ?b)",
             {3, 3, 1}));
  EXPECT_TRUE(
      Proves("(channel_scale[axis=1] (matmul[activation=none] ?a ?b) ?c) => "
             "(matmul[activation=none] (channel_scale[axis=1] ?a ?c) ?b)",
             {3, 2, 1}));
  // A transformer's projection: x [B,S,D] times a weight [D,E], a bias on the last axis.
  EXPECT_TRUE(
      Proves("(matmul[activation=none] (ewadd ?a ?b) ?c) => "
             "(ewadd (matmul[activation=none] ?a ?c) (matmul[activation=none] ?b ?c))",
             {3, 3, 2}));
  // Associativity with three independent batch dimensions would need arithmetic on the
  // broadcast indices: not claimed.
  EXPECT_FALSE(
      Proves("(matmul[activation=none] ?a (matmul[activation=none] ?b ?c)) => "
             "(matmul[activation=none] (matmul[activation=none] ?a ?b) ?c)",
             {3, 3, 3}));
  EXPECT_TRUE(
      Proves("(matmul[activation=none] ?a (matmul[activation=none] ?b ?c)) => "
             "(matmul[activation=none] (matmul[activation=none] ?a ?b) ?c)",
             {3, 2, 2}));
  // Batch slices scale either operand; rows only the left one.
  EXPECT_TRUE(
      Proves("(channel_scale[axis=0] (matmul[activation=none] ?a ?b) ?c) => "
             "(matmul[activation=none] ?a (channel_scale[axis=0] ?b ?c))",
             {3, 3, 1}));
  EXPECT_FALSE(
      Proves("(channel_scale[axis=1] (matmul[activation=none] ?a ?b) ?c) => "
             "(matmul[activation=none] ?a (channel_scale[axis=1] ?b ?c))",
             {3, 3, 1}));
}

std::string Why(const std::string& text, const std::vector<int>& ranks) {
  return ProveAtIndexLevel(Rule(text), ranks).reason;
}

TEST(IndexLevelTest, ConcatAndSplitArePiecewise) {
  // A split undoes the concat its input's split tree records.
  EXPECT_TRUE(Proves("(split.0[axis=0] (concat[axis=0] ?a ?b)) => ?a", {2, 2}));
  EXPECT_TRUE(Proves("(split.1[axis=1] (concat[axis=1] ?a ?b)) => ?b", {4, 4}));
  EXPECT_EQ(ProveAtIndexLevel(Rule("(split.0[axis=0] (concat[axis=0] ?a ?b)) => ?a"), {2, 2}).used,
            (std::vector<std::string>{"index:concat", "index:split"}));
  // Where it type-checks, the trees that met in the ewadd agree: ?a and ?c have equal rows.
  EXPECT_TRUE(
      Proves("(split.0[axis=0] (ewadd (concat[axis=0] ?a ?b) (concat[axis=0] ?c ?d))) => "
             "(ewadd ?a ?c)",
             {2, 2, 2, 2}));
  // The parts of a split put back together (its input's tree is the concat's).
  EXPECT_TRUE(
      Proves("(concat[axis=1] (split.0[axis=1] (ewadd (concat[axis=1] ?a ?b) ?c)) "
             "(split.1[axis=1] (ewadd (concat[axis=1] ?a ?b) ?c))) => "
             "(ewadd (concat[axis=1] ?a ?b) ?c)",
             {2, 2, 2}))
      << Why("(concat[axis=1] (split.0[axis=1] (ewadd (concat[axis=1] ?a ?b) ?c)) "
             "(split.1[axis=1] (ewadd (concat[axis=1] ?a ?b) ?c))) => "
             "(ewadd (concat[axis=1] ?a ?b) ?c)",
             {2, 2, 2});
  // Elementwise operators through concatenations whose splits line up.
  EXPECT_TRUE(
      Proves("(ewadd (concat[axis=0] ?a ?b) (concat[axis=0] ?c ?d)) => "
             "(concat[axis=0] (ewadd ?a ?c) (ewadd ?b ?d))",
             {2, 2, 2, 2}))
      << Why("(ewadd (concat[axis=0] ?a ?b) (concat[axis=0] ?c ?d)) => "
             "(concat[axis=0] (ewadd ?a ?c) (ewadd ?b ?d))",
             {2, 2, 2, 2});
  EXPECT_TRUE(
      Proves("(relu (concat[axis=1] ?a ?b)) => (concat[axis=1] (relu ?a) (relu ?b))", {4, 4}));
  // Products: columns of the right operand, rows of the left, and the inner dimension (a sum
  // over it is one sum per part).
  EXPECT_TRUE(
      Proves("(matmul[activation=none] ?a (concat[axis=1] ?b ?c)) => "
             "(concat[axis=1] (matmul[activation=none] ?a ?b) (matmul[activation=none] ?a ?c))",
             {2, 2, 2}))
      << Why("(matmul[activation=none] ?a (concat[axis=1] ?b ?c)) => "
             "(concat[axis=1] (matmul[activation=none] ?a ?b) (matmul[activation=none] ?a ?c))",
             {2, 2, 2});
  EXPECT_TRUE(
      Proves("(matmul[activation=none] (concat[axis=1] ?a ?b) (concat[axis=0] ?c ?d)) => "
             "(ewadd (matmul[activation=none] ?a ?c) (matmul[activation=none] ?b ?d))",
             {2, 2, 2, 2}))
      << Why("(matmul[activation=none] (concat[axis=1] ?a ?b) (concat[axis=0] ?c ?d)) => "
             "(ewadd (matmul[activation=none] ?a ?c) (matmul[activation=none] ?b ?d))",
             {2, 2, 2, 2});
  EXPECT_TRUE(
      Proves("(transpose[perm=[1,0]] (concat[axis=0] ?a ?b)) => "
             "(concat[axis=1] (transpose[perm=[1,0]] ?a) (transpose[perm=[1,0]] ?b))",
             {2, 2}));
  // Identity matrices across the parts.
  EXPECT_TRUE(
      Proves("(matmul[activation=none] (const_imatmul ?a) (concat[axis=0] ?b ?c)) => "
             "(concat[axis=0] ?b ?c)",
             {2, 2, 2}))
      << Why("(matmul[activation=none] (const_imatmul ?a) (concat[axis=0] ?b ?c)) => "
             "(concat[axis=0] ?b ?c)",
             {2, 2, 2});
  // Convolutions: input channels (a sum per part) and output channels.
  EXPECT_TRUE(
      Proves("(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] "
             "(concat[axis=1] ?a ?b) (concat[axis=1] ?c ?d)) => "
             "(ewadd (conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] ?a ?c) "
             "(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] ?b ?d))",
             {4, 4, 4, 4}));
  EXPECT_TRUE(
      Proves("(conv2d[stride_h=1,stride_w=1,padding=same,activation=relu,group=1] ?a "
             "(concat[axis=0] ?b ?c)) => "
             "(concat[axis=1] (conv2d[stride_h=1,stride_w=1,padding=same,activation=relu,group=1] "
             "?a ?b) (conv2d[stride_h=1,stride_w=1,padding=same,activation=relu,group=1] ?a ?c))",
             {4, 4, 4}));
}

TEST(IndexLevelTest, ConcatAndSplitFalseOrUntypedAreNeverProved) {
  // The parts swapped: different elements.
  EXPECT_FALSE(
      Proves("(split.0[axis=0] (ewadd (concat[axis=0] ?a ?b) (concat[axis=0] ?c ?d))) => "
             "(ewadd ?a ?d)",
             {2, 2, 2, 2}));
  EXPECT_FALSE(Proves("(concat[axis=0] ?a ?b) => (concat[axis=0] ?b ?a)", {2, 2}));
  EXPECT_FALSE(Proves("(split.0[axis=0] (concat[axis=0] ?a ?b)) => ?b", {2, 2}));
  // Associativity: equal elements, but the split trees differ, so the types never agree.
  EXPECT_FALSE(
      Proves("(concat[axis=0] (concat[axis=0] ?a ?b) ?c) => "
             "(concat[axis=0] ?a (concat[axis=0] ?b ?c))",
             {2, 2, 2}));
  EXPECT_FALSE(Proves("(split.0[axis=0] (concat[axis=0] (concat[axis=0] ?a ?b) ?c)) => "
                      "(concat[axis=0] ?a ?b)",
                      {2, 2, 2}) &&
               Proves("(split.0[axis=0] (concat[axis=0] ?a (concat[axis=0] ?b ?c))) => "
                      "(concat[axis=0] ?a ?b)",
                      {2, 2, 2}));
  EXPECT_FALSE(
      Proves("(split.0[axis=0] (concat[axis=0] ?a (concat[axis=0] ?b ?c))) => "
             "(concat[axis=0] ?a ?b)",
             {2, 2, 2}));
  // Splits that need not line up: a + b and c + d split the same rows differently.
  EXPECT_FALSE(
      Proves("(ewadd (concat[axis=0] ?a ?b) (concat[axis=0] ?c ?d)) => "
             "(concat[axis=0] (ewadd ?a ?d) (ewadd ?b ?c))",
             {2, 2, 2, 2}));
  // Along the other axis.
  EXPECT_FALSE(
      Proves("(transpose[perm=[1,0]] (concat[axis=0] ?a ?b)) => "
             "(concat[axis=0] (transpose[perm=[1,0]] ?a) (transpose[perm=[1,0]] ?b))",
             {2, 2}));
  // The rows of a product are not split by a concat of the right operand's columns.
  EXPECT_FALSE(
      Proves("(matmul[activation=none] ?a (concat[axis=1] ?b ?c)) => "
             "(concat[axis=0] (matmul[activation=none] ?a ?b) (matmul[activation=none] ?a ?c))",
             {2, 2, 2}));
  EXPECT_FALSE(Proves(
      "(split.1[axis=0] (ewadd (concat[axis=0] ?a ?b) (concat[axis=0] ?b ?a))) => ?a", {2, 2}));
}

// Soundness against the shipped config's false candidates: every candidate the refuter found a
// differing element for (data/rules/taso.unproved.txt, 742 of them, 166 with a concat or a
// split) has different normal forms at the ranks of its counterexample. (Candidates whose sides
// differ in type are the evaluation's to reject: the normal forms compare elements of outputs of
// equal shape.)
TEST(IndexLevelTest, NoCandidateRefutedByEvaluationHasEqualNormalForms) {
  std::ifstream in("data/rules/taso.unproved.txt");
  ASSERT_TRUE(in) << "run from the source root";
  const std::string marker = "# not_proved counterexample by evaluation: inputs ";
  int checked = 0, pieces = 0;
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find(marker);
    if (at == std::string::npos || line.find(" element ") == std::string::npos) continue;
    auto rule = ruledb::ParseRule(line.substr(0, at));
    ASSERT_TRUE(rule.ok()) << line;
    // "?a [2,4,1,3] ?b [4]: ..." -> the rank of each input, in input order.
    std::vector<int> ranks;
    std::istringstream shapes(line.substr(at + marker.size()));
    for (std::string name, shape; shapes >> name >> shape && name[0] == '?';) {
      ranks.push_back(shape == "[]" || shape == "[]:"
                          ? 0
                          : static_cast<int>(std::count(shape.begin(), shape.end(), ',')) + 1);
      if (shape.back() == ':') break;
    }
    if (static_cast<int>(ranks.size()) != rule->num_inputs) continue;
    EXPECT_FALSE(ProveAtIndexLevel(*rule, ranks).proved) << line;
    ++checked;
    pieces += line.find("concat") < at || line.find("split") < at;
  }
  EXPECT_GT(checked, 700);
  EXPECT_GT(pieces, 150);
}

TEST(IndexLevelTest, RankTuplesWhereBothSidesCouldTypeCheck) {
  auto tuples = CandidateRankTuples(
      Rule("(transpose[perm=[1,0]] (matmul[activation=none] ?a ?b)) => "
           "(matmul[activation=none] (transpose[perm=[1,0]] ?b) (transpose[perm=[1,0]] ?a))"));
  ASSERT_EQ(tuples.size(), 1u);
  EXPECT_EQ(tuples[0], (std::vector<int>{2, 2}));
  // ewadd of equal ranks: every rank 0..4.
  EXPECT_EQ(CandidateRankTuples(Rule("(ewadd ?a ?b) => (ewadd ?b ?a)")).size(), 5u);
}

TEST(IndexLevelTest, TheProverUsesItWhereTheAxiomsGiveUp) {
  std::vector<ruledb::Rule> rules = {
      Rule("(channel_scale[axis=0] (matmul[activation=none] ?a ?b) ?c) => "
           "(matmul[activation=none] (channel_scale[axis=0] ?a ?c) ?b)"),
      Rule("(relu (ewadd ?a ?b)) => (ewadd (relu ?a) (relu ?b))"),
  };
  VerifyOptions opt;
  opt.threads = 1;
  opt.progress = false;
  auto report = VerifyRules(rules, opt);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(rules[0].proof.status, ruledb::ProofStatus::kProved) << rules[0].proof.reason;
  EXPECT_EQ(rules[0].proof.axioms_used,
            (std::vector<std::string>{"index:channel_scale", "index:matmul"}));
  // It holds where the two axes 0 are the same axis; with ?a 2-D and ?b batched the left side
  // scales batches and the right rows (false, and both may type-check): the proof claims the
  // first tuple where it holds.
  EXPECT_EQ(rules[0].input_ranks, (std::vector<int>{2, 2, 1})) << rules[0].ToText();
  EXPECT_FALSE(ProveAtIndexLevel(rules[0], {2, 3, 1}).proved);
  EXPECT_TRUE(ProveAtIndexLevel(rules[0], {3, 3, 1}).proved);
  EXPECT_NE(rules[1].proof.status, ruledb::ProofStatus::kProved);
}

// What neither Z3 nor the normal forms decide is evaluated further, with wider values among the
// cases: relu and relu6 agree on squares of values in [-1, 1], not on larger ones. A true rule
// left unknown stays unknown.
TEST(IndexLevelTest, UndecidedCandidatesAreEvaluatedFurther) {
  std::vector<ruledb::Rule> rules = {
      Rule("(relu (ewmul ?a ?a)) => (relu6 (ewmul ?a ?a))"),
      Rule("(relu6 (ewmul ?a ?a)) => (relu6 (relu6 (ewmul ?a ?a)))"),
  };
  VerifyOptions opt;
  opt.threads = 1;
  opt.progress = false;
  auto report = VerifyRules(rules, opt);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(rules[0].proof.status, ruledb::ProofStatus::kNotProved);
  EXPECT_NE(rules[0].proof.reason.find("counterexample by evaluation"), std::string::npos)
      << rules[0].proof.reason;
  EXPECT_NE(rules[0].proof.reason.find("values in [-8, 8]"), std::string::npos)
      << rules[0].proof.reason;
  EXPECT_NE(rules[1].proof.status, ruledb::ProofStatus::kNotProved) << rules[1].proof.reason;
  // Without the wider values the first is not refuted.
  opt.prover.refute.wide_range = 1;
  std::vector<ruledb::Rule> again = {Rule("(relu (ewmul ?a ?a)) => (relu6 (ewmul ?a ?a))")};
  ASSERT_TRUE(VerifyRules(again, opt).ok());
  EXPECT_EQ(again[0].proof.reason.find("counterexample"), std::string::npos)
      << again[0].proof.reason;
}

}  // namespace
}  // namespace verisub::verify
