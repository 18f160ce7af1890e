// Mapping of ONNX nodes onto spec operators: each "maps" case has a "stays opaque" twin, and
// every mapped graph computes the same outputs as the all-opaque import of the same model.
#include "runtime/op_mapping.h"

#include <gtest/gtest.h>

#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/pooling.h"
#include "tests/runtime/import_check.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::CountKind;
using testing::ModelBuilder;
using testing::SetFloat;
using testing::SetInt;
using testing::SetInts;

// Imports with and without mapping and checks both compute the same outputs.
Graph ImportChecked(const std::string& bytes) { return testing::ImportMappedAndOpaque(bytes, 42); }

std::string ConvModel(std::vector<int64_t> wdims, std::vector<int64_t> pads,
                      std::vector<int64_t> strides, int64_t group, bool bias,
                      std::vector<int64_t> dilations = {}) {
  ModelBuilder b;
  b.Input("x", {1, 4, 7, 7});
  int64_t oh =
      (7 + pads[0] + pads[2] - ((wdims[2] - 1) * (dilations.empty() ? 1 : dilations[0]) + 1)) /
          strides[0] +
      1;
  int64_t ow =
      (7 + pads[1] + pads[3] - ((wdims[3] - 1) * (dilations.empty() ? 1 : dilations[1]) + 1)) /
          strides[1] +
      1;
  b.Output("y", {1, wdims[0], oh, ow});
  b.RandomWeight("w", wdims, 1);
  std::vector<std::string> in = {"x", "w"};
  if (bias) {
    b.RandomWeight("b", {wdims[0]}, 2);
    in.push_back("b");
  }
  auto& c = b.Node("Conv", in, {"y"}, "conv");
  SetInts(c, "pads", pads);
  SetInts(c, "strides", strides);
  SetInt(c, "group", group);
  if (!dilations.empty()) SetInts(c, "dilations", dilations);
  return b.Bytes();
}

TEST(OpMappingTest, ConvWithSymmetricPadsAndBiasMapsToConvAndBiasAdd) {
  Graph g = ImportChecked(ConvModel({6, 4, 3, 3}, {1, 1, 1, 1}, {2, 2}, 1, true));
  ASSERT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(g.node(0).KindName(), "conv2d");
  EXPECT_EQ(g.node(0).params[specs::ops::kConvPadding],
            static_cast<int64_t>(specs::Padding::kSame));
  EXPECT_EQ(g.node(0).params[specs::ops::kConvStrideH], 2);
  EXPECT_EQ(g.node(1).KindName(), "bias_add");
}

TEST(OpMappingTest, ConvWithoutPadsIsValidAndDepthwiseIsDw) {
  Graph g = ImportChecked(ConvModel({4, 1, 3, 3}, {0, 0, 0, 0}, {1, 1}, 4, false));
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).params[specs::ops::kConvPadding],
            static_cast<int64_t>(specs::Padding::kValid));
  EXPECT_EQ(g.node(0).params[specs::ops::kConvGroup], specs::kDepthwiseGroup);
}

// Pads other than "same" and "valid" (asymmetric ones, an even kernel's) are a zero pad before a
// valid convolution; dilation has no spec form and stays opaque. All computed right.
TEST(OpMappingTest, ExplicitConvPadsBecomeAZeroPad) {
  for (const std::string& bytes : {ConvModel({6, 4, 3, 3}, {1, 1, 0, 0}, {1, 1}, 1, true),
                                   ConvModel({6, 4, 2, 2}, {1, 1, 1, 1}, {1, 1}, 1, false)}) {
    Graph g = ImportChecked(bytes);
    EXPECT_EQ(CountKind(g, "onnx:Conv"), 0);
    ASSERT_EQ(CountKind(g, "conv2d"), 1);
    ASSERT_EQ(CountKind(g, "pad"), 1);
    for (int i = 0; i < g.num_nodes(); ++i)
      if (g.node(i).op == specs::OpKind::kConv2d) {
        EXPECT_EQ(g.node(i).params[specs::ops::kConvPadding],
                  static_cast<int64_t>(specs::Padding::kValid));
      }
  }
  Graph dilated = ImportChecked(ConvModel({6, 4, 3, 3}, {1, 1, 1, 1}, {1, 1}, 1, false, {2, 2}));
  EXPECT_EQ(CountKind(dilated, "onnx:Conv"), 1);
  EXPECT_EQ(CountKind(dilated, "pad"), 0);
}

std::string BinaryModel(const std::string& op, std::vector<int64_t> bdims, bool b_is_weight) {
  ModelBuilder b;
  b.Input("a", {2, 3, 4, 5}).Output("y", {2, 3, 4, 5});
  if (b_is_weight) {
    b.RandomWeight("b", bdims, 3);
  } else {
    b.Input("b", bdims);
  }
  b.Node(op, {"a", "b"}, {"y"}, "bin");
  return b.Bytes();
}

TEST(OpMappingTest, AddAndMulMapByShape) {
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Add", {2, 3, 4, 5}, false)), "ewadd"), 1);
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Mul", {2, 3, 4, 5}, false)), "ewmul"), 1);
  // Per-channel constant: bias_add along axis 1 with the weight viewed as [C].
  Graph bias = ImportChecked(BinaryModel("Add", {1, 3, 1, 1}, true));
  ASSERT_EQ(CountKind(bias, "bias_add"), 1);
  EXPECT_EQ(bias.value(bias.node(0).inputs[1]).dims, std::vector<int64_t>{3});
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Add", {5}, true)), "bias_add"), 1);
  // Scalar multiplier: smul.
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Mul", {1}, true)), "smul"), 1);
  // Per-channel multiplier (a folded BatchNormalization's scale as exporters write it, a
  // squeeze-excitation gate): channel_scale along its axis, the vector viewed as [C].
  Graph scale = ImportChecked(BinaryModel("Mul", {3, 1, 1}, true));
  ASSERT_EQ(CountKind(scale, "channel_scale"), 1);
  EXPECT_EQ(scale.node(0).params[0], 1);
  EXPECT_EQ(scale.value(scale.node(0).inputs[1]).dims, std::vector<int64_t>{3});
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Mul", {1, 3, 1, 1}, false)), "channel_scale"), 1);
  Graph last = ImportChecked(BinaryModel("Mul", {5}, true));
  ASSERT_EQ(CountKind(last, "channel_scale"), 1);
  EXPECT_EQ(last.node(0).params[0], 3);
  // Equal once given leading ones: ewadd with the operand viewed in the output's shape.
  {
    ModelBuilder b;
    b.Input("a", {1, 3, 4}).Input("b", {3, 4}).Output("y", {1, 3, 4});
    b.Node("Add", {"a", "b"}, {"y"});
    Graph g = ImportChecked(b.Bytes());
    EXPECT_EQ(CountKind(g, "ewadd"), 1);
    EXPECT_EQ(CountKind(g, "onnx:Add"), 0);
  }
  // Repeated along the leading axes only (Swin's relative position bias over its windows): a
  // bias_add (channel_scale) along the last axis of a [2, 60] view, reshaped back; the constant
  // viewed as [60], an activation operand through a reshape.
  for (bool weight : {true, false}) {
    Graph rel = ImportChecked(BinaryModel("Add", {1, 3, 4, 5}, weight));
    EXPECT_EQ(CountKind(rel, "bias_add"), 1) << weight;
    EXPECT_EQ(CountKind(rel, "onnx:Add"), 0) << weight;
    EXPECT_EQ(CountKind(rel, "reshape"), weight ? 2 : 3) << weight;
    Graph gate = ImportChecked(BinaryModel("Mul", {4, 5}, weight));
    EXPECT_EQ(CountKind(gate, "channel_scale"), 1) << weight;
  }
  // Other broadcasting is not a spec operator.
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Add", {1, 3, 1, 5}, true)), "onnx:Add"), 1);
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Mul", {1, 3, 1, 5}, true)), "onnx:Mul"), 1);
  // A constant scalar added (either side; a tanh GELU's `1 + tanh(...)`): a bias_add of that
  // many copies along the last axis, bit for bit the same sums; a scalar that is an input stays
  // opaque.
  Graph scalar = ImportChecked(BinaryModel("Add", {1}, true));
  ASSERT_EQ(CountKind(scalar, "bias_add"), 1);
  EXPECT_EQ(CountKind(scalar, "onnx:Add"), 0);
  EXPECT_EQ(scalar.node(0).params[0], 3);
  EXPECT_EQ(scalar.value(scalar.node(0).inputs[1]).dims, std::vector<int64_t>{5});
  {
    ModelBuilder b;
    b.Input("a", {2, 3}).Output("y", {2, 3}).RandomWeight("one", {}, 4);
    b.Node("Add", {"one", "a"}, {"y"});
    EXPECT_EQ(CountKind(ImportChecked(b.Bytes()), "bias_add"), 1);
  }
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Add", {1}, false)), "onnx:Add"), 1);
}

TEST(OpMappingTest, SubMapsToEwSubOnEqualShapesOnly) {
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Sub", {2, 3, 4, 5}, false)), "ewsub"), 1);
  // Sub of a constant is canonicalized into Add of its negation: an ewadd or a bias_add.
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Sub", {2, 3, 4, 5}, true)), "ewadd"), 1);
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Sub", {1, 3, 1, 1}, true)), "bias_add"), 1);
  // A broadcast Sub of two activations is not a spec operator.
  EXPECT_EQ(CountKind(ImportChecked(BinaryModel("Sub", {5}, false)), "onnx:Sub"), 1);
}

std::string PoolModel(const std::string& op, std::vector<int64_t> pads, int64_t include_pad) {
  ModelBuilder b;
  int64_t o = (6 + pads[0] + pads[2] - 3) / 1 + 1;
  b.Input("x", {1, 2, 6, 6}).Output("y", {1, 2, o, 6 + pads[1] + pads[3] - 2});
  auto& p = b.Node(op, {"x"}, {"y"}, "pool");
  SetInts(p, "kernel_shape", {3, 3});
  SetInts(p, "pads", pads);
  if (include_pad >= 0) SetInt(p, "count_include_pad", include_pad);
  return b.Bytes();
}

TEST(OpMappingTest, PoolsMapOnlyWithSpecPaddingSemantics) {
  EXPECT_EQ(CountKind(ImportChecked(PoolModel("MaxPool", {1, 1, 1, 1}, -1)), "pool_max"), 1);
  EXPECT_EQ(CountKind(ImportChecked(PoolModel("AveragePool", {1, 1, 1, 1}, 1)), "pool_avg"), 1);
  EXPECT_EQ(CountKind(ImportChecked(PoolModel("AveragePool", {0, 0, 0, 0}, 0)), "pool_avg"), 1);
  // count_include_pad=0 divides border windows by fewer elements: opaque.
  EXPECT_EQ(CountKind(ImportChecked(PoolModel("AveragePool", {1, 1, 1, 1}, 0)), "onnx:AveragePool"),
            1);
  // Asymmetric pads: a max pool's as copies of the edge (the same maximum), an average pool's
  // counted zeros as zeros, each before a valid window.
  Graph max = ImportChecked(PoolModel("MaxPool", {1, 1, 0, 0}, -1));
  EXPECT_EQ(CountKind(max, "pool_max"), 1);
  EXPECT_EQ(CountKind(max, "pad"), 1);
  Graph avg = ImportChecked(PoolModel("AveragePool", {1, 0, 0, 1}, 1));
  EXPECT_EQ(CountKind(avg, "pool_avg"), 1);
  EXPECT_EQ(CountKind(avg, "pad"), 1);
}

TEST(OpMappingTest, GemmWithTransposedWeightFoldsTheTranspose) {
  ModelBuilder b;
  b.Input("x", {3, 4}).Output("y", {3, 5});
  b.RandomWeight("w", {5, 4}, 1).RandomWeight("c", {5}, 2);
  SetInt(b.Node("Gemm", {"x", "w", "c"}, {"y"}, "fc"), "transB", 1);
  Graph g = ImportChecked(b.Bytes());
  ASSERT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(g.node(0).KindName(), "matmul");
  EXPECT_EQ(g.value(g.node(0).inputs[1]).dims, (std::vector<int64_t>{4, 5}));
  EXPECT_TRUE(g.value(g.node(0).inputs[1]).constant);
  EXPECT_EQ(g.node(1).KindName(), "bias_add");

  ModelBuilder scaled;
  scaled.Input("x", {3, 4}).Output("y", {3, 5});
  scaled.RandomWeight("w", {4, 5}, 1);
  SetFloat(scaled.Node("Gemm", {"x", "w"}, {"y"}, "fc"), "alpha", 0.5f);
  Graph sg = ImportChecked(scaled.Bytes());  // alpha: a channel_scale of the product
  EXPECT_EQ(CountKind(sg, "onnx:Gemm"), 0);
  EXPECT_EQ(CountKind(sg, "matmul"), 1);
  EXPECT_EQ(CountKind(sg, "channel_scale"), 1);

  ModelBuilder both;  // beta too: C scaled, then folded into a constant bias
  both.Input("x", {3, 4}).Output("y", {3, 5});
  both.RandomWeight("w", {4, 5}, 1).RandomWeight("c", {1, 5}, 2);
  auto& fc = both.Node("Gemm", {"x", "w", "c"}, {"y"}, "fc");
  SetFloat(fc, "alpha", 2.f);
  SetFloat(fc, "beta", 0.25f);
  Graph bg = ImportChecked(both.Bytes());
  EXPECT_EQ(CountKind(bg, "onnx:Gemm"), 0);
  EXPECT_EQ(CountKind(bg, "matmul"), 1);
  EXPECT_EQ(CountKind(bg, "bias_add"), 1);
}

TEST(OpMappingTest, ConcatChainsAndSplitFollowsTheConcatHistory) {
  ModelBuilder b;
  b.Input("a", {1, 2, 3}).Input("c", {1, 3, 3}).Input("d", {1, 1, 3});
  b.Output("s0", {1, 5, 3}).Output("s1", {1, 1, 3});
  SetInt(b.Node("Concat", {"a", "c", "d"}, {"cat"}, "cat"), "axis", 1);
  auto& s = b.Node("Split", {"cat", "sizes"}, {"s0", "s1"}, "split");
  SetInt(s, "axis", 1);
  b.Int64Weight("sizes", {5, 1});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "concat"), 2);
  EXPECT_EQ(CountKind(g, "split"), 1);

  // Sizes that do not undo the last concat: a slice per part.
  ModelBuilder o;
  o.Input("a", {1, 2, 3}).Input("c", {1, 3, 3}).Output("s0", {1, 1, 3}).Output("s1", {1, 4, 3});
  SetInt(o.Node("Concat", {"a", "c"}, {"cat"}, "cat"), "axis", 1);
  SetInt(o.Node("Split", {"cat", "sizes"}, {"s0", "s1"}, "split"), "axis", 1);
  o.Int64Weight("sizes", {1, 4});
  Graph h = ImportChecked(o.Bytes());
  EXPECT_EQ(CountKind(h, "concat"), 1);
  EXPECT_EQ(CountKind(h, "slice"), 2);
  EXPECT_EQ(CountKind(h, "onnx:Split"), 0);

  // A three-way split with no concat history (a fused q, k, v projection), equal parts from the
  // number of outputs: three slices.
  ModelBuilder qkv;
  qkv.Input("x", {1, 4, 9}).Output("q", {1, 4, 3}).Output("k", {1, 4, 3}).Output("v", {1, 4, 3});
  SetInt(qkv.Node("Split", {"x"}, {"q", "k", "v"}, "split"), "axis", 2);
  Graph three = ImportChecked(qkv.Bytes());
  EXPECT_EQ(CountKind(three, "slice"), 3);
  EXPECT_EQ(CountKind(three, "onnx:Split"), 0);
}

TEST(OpMappingTest, IdentityIsRemovedAndOutputNamesSurvive) {
  ModelBuilder b;
  b.Input("x", {2, 3}).Output("y", {2, 3});
  b.Node("Relu", {"x"}, {"r"}, "relu");
  b.Node("Identity", {"r"}, {"i"}, "id1");
  b.Node("Identity", {"i"}, {"y"}, "id2");
  Graph g = ImportChecked(b.Bytes());
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).KindName(), "relu");
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");

  // An identity from input to output must stay (the names differ).
  ModelBuilder p;
  p.Input("x", {2, 3}).Output("y", {2, 3});
  p.Node("Identity", {"x"}, {"y"}, "id");
  EXPECT_EQ(CountKind(ImportChecked(p.Bytes()), "onnx:Identity"), 1);
}

TEST(OpMappingTest, BenchmarkShapedModelsMapTheirCore) {
  Graph cnn = ImportChecked(testing::SmallCnnBytes());
  EXPECT_EQ(CountKind(cnn, "conv2d"), 2);
  // Its BatchNormalization has constant statistics: a per-channel scale and shift.
  EXPECT_EQ(CountKind(cnn, "batchnorm"), 0);
  EXPECT_EQ(CountKind(cnn, "channel_scale"), 1);
  EXPECT_EQ(CountKind(cnn, "bias_add"), 3);  // conv1's bias, the batchnorm's shift, fc's bias
  EXPECT_EQ(CountKind(cnn, "pool_max"), 1);
  EXPECT_EQ(CountKind(cnn, "pool_avg"), 1);  // GlobalAveragePool
  EXPECT_EQ(CountKind(cnn, "ewadd"), 1);
  EXPECT_EQ(CountKind(cnn, "softmax"), 1);
  Graph tr = ImportChecked(testing::SmallTransformerBytes());
  EXPECT_EQ(CountKind(tr, "matmul"), 4);
  EXPECT_EQ(CountKind(tr, "layer_norm"), 1);
  EXPECT_EQ(CountKind(tr, "softmax"), 1);
  EXPECT_EQ(CountKind(tr, "onnx:Softmax") + CountKind(tr, "onnx:LayerNormalization"), 0);
  // Its Erf-GELU decomposition is one gelu (runtime/canonicalize.h).
  EXPECT_EQ(CountKind(tr, "gelu"), 1);
  EXPECT_EQ(CountKind(tr, "onnx:Erf"), 0);
  EXPECT_EQ(CountKind(tr, "onnx:Shape"), 0);  // folded
}

}  // namespace
}  // namespace verisub::runtime
