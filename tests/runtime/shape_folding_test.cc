// Shape-computation folding: Shape/Gather/Div/Unsqueeze/Concat chains (ShuffleNet's channel
// shuffle, a dynamic batch's flatten) fold into constants, every shape becomes static, and the
// folded graph computes what the unfolded one does. Nodes ONNX cannot fully type stay opaque.
#include "runtime/shape_folding.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "runtime/executor.h"
#include "runtime/graph_hash.h"
#include "runtime/onnx_import.h"
#include "runtime/opaque_stats.h"
#include "runtime/tensor_proto.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::ModelBuilder;
using testing::SetInt;
using testing::SetInts;

void AddScalar(ModelBuilder& b, const std::string& name, int64_t v) {
  b.Weight(name, HostTensor::FromInts(kInt64, {}, {v}));
}

// The graph output's declared dimensions are made unknown (the checker wants a rank), so that
// only inference and folding can give them.
void ForgetOutputShape(ModelBuilder& b) {
  auto* shape = b.model()
                    .mutable_graph()
                    ->mutable_output(0)
                    ->mutable_type()
                    ->mutable_tensor_type()
                    ->mutable_shape();
  for (auto& d : *shape->mutable_dim()) d.Clear();
}

// ShuffleNet-v2's channel shuffle and split as PyTorch exports it, with every size computed from
// Shape(x): reshape to [n, 2, c/2, h, w], swap the group axes, reshape back to [n, -1, h, w],
// slice the channels in halves at c/2, Relu on the second half, concatenate.
std::string ChannelShuffleModel() {
  ModelBuilder b(13);
  b.Input("x", {1, 8, 4, 4}).Output("y", {1, 8, 4, 4});
  ForgetOutputShape(b);
  for (int64_t k = 0; k < 4; ++k) AddScalar(b, "i" + std::to_string(k), k);
  AddScalar(b, "two", 2);
  b.Int64Weight("axes0", {0}).Int64Weight("groups", {2}).Int64Weight("minus1", {-1});
  b.Int64Weight("zero", {0}).Int64Weight("axis1", {1});
  b.Node("Shape", {"x"}, {"s"}, "shape");
  const char* dims[] = {"n", "c", "h", "w"};
  for (int k = 0; k < 4; ++k) {
    std::string d = dims[k];
    b.Node("Gather", {"s", "i" + std::to_string(k)}, {d}, "gather_" + d);
    b.Node("Unsqueeze", {d, "axes0"}, {d + "_u"}, "unsqueeze_" + d);
  }
  b.Node("Div", {"c", "two"}, {"half"}, "div");
  b.Node("Unsqueeze", {"half", "axes0"}, {"half_u"}, "unsqueeze_half");
  SetInt(b.Node("Concat", {"n_u", "groups", "half_u", "h_u", "w_u"}, {"shape5"}, "concat5"), "axis",
         0);
  b.Node("Reshape", {"x", "shape5"}, {"r5"}, "reshape5");
  SetInts(b.Node("Transpose", {"r5"}, {"t5"}, "transpose"), "perm", {0, 2, 1, 3, 4});
  SetInt(b.Node("Concat", {"n_u", "minus1", "h_u", "w_u"}, {"shape4"}, "concat4"), "axis", 0);
  b.Node("Reshape", {"t5", "shape4"}, {"r4"}, "reshape4");
  b.Node("Slice", {"r4", "zero", "half_u", "axis1"}, {"left"}, "slice_left");
  b.Node("Slice", {"r4", "half_u", "c_u", "axis1"}, {"right"}, "slice_right");
  b.Node("Relu", {"right"}, {"right_relu"}, "relu");
  SetInt(b.Node("Concat", {"left", "right_relu"}, {"y"}, "concat_out"), "axis", 1);
  return b.Bytes();
}

// All opaque, nothing folded: the graph as ONNX Runtime would run it.
ImportOptions Unfolded() {
  ImportOptions o;
  o.fold_constants = false;
  o.map_to_spec_ops = false;
  return o;
}

TEST(ShapeFoldingTest, ChannelShuffleImportsWithStaticShapes) {
  auto g = ImportOnnxBytes(ChannelShuffleModel(), "shuffle.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (int v = 0; v < g->num_values(); ++v)
    EXPECT_TRUE(g->value(v).StaticShape()) << g->value(v).name;
  EXPECT_EQ(MeasureOpaque(*g).dynamic_values, 0);
  for (const char* folded : {"onnx:Shape", "onnx:Gather", "onnx:Div", "onnx:Unsqueeze"})
    EXPECT_EQ(testing::CountKind(*g, folded), 0) << folded;
  EXPECT_EQ(g->value(g->outputs()[0]).dims, (std::vector<int64_t>{1, 8, 4, 4}));
  // Static shapes let the Relu and the output Concat map onto spec operators.
  EXPECT_EQ(testing::CountKind(*g, "onnx:Relu"), 0);
  EXPECT_EQ(testing::CountKind(*g, "onnx:Concat"), 0);
}

TEST(ShapeFoldingTest, ChannelShuffleComputesTheUnfoldedSemantics) {
  auto folded = ImportOnnxBytes(ChannelShuffleModel(), "shuffle.onnx");
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  auto unfolded = ImportOnnxBytes(ChannelShuffleModel(), "shuffle.onnx", Unfolded());
  ASSERT_TRUE(unfolded.ok()) << unfolded.status().message();
  EXPECT_GT(testing::CountKind(*unfolded, "onnx:Shape"), 0);
  std::vector<HostTensor> in = {testing::RandomTensor({1, 8, 4, 4}, 7)};
  auto a = Execute(*folded, in);
  auto b = Execute(*unfolded, in);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(testing::MaxAbsDiff(*a, *b), 0.0);
  // And what a channel shuffle with two groups is: output channel j reads input channel
  // (j % 2) * 4 + j / 2; the second half passes through Relu.
  std::vector<double> x = in[0].ToDoubles(), y = (*a)[0].ToDoubles();
  for (int j = 0; j < 8; ++j)
    for (int p = 0; p < 16; ++p) {
      double v = x[((j % 2) * 4 + j / 2) * 16 + p];
      EXPECT_EQ(y[j * 16 + p], j < 4 ? v : std::max(v, 0.0)) << "channel " << j;
    }
}

// The other shape-arithmetic operators exporters emit: Cast to float and back, Div, Floor,
// Squeeze, Range, ConstantOfShape; the computed length slices x and sizes a position vector.
std::string ShapeArithmeticModel() {
  ModelBuilder b(13);
  b.Input("x", {2, 6}).Output("y", {2, 3});
  ForgetOutputShape(b);
  AddScalar(b, "i1", 1);
  AddScalar(b, "start", 0);
  AddScalar(b, "step", 1);
  b.Weight("two", HostTensor::FromDoubles(kFloat, {}, {2.0}));
  b.Int64Weight("axes0", {0}).Int64Weight("zero", {0}).Int64Weight("axis1", {1});
  b.Node("Shape", {"x"}, {"s"}, "shape");
  b.Node("Gather", {"s", "i1"}, {"len"}, "gather");
  SetInt(b.Node("Cast", {"len"}, {"len_f"}, "to_float"), "to", kFloat);
  b.Node("Div", {"len_f", "two"}, {"half_f"}, "div");
  b.Node("Floor", {"half_f"}, {"half_floor"}, "floor");
  SetInt(b.Node("Cast", {"half_floor"}, {"half"}, "to_int"), "to", kInt64);
  b.Node("Unsqueeze", {"half", "axes0"}, {"half_u"}, "unsqueeze");
  b.Node("Squeeze", {"half_u", "axes0"}, {"half_s"}, "squeeze");
  b.Node("Range", {"start", "half_s", "step"}, {"positions"}, "range");
  SetInt(b.Node("Cast", {"positions"}, {"positions_f"}, "positions_to_float"), "to", kFloat);
  auto& ones = b.Node("ConstantOfShape", {"half_u"}, {"ones"}, "ones");
  auto* value = ones.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  ToTensorProto(HostTensor::FromDoubles(kFloat, {1}, {1.0}), "value", value->mutable_t());
  b.Node("Add", {"positions_f", "ones"}, {"offsets"}, "offsets");
  b.Node("Slice", {"x", "zero", "half_u", "axis1"}, {"left"}, "slice");
  b.Node("Add", {"left", "offsets"}, {"y"}, "add");
  return b.Bytes();
}

TEST(ShapeFoldingTest, ShapeArithmeticFoldsThroughTheReferenceKernels) {
  auto g = ImportOnnxBytes(ShapeArithmeticModel(), "arith.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(MeasureOpaque(*g).dynamic_values, 0);
  EXPECT_EQ(g->value(g->outputs()[0]).dims, (std::vector<int64_t>{2, 3}));
  for (const char* folded : {"onnx:Shape", "onnx:Gather", "onnx:Cast", "onnx:Div", "onnx:Floor",
                             "onnx:Squeeze", "onnx:Range", "onnx:ConstantOfShape"})
    EXPECT_EQ(testing::CountKind(*g, folded), 0) << folded;
  auto unfolded = ImportOnnxBytes(ShapeArithmeticModel(), "arith.onnx", Unfolded());
  ASSERT_TRUE(unfolded.ok()) << unfolded.status().message();
  std::vector<HostTensor> in = {testing::RandomTensor({2, 6}, 5)};
  auto a = Execute(*g, in);
  auto b = Execute(*unfolded, in);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(testing::MaxAbsDiff(*a, *b), 0.0);
  std::vector<double> x = in[0].ToDoubles(), y = (*a)[0].ToDoubles();
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(y[r * 3 + c], x[r * 6 + c] + c + 1);
}

// Flatten of a dynamic batch as exporters write it: Reshape(x, Concat(Shape(x)[0], [-1])).
std::string DynamicBatchFlattenModel() {
  ModelBuilder b(13);
  b.Input("x", {-1, 3, 2, 2}).Output("y", {-1, 12});
  ForgetOutputShape(b);
  AddScalar(b, "i0", 0);
  b.Int64Weight("axes0", {0}).Int64Weight("minus1", {-1});
  b.Node("Shape", {"x"}, {"s"}, "shape");
  b.Node("Gather", {"s", "i0"}, {"n"}, "gather_n");
  b.Node("Unsqueeze", {"n", "axes0"}, {"n_u"}, "unsqueeze_n");
  SetInt(b.Node("Concat", {"n_u", "minus1"}, {"target"}, "concat"), "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"flat"}, "reshape");
  b.Node("Relu", {"flat"}, {"y"}, "relu");
  return b.Bytes();
}

TEST(ShapeFoldingTest, SymbolicBatchNeedsAnInputShapeNamingTheInput) {
  auto g = ImportOnnxBytes(DynamicBatchFlattenModel(), "dyn.onnx");
  ASSERT_FALSE(g.ok());
  const std::string m = g.status().message();
  for (const char* want : {"dyn.onnx", "graph input 'x'", "symbolic dimension 'N'", "dim 0",
                           "--input-shape x=1,3,2,2"})
    EXPECT_NE(m.find(want), std::string::npos) << "missing '" << want << "' in: " << m;
}

TEST(ShapeFoldingTest, InputShapeFixesTheBatchAndFoldsItsShapeChain) {
  ImportOptions options;
  options.input_shapes["x"] = {2, 3, 2, 2};
  auto g = ImportOnnxBytes(DynamicBatchFlattenModel(), "dyn.onnx", options);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->value(g->outputs()[0]).dims, (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(testing::CountKind(*g, "onnx:Shape"), 0);
  EXPECT_EQ(MeasureOpaque(*g).opaque, 0);  // reshape and relu are spec operators now
  ImportOptions unfolded_options = Unfolded();
  unfolded_options.input_shapes = options.input_shapes;
  auto unfolded = ImportOnnxBytes(DynamicBatchFlattenModel(), "dyn.onnx", unfolded_options);
  ASSERT_TRUE(unfolded.ok()) << unfolded.status().message();
  std::vector<HostTensor> in = {testing::RandomTensor({2, 3, 2, 2}, 3)};
  auto a = Execute(*g, in);
  auto b = Execute(*unfolded, in);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(testing::MaxAbsDiff(*a, *b), 0.0);
}

TEST(ShapeFoldingTest, WithoutStaticInputsTheChainStaysAndRuns) {
  // require_static_shapes off: nothing to fold, the graph still imports and runs at any batch.
  ImportOptions options;
  options.require_static_shapes = false;
  auto g = ImportOnnxBytes(DynamicBatchFlattenModel(), "dyn.onnx", options);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_GT(MeasureOpaque(*g).dynamic_values, 0);
  auto out = Execute(*g, {testing::RandomTensor({5, 3, 2, 2}, 1)});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{5, 12}));
}

TEST(ShapeFoldingTest, DataDependentShapesStayOpaqueAndImport) {
  // NonZero's output size depends on the data: ONNX Runtime runs it, so the import goes on with
  // a dynamic value, and the Transpose reading it stays opaque.
  ModelBuilder b;
  b.Input("x", {4}).Output("y", {-1, 1}, kInt64);
  b.Node("NonZero", {"x"}, {"nz"}, "nonzero");
  SetInts(b.Node("Transpose", {"nz"}, {"y"}, "transpose"), "perm", {1, 0});
  auto g = ImportOnnxBytes(b.Bytes(), "nz.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  OpaqueStats stats = MeasureOpaque(*g);
  EXPECT_EQ(stats.opaque, 2);
  EXPECT_EQ(stats.nodes, 2);
  EXPECT_GT(stats.dynamic_values, 0);
  const Value& y = g->value(g->outputs()[0]);
  EXPECT_EQ(y.dims, (std::vector<int64_t>{-1, 1}));  // ONNX's inference gives what it can
}

TEST(ShapeFoldingTest, NodesAfterACustomOperatorAreTypedFromItsDeclaredOutput) {
  // ONNX's inference cannot see through an operator it does not know; the importer types what
  // follows from the model's value_info for the custom output, or leaves it dynamic.
  for (bool declared : {true, false}) {
    ModelBuilder b;
    auto* op = b.model().add_opset_import();
    op->set_domain("com.example");
    op->set_version(1);
    b.Input("x", {2, 3}).Output("y", {2, 3});
    ForgetOutputShape(b);
    b.Node("MyOp", {"x"}, {"m"}, "custom").set_domain("com.example");
    b.Node("Relu", {"m"}, {"y"}, "relu");
    if (declared) {
      auto* vi = b.model().mutable_graph()->add_value_info();
      vi->set_name("m");
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(kFloat);
      tt->mutable_shape()->add_dim()->set_dim_value(2);
      tt->mutable_shape()->add_dim()->set_dim_value(3);
    }
    auto g = ImportOnnxBytes(b.Bytes(), "custom.onnx");
    ASSERT_TRUE(g.ok()) << g.status().message();
    const Value& y = g->value(g->outputs()[0]);
    EXPECT_EQ(y.StaticShape(), declared);
    OpaqueStats stats = MeasureOpaque(*g);
    EXPECT_EQ(stats.opaque, declared ? 1 : 2);  // a typed Relu maps onto the spec relu
    const std::pair<std::string, int> custom("com.example.MyOp", 1);
    EXPECT_NE(std::find(stats.opaque_ops.begin(), stats.opaque_ops.end(), custom),
              stats.opaque_ops.end());
  }
}

TEST(ShapeFoldingTest, RefineLearnsNothingFromAFullyTypedGraph) {
  auto g = ImportOnnxBytes(testing::SmallCnnBytes(), "cnn.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  Graph copy = *g;
  auto refined = RefineOpaqueTypes(&copy);
  ASSERT_TRUE(refined.ok()) << refined.status().message();
  EXPECT_EQ(*refined, 0);
  EXPECT_EQ(StructuralHash(copy), StructuralHash(*g));
}

TEST(ShapeFoldingTest, OpaqueSummaryLineListsTheMostFrequentTypes) {
  OpaqueStats s;
  s.nodes = 40;
  s.opaque = 4;
  s.opaque_ops = {{"Softmax", 2}, {"Erf", 1}, {"Slice", 1}};
  EXPECT_EQ(OpaqueSummaryLine(s, 2), "opaque: 4 of 40 nodes (10.0%): Softmax 2, Erf 1, ...");
  EXPECT_EQ(OpaqueSummaryLine(OpaqueStats()), "opaque: 0 of 0 nodes (0.0%)");
}

}  // namespace
}  // namespace verisub::runtime
