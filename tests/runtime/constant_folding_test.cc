// Constant folding at load: weight-only subgraphs become weights, shape computations on static
// shapes fold, graph outputs stay computed, and folding never changes results.
#include "runtime/constant_folding.h"

#include <gtest/gtest.h>

#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::CountKind;
using testing::ModelBuilder;

// x @ (transpose(w) * 2 + 1) with every weight-side node folded.
std::string WeightChainModel() {
  ModelBuilder b;
  b.Input("x", {3, 4}).Output("y", {3, 5});
  b.RandomWeight("w", {5, 4}, 1);
  b.Weight("two", HostTensor::FromDoubles(kFloat, {}, {2.0}));
  b.Node("Transpose", {"w"}, {"wt"}, "t");
  b.Node("Mul", {"wt", "two"}, {"w2"}, "scale");
  testing::SetFloat(b.Node("Constant", {}, {"one"}, "const_one"), "value_float", 1.0f);
  b.Node("Add", {"w2", "one"}, {"w3"}, "shift");
  b.Node("MatMul", {"x", "w3"}, {"y"}, "mm");
  return b.Bytes();
}

TEST(ConstantFoldingTest, WeightOnlySubgraphsBecomeWeights) {
  auto g = ImportOnnxBytes(WeightChainModel(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1);
  EXPECT_EQ(g->node(0).KindName(), "matmul");
  const Value& w = g->value(g->node(0).inputs[1]);
  ASSERT_TRUE(w.constant);
  EXPECT_EQ(w.dims, (std::vector<int64_t>{4, 5}));

  ImportOptions no_fold;
  no_fold.fold_constants = false;
  auto raw = ImportOnnxBytes(WeightChainModel(), "model", no_fold);
  ASSERT_TRUE(raw.ok()) << raw.status().message();
  EXPECT_EQ(raw->num_nodes(), 5);
  std::vector<HostTensor> in = testing::RandomInputs(*g, 3);
  auto a = Execute(*g, in);
  auto b = Execute(*raw, in);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(testing::MaxAbsDiff(*a, *b), 1e-6);
}

TEST(ConstantFoldingTest, ShapeChainsOnStaticShapesFold) {
  auto g = ImportOnnxBytes(testing::SmallTransformerBytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (const char* kind : {"onnx:Shape", "onnx:Gather", "onnx:Concat", "onnx:Reshape"})
    EXPECT_EQ(CountKind(*g, kind), 0) << kind;
  EXPECT_EQ(CountKind(*g, "reshape"), 4);  // three head splits and the merge, all spec ops
}

TEST(ConstantFoldingTest, GraphOutputsStayComputed) {
  ModelBuilder b;
  b.Input("x", {2}).Output("y", {2}).Output("c", {2});
  b.RandomWeight("w", {2}, 1);
  b.Node("Neg", {"w"}, {"c"}, "neg");
  b.Node("Add", {"x", "c"}, {"y"}, "add");
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(CountKind(*g, "neg") + CountKind(*g, "onnx:Neg"), 1);  // mapped or not, still there
}

TEST(ConstantFoldingTest, ReportCountsFoldsAndLargeResultsStay) {
  ModelBuilder b;
  b.Input("x", {64, 64}).Output("y", {64, 64});
  b.RandomWeight("w", {1, 64}, 1).Int64Weight("shape", {64, 64});
  b.Node("Expand", {"w", "shape"}, {"big"}, "expand");
  b.Node("Add", {"x", "big"}, {"y"}, "add");
  ImportOptions no_fold;
  no_fold.fold_constants = false;
  no_fold.map_to_spec_ops = false;
  auto g = ImportOnnxBytes(b.Bytes(), "model", no_fold);
  ASSERT_TRUE(g.ok()) << g.status().message();
  Graph small = *g;
  FoldOptions tight;
  tight.max_elements = 100;
  auto r1 = FoldConstants(&small, tight);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(r1->folded_nodes, 0);
  EXPECT_EQ(small.num_nodes(), 2);
  auto r2 = FoldConstants(&*g);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->folded_nodes, 1);
  EXPECT_EQ(g->num_nodes(), 1);
}

// The cap is on growth: a result no larger than its input (a classifier's transposed weight,
// larger than the cap) folds; the Expand that grows a weight past the cap stays.
TEST(ConstantFoldingTest, ResultsNoLargerThanTheirInputFoldPastTheCap) {
  ModelBuilder b;
  b.Input("x", {2, 64}).Output("y", {2, 32}).Output("z", {2, 64});
  b.RandomWeight("w", {32, 64}, 1).RandomWeight("row", {1, 64}, 2).Int64Weight("shape", {2, 64});
  b.Node("Transpose", {"w"}, {"wt"}, "transpose");
  b.Node("MatMul", {"x", "wt"}, {"y"}, "mm");
  b.Node("Expand", {"row", "shape"}, {"rows"}, "expand");
  b.Node("Add", {"x", "rows"}, {"z"}, "add");
  ImportOptions no_fold;
  no_fold.fold_constants = false;
  no_fold.map_to_spec_ops = false;
  auto g = ImportOnnxBytes(b.Bytes(), "model", no_fold);
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::vector<HostTensor> in = testing::RandomInputs(*g, 3);
  auto before = Execute(*g, in);
  FoldOptions tight;
  tight.max_elements = 100;  // below the weight's 2048 elements and the Expand's 128
  auto r = FoldConstants(&*g, tight);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->folded_nodes, 1);
  EXPECT_EQ(CountKind(*g, "onnx:Transpose"), 0);
  EXPECT_EQ(CountKind(*g, "onnx:Expand"), 1);
  auto after = Execute(*g, in);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(testing::MaxAbsDiff(*before, *after), 0.0);
}

TEST(ConstantFoldingTest, FoldingErrorsNameTheNode) {
  ModelBuilder b;
  b.Input("x", {2, 3}).Output("y", {2, 3});
  b.RandomWeight("w", {4}, 1).Int64Weight("shape", {2, 3});
  b.Node("Reshape", {"w", "shape"}, {"r"}, "bad_reshape");  // 4 elements cannot become [2,3]
  b.Node("Add", {"x", "r"}, {"y"}, "add");
  ImportOptions no_check;
  auto g = ImportOnnxBytes(b.Bytes(), "model", no_check);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("bad_reshape"), std::string::npos) << g.status().message();
}

// A QDQ model's weights (DequantizeLinear of int8 constants) stay int8 through the import and
// the optimizer, so the model written out again keeps them and the form ONNX Runtime runs on its
// int8 kernels (a float copy of the weights took it from 16.2 to 18.5 ms on ResNet-50); the
// oneDNN backend folds them when it prepares. Folding without the option still folds them.
TEST(ConstantFoldingTest, QuantizedWeightsKeepTheirDequantizeLinear) {
  ModelBuilder b;
  b.Input("x", {3, 4}).Output("y", {3, 5});
  b.Weight("wq", HostTensor::FromInts(kInt8, {4, 5}, std::vector<int64_t>(20, 3)));
  b.Weight("ws", HostTensor::FromDoubles(kFloat, {}, {0.5}));
  b.Weight("wz", HostTensor::FromInts(kInt8, {}, {0}));
  b.Node("DequantizeLinear", {"wq", "ws", "wz"}, {"w"}, "dq");
  b.Node("MatMul", {"x", "w"}, {"y"}, "mm");
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(CountKind(*g, "onnx:DequantizeLinear"), 1);
  FoldOptions fold;
  fold.keep_dequantized_weights = true;
  ASSERT_TRUE(FoldConstants(&*g, fold).ok());
  EXPECT_EQ(CountKind(*g, "onnx:DequantizeLinear"), 1);
  ASSERT_TRUE(FoldConstants(&*g).ok());
  EXPECT_EQ(CountKind(*g, "onnx:DequantizeLinear"), 0);
}

}  // namespace
}  // namespace verisub::runtime
