// Import-time canonicalization: exporter forms become the spec operators the rules know, the
// outputs stay equal, and a pattern whose intermediate is read elsewhere is left alone.
#include "runtime/canonicalize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "onnx/checker.h"
#include "runtime/executor.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#include "runtime/onnx_kernels.h"
#include "specs/ops/conv2d.h"
#include "specs/registry.h"
#include "tests/runtime/import_check.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::CountKind;
using testing::ModelBuilder;

HostTensor Scalar(double v) { return HostTensor::FromDoubles(kFloat, {}, {v}); }

// Imports with mapping (and canonicalization) and without; both must compute the same, and the
// exported canonical graph must too.
Graph ImportChecked(const std::string& bytes) {
  std::vector<HostTensor> in, want;
  Graph mapped = testing::ImportMappedAndOpaque(bytes, 7, &in, &want);
  if (mapped.num_nodes() == 0) return mapped;  // the import failed, and said so
  onnx::ModelProto exported;
  Status st = ExportOnnxModel(mapped, &exported);
  EXPECT_TRUE(st.ok()) << st.message();
  ImportOptions raw;
  raw.map_to_spec_ops = false;
  auto back = ImportOnnxModel(exported, "exported", raw);
  EXPECT_TRUE(back.ok()) << back.status().message();
  if (back.ok() && !want.empty()) {
    auto c = Execute(*back, in);
    EXPECT_TRUE(c.ok());
    if (c.ok()) {
      EXPECT_LT(testing::MaxAbsDiff(want, *c), 1e-5);
    }
  }
  return mapped;
}

// PyTorch 1.13's export of nn.GELU(): x * (erf(x / sqrt 2) + 1) * 0.5.
std::string GeluModel(bool read_erf_elsewhere, std::vector<int64_t> dims = {2, 8}) {
  ModelBuilder b;
  b.Input("x", dims).Output("y", dims);
  b.Weight("sqrt2", Scalar(std::sqrt(2.0))).Weight("one", Scalar(1.0)).Weight("half", Scalar(0.5));
  b.Node("Div", {"x", "sqrt2"}, {"d"});
  b.Node("Erf", {"d"}, {"e"});
  b.Node("Add", {"e", "one"}, {"a"});
  b.Node("Mul", {"x", "a"}, {"m"});
  b.Node("Mul", {"m", "half"}, {"y"});
  if (read_erf_elsewhere) {
    b.Output("e", dims);
  }
  return b.Bytes();
}

TEST(CanonicalizeTest, GeluDecompositionBecomesGelu) {
  Graph g = ImportChecked(GeluModel(false));
  EXPECT_EQ(CountKind(g, "gelu"), 1);
  EXPECT_EQ(g.num_nodes(), 1);
}

TEST(CanonicalizeTest, GeluTwinIntermediateReadElsewhereStays) {
  Graph g = ImportChecked(GeluModel(true));
  EXPECT_EQ(CountKind(g, "gelu"), 0);
  EXPECT_EQ(CountKind(g, "erf"), 1);
}

// GPT-2's "gelu_new" as exported: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), the
// cube as Pow(x, 3) (torch.pow) or as x * (x * x); `wrong_constant` writes 0.05 for 0.044715.
std::string GeluTanhModel(bool pow, bool wrong_constant, bool read_tanh_elsewhere,
                          std::vector<int64_t> dims = {2, 3, 8}) {
  ModelBuilder b;
  b.Input("x", dims).Output("y", dims);
  b.Weight("three", Scalar(3.0)).Weight("k", Scalar(wrong_constant ? 0.05 : 0.044715));
  b.Weight("c", Scalar(std::sqrt(2.0 / M_PI))).Weight("one", Scalar(1.0));
  b.Weight("half", Scalar(0.5));
  if (pow) {
    b.Node("Pow", {"x", "three"}, {"cube"});
  } else {
    b.Node("Mul", {"x", "x"}, {"sq"});
    b.Node("Mul", {"x", "sq"}, {"cube"});
  }
  b.Node("Mul", {"cube", "k"}, {"kc"});
  b.Node("Add", {"x", "kc"}, {"inner"});
  b.Node("Mul", {"inner", "c"}, {"scaled"});
  b.Node("Tanh", {"scaled"}, {"t"});
  b.Node("Add", {"one", "t"}, {"a"});
  b.Node("Mul", {"half", "x"}, {"hx"});
  b.Node("Mul", {"hx", "a"}, {"y"});
  if (read_tanh_elsewhere) b.Output("t", dims);
  return b.Bytes();
}

TEST(CanonicalizeTest, TanhGeluDecompositionBecomesGeluTanh) {
  for (bool pow : {true, false}) {
    Graph g = ImportChecked(GeluTanhModel(pow, false, false));
    EXPECT_EQ(CountKind(g, "gelu_tanh"), 1) << pow;
    EXPECT_EQ(g.num_nodes(), 1) << pow;
  }
  // Twins: another constant, or the tanh read elsewhere, stay as they are (still computed right).
  EXPECT_EQ(CountKind(ImportChecked(GeluTanhModel(false, true, false)), "gelu_tanh"), 0);
  Graph read = ImportChecked(GeluTanhModel(true, false, true));
  EXPECT_EQ(CountKind(read, "gelu_tanh"), 0);
  EXPECT_EQ(CountKind(read, "tanh"), 1);
}

// Over values of run-time shape (a symbolic input dimension), which stay opaque ONNX nodes, both
// decompositions become one ONNX Gelu node computing the same; twins stay, and so does a GELU of
// static shape (the mapping onto spec operators fuses those).
TEST(CanonicalizeTest, RunTimeShapeGelusBecomeOneGeluNode) {
  ImportOptions dynamic;
  dynamic.require_static_shapes = false;
  auto fused = [&](const std::string& bytes, const std::vector<int64_t>& run_dims,
                   const std::string& approximate) {
    auto g = ImportOnnxBytes(bytes, "gelu", dynamic);
    ASSERT_TRUE(g.ok()) << g.status().message();
    const Graph before = *g;
    ASSERT_EQ(FuseRunTimeGelus(&*g), 1) << approximate;
    EXPECT_EQ(CountKind(*g, "onnx:Gelu"), 1);
    EXPECT_EQ(g->num_nodes(), 1);
    KernelContext attrs(*g->node(0).onnx, 20, {});
    EXPECT_EQ(attrs.AttrString("approximate", ""), approximate);
    const std::vector<HostTensor> in = {testing::RandomTensor(run_dims, 5)};
    auto want = Execute(before, in);
    auto got = Execute(*g, in);
    ASSERT_TRUE(want.ok() && got.ok());
    EXPECT_LT(testing::MaxAbsDiff(*want, *got), 1e-6);
  };
  fused(GeluModel(false, {-1, 8}), {5, 8}, "none");
  fused(GeluTanhModel(true, false, false, {2, -1, 8}), {2, 7, 8}, "tanh");
  fused(GeluTanhModel(false, false, false, {2, -1, 8}), {2, 4, 8}, "tanh");
  for (const std::string& twin :
       {GeluModel(true, {-1, 8}), GeluTanhModel(false, true, false, {2, -1, 8}),
        GeluTanhModel(true, false, true, {2, -1, 8})}) {
    auto g = ImportOnnxBytes(twin, "twin", dynamic);
    ASSERT_TRUE(g.ok()) << g.status().message();
    EXPECT_EQ(FuseRunTimeGelus(&*g), 0);
  }
  ImportOptions opaque;
  opaque.map_to_spec_ops = false;
  auto g = ImportOnnxBytes(GeluModel(false), "static", opaque);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(FuseRunTimeGelus(&*g), 0);
}

// A MatMul of run-time shape by a Transpose of the last two axes read by it alone becomes one
// Einsum of the untransposed value that computes the same; other permutations, a transpose read
// twice and static shapes stay.
TEST(CanonicalizeTest, RunTimeProductsByATransposeReadItTransposed) {
  auto model = [](std::vector<int64_t> perm, bool read_twice) {
    ModelBuilder b;
    b.Input("q", {2, -1, 4}).Input("k", {2, -1, 4}).Output("s", {2, -1, -1});
    testing::SetInts(b.Node("Transpose", {"k"}, {"kt"}), "perm", perm);
    b.Node("MatMul", {"q", "kt"}, {"s"});
    if (read_twice) {
      b.Output("kt", {2, 4, -1});
    }
    return b.Bytes();
  };
  ImportOptions dynamic;
  dynamic.require_static_shapes = false;
  auto g = ImportOnnxBytes(model({0, 2, 1}, false), "qk", dynamic);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Graph before = *g;
  ASSERT_EQ(FoldRunTimeTransposesIntoMatMuls(&*g), 1);
  ASSERT_EQ(g->num_nodes(), 1);
  EXPECT_EQ(CountKind(*g, "onnx:Einsum"), 1);
  const std::string equation = KernelContext(*g->node(0).onnx, 12, {}).AttrString("equation", "");
  EXPECT_EQ(equation, "aij,akj->aik");
  auto parsed = ParseEinsumProduct(equation);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(std::string({parsed->m, parsed->k, parsed->n}), "ijk");
  EXPECT_EQ(parsed->batch, "a");
  EXPECT_TRUE(ParseEinsumProduct("bshd,bthd->bhst").has_value());
  for (const char* not_a_product : {"aij,ajk->ai", "aij,ajk", "aaj,ajk->aak", "ij,jk,kl->il",
                                    "...ij,...jk->...ik", "aij,bjk->aik"})
    EXPECT_FALSE(ParseEinsumProduct(not_a_product).has_value()) << not_a_product;
  const std::vector<HostTensor> in = {testing::RandomTensor({2, 5, 4}, 1),
                                      testing::RandomTensor({2, 3, 4}, 2)};
  auto want = Execute(before, in);
  auto got = Execute(*g, in);
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_EQ((*got)[0].dims, (std::vector<int64_t>{2, 5, 3}));
  EXPECT_LT(testing::MaxAbsDiff(*want, *got), 1e-6);
  for (const std::string& other : {model({1, 0, 2}, false), model({0, 2, 1}, true)}) {
    auto o = ImportOnnxBytes(other, "other", dynamic);
    if (!o.ok()) continue;  // [1, 0, 2] does not multiply: the import may refuse it
    EXPECT_EQ(FoldRunTimeTransposesIntoMatMuls(&*o), 0);
  }
  ModelBuilder fixed;
  fixed.Input("q", {2, 5, 4}).Input("k", {2, 3, 4}).Output("s", {2, 5, 3});
  testing::SetInts(fixed.Node("Transpose", {"k"}, {"kt"}), "perm", {0, 2, 1});
  fixed.Node("MatMul", {"q", "kt"}, {"s"});
  ImportOptions opaque;
  opaque.map_to_spec_ops = false;
  auto f = ImportOnnxBytes(fixed.Bytes(), "static", opaque);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(FoldRunTimeTransposesIntoMatMuls(&*f), 0);
}

// Attention's heads around two products of run-time shape: q, k and v moved to [batch, heads,
// tokens, features] (k to features before tokens), the context moved back. Every Transpose folds
// into the Einsums, which compute what the graph as written does.
TEST(CanonicalizeTest, RunTimeAttentionHeadsFoldIntoTheirProducts) {
  ModelBuilder b;
  b.Input("q", {1, -1, 2, 4}).Input("k", {1, -1, 2, 4}).Input("v", {1, -1, 2, 4});
  b.Output("o", {1, -1, 2, 4});
  testing::SetInts(b.Node("Transpose", {"q"}, {"qh"}), "perm", {0, 2, 1, 3});
  testing::SetInts(b.Node("Transpose", {"k"}, {"kh"}), "perm", {0, 2, 3, 1});
  testing::SetInts(b.Node("Transpose", {"v"}, {"vh"}), "perm", {0, 2, 1, 3});
  b.Node("MatMul", {"qh", "kh"}, {"s"});
  b.Node("MatMul", {"s", "vh"}, {"c"});
  testing::SetInts(b.Node("Transpose", {"c"}, {"o"}), "perm", {0, 2, 1, 3});
  ImportOptions dynamic;
  dynamic.require_static_shapes = false;
  auto g = ImportOnnxBytes(b.Bytes(), "heads", dynamic);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Graph before = *g;
  ASSERT_EQ(FoldRunTimeTransposesIntoMatMuls(&*g), 2);
  EXPECT_EQ(CountKind(*g, "onnx:Einsum"), 2);
  EXPECT_EQ(g->num_nodes(), 2);
  EXPECT_EQ(KernelContext(*g->node(0).onnx, 12, {}).AttrString("equation", ""), "aibj,akbj->abik");
  EXPECT_EQ(KernelContext(*g->node(1).onnx, 12, {}).AttrString("equation", ""), "abij,ajbk->aibk");
  ASSERT_TRUE(CheckGraph(*g).ok());
  const std::vector<HostTensor> in = {testing::RandomTensor({1, 5, 2, 4}, 1),
                                      testing::RandomTensor({1, 5, 2, 4}, 2),
                                      testing::RandomTensor({1, 5, 2, 4}, 3)};
  auto want = Execute(before, in);
  auto got = Execute(*g, in);
  ASSERT_TRUE(want.ok() && got.ok()) << (got.ok() ? want.status() : got.status()).message();
  EXPECT_EQ((*got)[0].dims, (std::vector<int64_t>{1, 5, 2, 4}));
  EXPECT_LT(testing::MaxAbsDiff(*want, *got), 1e-6);
}

TEST(CanonicalizeTest, SiluBecomesSiluOnlyWithTheSameInput) {
  ModelBuilder b;
  b.Input("x", {1, 4, 3, 3}).Output("y", {1, 4, 3, 3});
  b.Node("Sigmoid", {"x"}, {"s"});
  b.Node("Mul", {"x", "s"}, {"y"});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "silu"), 1);
  EXPECT_EQ(g.num_nodes(), 1);

  ModelBuilder twin;
  twin.Input("x", {1, 4, 3, 3}).Input("z", {1, 4, 3, 3}).Output("y", {1, 4, 3, 3});
  twin.Node("Sigmoid", {"z"}, {"s"});
  twin.Node("Mul", {"x", "s"}, {"y"});
  Graph t = ImportChecked(twin.Bytes());
  EXPECT_EQ(CountKind(t, "silu"), 0);
  EXPECT_EQ(CountKind(t, "sigmoid"), 1);
}

TEST(CanonicalizeTest, DivByConstantBecomesScaleAndSubOfConstantABias) {
  ModelBuilder b;
  b.Input("x", {1, 3, 4, 4}).Output("y", {1, 3, 4, 4});
  b.Weight("c", Scalar(4.0));
  b.RandomWeight("mean", {1, 3, 1, 1}, 5);
  b.Node("Div", {"x", "c"}, {"d"});
  b.Node("Sub", {"d", "mean"}, {"y"});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "smul"), 1);
  EXPECT_EQ(CountKind(g, "bias_add"), 1);
  EXPECT_EQ(CountKind(g, "onnx:Div"), 0);
  EXPECT_EQ(CountKind(g, "onnx:Sub"), 0);
}

TEST(CanonicalizeTest, DivByZeroOrByATensorStays) {
  ModelBuilder b;
  b.Input("x", {2, 3}).Input("z", {2, 3}).Output("y", {2, 3}).Output("w", {2, 3});
  b.Weight("zero", Scalar(0.0));
  b.Node("Div", {"x", "zero"}, {"y"});
  b.Node("Div", {"x", "z"}, {"w"});
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(CountKind(*g, "onnx:Div"), 2);
}

// An RMSNorm as LLaMA and T5 exports write it, x * (1 / sqrt(mean(x * x) + eps)) * g: every node
// a spec operator (Sqrt as sqrt, Div(1, y) as recip), none left opaque to the rules; 1 / y with a
// numerator other than one, or one that broadcasts y, stays a Div.
TEST(CanonicalizeTest, AnRmsNormImportsAsSpecOperators) {
  ModelBuilder b;
  b.Input("x", {1, 6, 8}).Output("y", {1, 6, 8}).Output("h", {1, 6, 1}).Output("w", {1, 6, 8});
  b.Weight("one", Scalar(1.0)).Weight("two", Scalar(2.0)).Weight("eps", Scalar(1e-6));
  b.RandomWeight("g", {8}, 3);
  b.Weight("ones", HostTensor::FromDoubles(kFloat, {1, 6, 8}, std::vector<double>(48, 1.0)));
  b.Node("Mul", {"x", "x"}, {"sq"});
  testing::SetInts(b.Node("ReduceMean", {"sq"}, {"ms"}), "axes", {-1});
  b.Node("Add", {"ms", "eps"}, {"v"});
  b.Node("Sqrt", {"v"}, {"r"});
  b.Node("Div", {"one", "r"}, {"inv"});
  b.Node("Mul", {"x", "inv"}, {"n"});
  b.Node("Mul", {"n", "g"}, {"y"});
  b.Node("Div", {"two", "r"}, {"h"});   // another numerator: stays
  b.Node("Div", {"ones", "r"}, {"w"});  // a numerator that broadcasts r: stays
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "sqrt"), 1);
  EXPECT_EQ(CountKind(g, "recip"), 1);
  EXPECT_EQ(CountKind(g, "onnx:Sqrt"), 0);
  EXPECT_EQ(CountKind(g, "onnx:Div"), 2);
  // Written back as Div(1, y), the form ONNX Runtime's RMSNorm fusion matches.
  onnx::ModelProto m;
  ASSERT_TRUE(ExportOnnxModel(g, &m).ok());
  int divs = 0, reciprocals = 0;
  for (const onnx::NodeProto& n : m.graph().node()) {
    divs += n.op_type() == "Div";
    reciprocals += n.op_type() == "Reciprocal";
  }
  EXPECT_EQ(divs, 3);
  EXPECT_EQ(reciprocals, 0);
}

// Squeeze and Unsqueeze of float values with static shapes are reshapes (grouped-query
// attention's x[:, :, None] before its Expand); of integers (a shape computation) they stay.
TEST(CanonicalizeTest, SqueezeAndUnsqueezeOfFloatsAreReshapes) {
  ModelBuilder b;
  b.Input("x", {1, 4, 6}).Input("n", {1, 3}, kInt64);
  b.Output("y", {1, 4, 6}).Output("m", {3}, kInt64);
  b.Int64Weight("at", {2}).Int64Weight("first", {0});
  b.Node("Unsqueeze", {"x", "at"}, {"u"});
  b.Node("Relu", {"u"}, {"r"});
  b.Node("Squeeze", {"r", "at"}, {"y"});
  b.Node("Squeeze", {"n", "first"}, {"m"});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "reshape"), 2);
  EXPECT_EQ(CountKind(g, "onnx:Unsqueeze"), 0);
  EXPECT_EQ(CountKind(g, "onnx:Squeeze"), 1);
}

TEST(CanonicalizeTest, ClipZeroSixIsRelu6AndOtherBoundsStay) {
  ModelBuilder b;
  b.Input("x", {1, 4, 3, 3}).Output("y", {1, 4, 3, 3}).Output("z", {1, 4, 3, 3});
  b.Weight("lo", Scalar(0.0)).Weight("hi", Scalar(6.0)).Weight("one", Scalar(1.0));
  b.Node("Clip", {"x", "lo", "hi"}, {"y"});
  b.Node("Clip", {"x", "lo", "one"}, {"z"});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "relu6"), 1);
  EXPECT_EQ(CountKind(g, "onnx:Clip"), 1);
}

TEST(CanonicalizeTest, ActivationOperatorsMapAndExport) {
  ModelBuilder b(14);
  b.Input("x", {2, 5}).Output("y", {2, 5});
  b.Node("Exp", {"x"}, {"e"});
  b.Node("Erf", {"e"}, {"f"});
  auto& hs = b.Node("HardSigmoid", {"f"}, {"h"});
  testing::SetFloat(hs, "alpha", 1.0f / 6.0f);
  b.Node("HardSwish", {"h"}, {"y"});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "exp"), 1);
  EXPECT_EQ(CountKind(g, "erf"), 1);
  EXPECT_EQ(CountKind(g, "hard_sigmoid"), 1);
  EXPECT_EQ(CountKind(g, "hard_swish"), 1);
}

// One convolution of x per activation a convolution fuses, each as PyTorch exports it (Conv with
// its bias, then the activation), one without a bias, and twins: a biased output that is also a
// graph output keeps its activation apart, and an activation after a residual add is not the
// conv's. Every branch is a graph output.
std::string ConvEpiloguesModel(int64_t opset) {
  ModelBuilder b(opset);
  b.Input("x", {1, 4, 6, 6});
  b.Weight("lo", Scalar(0.0)).Weight("hi", Scalar(6.0)).Weight("half", Scalar(0.5));
  b.Weight("sqrt2", Scalar(std::sqrt(2.0))).Weight("one", Scalar(1.0));
  int k = 0;
  auto conv = [&](bool bias) {
    std::string w = "w" + std::to_string(k), c = "c" + std::to_string(k);
    b.RandomWeight(w, {4, 4, 3, 3}, 10 + k);
    std::vector<std::string> in = {"x", w};
    if (bias) {
      b.RandomWeight("b" + std::to_string(k), {4}, 50 + k);
      in.push_back("b" + std::to_string(k));
    }
    testing::SetInts(b.Node("Conv", in, {c}), "pads", {1, 1, 1, 1});
    ++k;
    return c;
  };
  auto unary = [&](const std::string& op, const std::string& x) {
    std::string y = x + "_" + op;
    auto& n = b.Node(op, {x}, {y});
    if (op == "HardSigmoid") testing::SetFloat(n, "alpha", 1.0f / 6.0f);
    return y;
  };
  std::vector<std::string> outputs;
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish"})
    outputs.push_back(unary(op, conv(true)));
  std::string c = conv(true);
  b.Node("Clip", {c, "lo", "hi"}, {c + "_relu6"});
  outputs.push_back(c + "_relu6");
  c = conv(true);
  b.Node("Mul", {c, unary("Sigmoid", c)}, {c + "_silu"});
  outputs.push_back(c + "_silu");
  c = conv(true);  // PyTorch's GELU
  b.Node("Div", {c, "sqrt2"}, {c + "_d"});
  b.Node("Add", {unary("Erf", c + "_d"), "one"}, {c + "_a"});
  b.Node("Mul", {c, c + "_a"}, {c + "_m"});
  b.Node("Mul", {c + "_m", "half"}, {c + "_gelu"});
  outputs.push_back(c + "_gelu");
  outputs.push_back(unary("Relu", conv(false)));  // no bias: conv2d[activation=relu]
  c = conv(true);  // also a graph output: the bias fuses, the relu cannot
  outputs.push_back(c);
  outputs.push_back(unary("Relu", c));
  c = conv(true);  // a residual add before the relu
  b.Node("Add", {c, "x"}, {c + "_sum"});
  outputs.push_back(unary("Relu", c + "_sum"));
  for (const std::string& o : outputs) b.Output(o, {1, 4, 6, 6});
  return b.Bytes();
}

TEST(CanonicalizeTest, ConvolutionsAbsorbTheirBiasAndActivation) {
  for (int64_t opset : {14, 17}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    Graph g = ImportChecked(ConvEpiloguesModel(opset));
    Graph fused = g;
    EXPECT_EQ(FuseConvEpilogues(&fused), 11);
    EXPECT_EQ(CountKind(fused, "bias_add"), 0);
    EXPECT_EQ(CountKind(fused, "conv2d"), 1);
    EXPECT_EQ(CountKind(fused, "conv2d_bias"), 10);
    std::map<std::string, int> acts;
    for (const auto& n : fused.nodes())
      if (!n->opaque() &&
          (*n->op == specs::OpKind::kConv2d || *n->op == specs::OpKind::kConv2dBias))
        ++acts[specs::FormatParamValue(specs::GetOp(*n->op).params[specs::ops::kConvActivation],
                                       n->params)];
    EXPECT_EQ(acts, (std::map<std::string, int>{{"none", 2},
                                                {"relu", 2},
                                                {"sigmoid", 1},
                                                {"tanh", 1},
                                                {"hard_sigmoid", 1},
                                                {"hard_swish", 1},
                                                {"relu6", 1},
                                                {"silu", 1},
                                                {"gelu", 1}}));
    EXPECT_EQ(CountKind(fused, "relu"), 2);  // after the shared output and after the add
    std::vector<HostTensor> in = testing::RandomInputs(g, 3);
    auto want = Execute(g, in);
    auto got = Execute(fused, in);
    ASSERT_TRUE(want.ok() && got.ok());
    EXPECT_LT(testing::MaxAbsDiff(*want, *got), 1e-5);
    // Written as engines take it: Conv with its bias input, then the activation's ONNX form.
    onnx::ModelProto exported;
    ASSERT_TRUE(ExportOnnxModel(fused, &exported).ok());
    EXPECT_NO_THROW(onnx::checker::check_model(exported));
    int convs_with_bias = 0;
    for (const auto& n : exported.graph().node())
      convs_with_bias += n.op_type() == "Conv" && n.input_size() == 3;
    EXPECT_EQ(convs_with_bias, 10);
    auto back = ImportOnnxModel(exported, "exported");
    ASSERT_TRUE(back.ok()) << back.status().message();
    auto again = Execute(*back, in);
    ASSERT_TRUE(again.ok());
    EXPECT_LT(testing::MaxAbsDiff(*want, *again), 1e-5);
    Graph refused = *back;
    EXPECT_EQ(FuseConvEpilogues(&refused), 11);  // the export imports back into the same fusions
  }
}

// Inception-v3's exported average pools: Pad (zeros, spatial) then AveragePool without pads,
// which is one average over the padded window; the same before a Conv. A Pad read twice, of
// another value, or before a MaxPool (whose padding is -inf) stays.
TEST(CanonicalizeTest, ZeroPadsMoveIntoTheAveragePoolOrConvAfterThem) {
  ModelBuilder b;
  b.Input("x", {1, 4, 6, 6}).Output("a", {1, 4, 6, 6}).Output("c", {1, 4, 6, 6});
  b.Output("m", {1, 4, 6, 6}).Output("t", {1, 4, 8, 8});
  b.Int64Weight("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  b.Weight("zero", Scalar(0.0));
  b.RandomWeight("w", {4, 4, 3, 3}, 3);
  b.Node("Pad", {"x", "pads", "zero"}, {"p1"});
  testing::SetInts(b.Node("AveragePool", {"p1"}, {"a"}), "kernel_shape", {3, 3});
  b.Node("Pad", {"x", "pads"}, {"p2"});
  b.Node("Conv", {"p2", "w"}, {"c"});
  b.Node("Pad", {"x", "pads"}, {"p3"});  // also a graph output: stays
  b.Node("Identity", {"p3"}, {"t"});
  testing::SetInts(b.Node("MaxPool", {"p3"}, {"m"}), "kernel_shape", {3, 3});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "onnx:Pad"), 0);
  EXPECT_EQ(CountKind(g, "pad"), 1);  // the one that stays, as the spec's pad
  EXPECT_EQ(CountKind(g, "pool_avg"), 1);
  EXPECT_EQ(CountKind(g, "conv2d"), 1);
  EXPECT_EQ(CountKind(g, "pool_max"), 1);  // of the padded tensor, valid
  EXPECT_EQ(g.num_nodes(), 4);             // the Identity is an alias
}

// A two-operand Einsum that is a batched matrix product becomes MatMul, with a Transpose of the
// last two axes before an operand written [k m] or [n k] (MaxViT's attention); its twin with a
// repeated subscript (a diagonal) stays an Einsum. Outputs equal the Einsum kernel's.
TEST(CanonicalizeTest, BatchedMatrixEinsumsBecomeMatMul) {
  ModelBuilder b(16);
  b.Input("q", {2, 3, 4, 5}).Input("k", {2, 3, 6, 5}).Input("v", {2, 3, 6, 7});
  b.Input("d", {2, 3, 3});
  b.Output("y", {2, 3, 4, 7}).Output("diag", {2, 3});
  testing::SetString(b.Node("Einsum", {"q", "k"}, {"s"}), "equation",
                     "B G I D, B G J D -> B G I J");
  testing::SetString(b.Node("Einsum", {"s", "v"}, {"y"}), "equation", "bgij,bgjd->bgid");
  testing::SetString(b.Node("Einsum", {"d"}, {"diag"}), "equation", "bii->bi");
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "onnx:Einsum"), 1);
  EXPECT_EQ(CountKind(g, "matmul") + CountKind(g, "onnx:MatMul"), 2);
  EXPECT_EQ(CountKind(g, "transpose") + CountKind(g, "onnx:Transpose"), 1);  // of k only
}

// Pow by 2 (T5's and LLaMA's RMS norm), 3, 0.5 and 1 becomes products, Sqrt or the input itself,
// which the rules and the backend know; Pow by another constant or by a tensor stays. Outputs equal
// Pow's kernel's.
TEST(CanonicalizeTest, SmallConstantPowersBecomeProducts) {
  ModelBuilder b;
  b.Input("x", {2, 3, 4}).Input("e", {2, 3, 4});
  for (const char* o : {"sq", "cube", "root", "same", "other", "tensor"}) b.Output(o, {2, 3, 4});
  b.Weight("two", Scalar(2)).Weight("three", Scalar(3)).Weight("half", Scalar(0.5));
  b.Weight("one", Scalar(1)).Weight("seven", Scalar(7));
  b.Node("Abs", {"x"}, {"a"});  // Sqrt of a non-negative input
  b.Node("Pow", {"x", "two"}, {"sq"});
  b.Node("Pow", {"x", "three"}, {"cube"});
  b.Node("Pow", {"a", "half"}, {"root"});
  b.Node("Pow", {"x", "one"}, {"p1"});
  b.Node("Relu", {"p1"}, {"same"});
  b.Node("Pow", {"a", "seven"}, {"other"});
  b.Node("Pow", {"a", "e"}, {"tensor"});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "onnx:Pow"), 2);
  EXPECT_EQ(CountKind(g, "ewmul"), 3);
  EXPECT_EQ(CountKind(g, "sqrt"), 1);  // x^0.5 is Sqrt, a spec operator since RMSNorm's
  EXPECT_EQ(CountKind(g, "onnx:Sqrt"), 0);
}

// A constant mask applied with an infinity (masked_fill(-inf) of a causal mask, either operand
// order, broadcast to the heads) becomes Add of a constant bias; a finite fill value and a mask
// computed at run time stay Where. Outputs equal Where's kernel's (ImportChecked).
TEST(CanonicalizeTest, InfiniteMasksBecomeAddedBiases) {
  ModelBuilder b;
  b.Input("s", {2, 3, 4, 4}).Input("live", {1, 1, 4, 4});
  for (const char* o : {"a", "c", "f", "r"}) b.Output(o, {2, 3, 4, 4});
  HostTensor mask =
      HostTensor::FromInts(kBool, {1, 1, 4, 4}, {0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0});
  b.Weight("mask", mask);
  b.Weight("ninf", Scalar(-INFINITY)).Weight("pinf", Scalar(INFINITY)).Weight("big", Scalar(-1e4));
  b.Node("Where", {"mask", "ninf", "s"}, {"a"});  // masked_fill(mask, -inf)
  b.Node("Where", {"mask", "s", "pinf"}, {"c"});  // the fill in the other operand
  b.Node("Where", {"mask", "big", "s"}, {"f"});   // finite: x + c is not c
  b.Node("Greater", {"live", "big"}, {"m2"});
  b.Node("Where", {"m2", "ninf", "s"}, {"r"});  // a mask computed at run time
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "onnx:Where"), 2);
  EXPECT_EQ(CountKind(g, "onnx:Add") + CountKind(g, "bias_add") + CountKind(g, "ewadd"), 2);
}

// DepthToSpace in both modes and SpaceToDepth become Reshape, Transpose, Reshape (ESPCN's pixel
// shuffle); outputs equal the operators' kernels'.
TEST(CanonicalizeTest, DepthToSpaceBecomesATransposeOfReshapes) {
  ModelBuilder b;
  b.Input("x", {1, 18, 3, 4}).Input("z", {1, 2, 4, 6});
  b.Output("dcr", {1, 2, 9, 12}).Output("crd", {1, 2, 9, 12}).Output("s2d", {1, 8, 2, 3});
  testing::SetInt(b.Node("DepthToSpace", {"x"}, {"dcr"}), "blocksize", 3);
  onnx::NodeProto& crd = b.Node("DepthToSpace", {"x"}, {"crd"});
  testing::SetInt(crd, "blocksize", 3);
  testing::SetString(crd, "mode", "CRD");
  testing::SetInt(b.Node("SpaceToDepth", {"z"}, {"s2d"}), "blocksize", 2);
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "onnx:DepthToSpace") + CountKind(g, "onnx:SpaceToDepth"), 0);
  EXPECT_EQ(CountKind(g, "transpose") + CountKind(g, "onnx:Transpose"), 3);
  // Export writes the operators again (ONNX Runtime's kernels for them beat its 6-D transpose).
  onnx::ModelProto m;
  ASSERT_TRUE(ExportOnnxModel(g, &m).ok());
  std::map<std::string, int> ops;
  for (const auto& n : m.graph().node()) ++ops[n.op_type()];
  EXPECT_EQ(ops["DepthToSpace"], 2);
  EXPECT_EQ(ops["SpaceToDepth"], 1);
  EXPECT_EQ(ops["Transpose"], 0);
}

// Fourier transforms of constant lengths become products with the transform's matrix: a real
// STFT (its Hann window an operator folded at import) a strided Conv, DFTs (real and complex,
// forward and inverse, padded, truncated, onesided, along a middle or the last signal axis) a
// MatMul between reshapes and transposes; outputs equal the reference kernels'.
TEST(CanonicalizeTest, FourierTransformsBecomeMatrixProducts) {
  ModelBuilder b(17);
  b.Input("x", {2, 64}).Input("r", {2, 6, 3, 1}).Input("c", {1, 3, 6, 2}).Input("s", {3, 10, 1});
  b.Output("stft", {2, 13, 9, 2}).Output("real", {2, 5, 3, 2}).Output("inv", {1, 3, 4, 2});
  b.Output("last", {3, 10, 2});
  auto scalar = [](int64_t v) { return HostTensor::FromInts(kInt64, {}, {v}); };
  b.Weight("sixteen", scalar(16)).Weight("four", scalar(4)).Weight("eight", scalar(8));
  b.Node("HannWindow", {"sixteen"}, {"hann"});
  b.Node("STFT", {"x", "four", "hann", "sixteen"}, {"stft"});
  onnx::NodeProto& real = b.Node("DFT", {"r", "eight"}, {"real"});
  testing::SetInt(real, "onesided", 1);
  onnx::NodeProto& inv = b.Node("DFT", {"c", "four"}, {"inv"});
  testing::SetInt(inv, "axis", -2);
  testing::SetInt(inv, "inverse", 1);
  b.Node("DFT", {"s"}, {"last"});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "onnx:STFT") + CountKind(g, "onnx:DFT"), 0);
  EXPECT_EQ(CountKind(g, "conv2d") + CountKind(g, "onnx:Conv"), 1);
  EXPECT_EQ(CountKind(g, "matmul") + CountKind(g, "onnx:MatMul"), 3);
}

// A Dropout that drops nothing (no training input; a training flag with ratio 0, as Swin's
// export writes it), an Identity, a Pad by zeros and a Concat of one input are removed; a Dropout
// whose mask is read, one in training mode with a ratio, and a Pad of a graph output stay.
TEST(CanonicalizeTest, NodesThatPassTheirInputThroughAreRemoved) {
  ModelBuilder b(13);
  b.Input("x", {2, 4}).Output("y", {2, 4}).Output("mask", {2, 4}, kBool).Output("p", {2, 4});
  b.Weight("zero", Scalar(0.0)).Weight("half", Scalar(0.5));
  b.Weight("yes", HostTensor::FromInts(kBool, {}, {1}));
  b.Int64Weight("pads", {0, 0, 0, 0});
  b.Node("Dropout", {"x"}, {"a"});
  b.Node("Dropout", {"a", "zero", "yes"}, {"c"});
  b.Node("Identity", {"c"}, {"e"});
  b.Node("Pad", {"e", "pads"}, {"f"});
  b.Node("Dropout", {"f", "half"}, {"g0", "mask"});             // its mask is an output
  testing::SetInt(b.Node("Concat", {"g0"}, {"g"}), "axis", 1);  // one input
  b.Node("Relu", {"g"}, {"y"});
  b.Node("Pad", {"x", "pads"}, {"p"});  // a graph output
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "onnx:Dropout"), 1);
  EXPECT_EQ(CountKind(g, "onnx:Pad"), 1);
  EXPECT_EQ(CountKind(g, "onnx:Identity"), 0);
  EXPECT_EQ(CountKind(g, "onnx:Concat") + CountKind(g, "concat"), 0);
}

// SqueezeNet's ceil-mode max pools: where the windows tile the input exactly, rounding up
// changes nothing and the pool maps; where it would add a window, it stays opaque.
// Ceil-mode max pools: where the windows tile the input (SqueezeNet's 3x3/2 of 111) the output
// size is the floor's, a valid pool; where the last window overhangs (GoogLeNet's 3x3/2 of 112,
// here 8) the overhang is a pad of edge copies before it. Both computed as ONNX's (ImportChecked).
// A ceil-mode average pool that overhangs divides its last windows by what they cover: opaque.
TEST(CanonicalizeTest, CeilModePoolsMapAnOverhangAsAnEdgePad) {
  ModelBuilder b;
  b.Input("x", {1, 4, 111, 111}).Input("y", {1, 4, 8, 8});
  b.Output("a", {1, 4, 55, 55}).Output("b", {1, 4, 4, 4}).Output("c", {1, 4, 4, 4});
  for (auto [in, out] : {std::pair<std::string, std::string>{"x", "a"}, {"y", "b"}, {"y", "c"}}) {
    auto& n = b.Node(out == "c" ? "AveragePool" : "MaxPool", {in}, {out});
    testing::SetInts(n, "kernel_shape", {3, 3});
    testing::SetInts(n, "strides", {2, 2});
    testing::SetInt(n, "ceil_mode", 1);
  }
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "pool_max"), 2);
  EXPECT_EQ(CountKind(g, "onnx:MaxPool"), 0);
  EXPECT_EQ(CountKind(g, "pad"), 1);
  EXPECT_EQ(CountKind(g, "onnx:AveragePool"), 1);
}

// ShuffleNet-v2's channel split: two Slices of one tensor (the channel shuffle's reshape, which
// has no concat history a split could undo), negative and out-of-range bounds as exporters write
// them, and an opset-9 Slice with attributes.
TEST(CanonicalizeTest, ConstantUnitStepSlicesOfOneAxisBecomeSlice) {
  ModelBuilder b;
  b.Input("x", {1, 8, 4, 4}).Output("y", {1, 4, 4, 4});
  b.Int64Weight("zero", {0}).Int64Weight("half", {4}).Int64Weight("big", {INT64_MAX});
  b.Int64Weight("axis", {1}).Int64Weight("neg", {-3}).Int64Weight("one", {1});
  b.Node("Reshape", {"x", "shape"}, {"r"});
  b.Int64Weight("shape", {1, 8, 4, 4});
  b.Node("Slice", {"r", "zero", "half", "axis"}, {"lo"});
  b.Node("Slice", {"r", "half", "big", "axis", "one"}, {"hi"});
  b.Node("Slice", {"hi", "neg", "big", "axis"}, {"last"});  // channels 5..7 of hi: 1..3
  b.Node("Add", {"lo", "hi"}, {"y"});
  b.Output("last", {1, 3, 4, 4});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "slice"), 3);
  EXPECT_EQ(CountKind(g, "onnx:Slice"), 0);

  ModelBuilder old(9);
  old.Input("x", {2, 6}).Output("y", {2, 2});
  auto& s = old.Node("Slice", {"x"}, {"y"});
  testing::SetInts(s, "starts", {-2});
  testing::SetInts(s, "ends", {6});
  testing::SetInts(s, "axes", {1});
  Graph g9 = ImportChecked(old.Bytes());
  EXPECT_EQ(CountKind(g9, "slice"), 1);
}

// A window padding cut back off (Swin): one Slice of two spatial axes of a channels-last map is
// a slice per axis it narrows; an axis it keeps whole needs none.
TEST(CanonicalizeTest, SliceOfSeveralAxesBecomesOneSlicePerNarrowedAxis) {
  ModelBuilder b;
  b.Input("x", {1, 9, 9, 4}).Output("cut", {1, 7, 7, 4}).Output("right", {1, 9, 7, 4});
  b.Int64Weight("zeros", {0, 0}).Int64Weight("sevens", {7, 7}).Int64Weight("axes", {1, 2});
  b.Int64Weight("starts", {0, 1}).Int64Weight("ends", {INT64_MAX, 8});
  b.Node("Slice", {"x", "zeros", "sevens", "axes"}, {"cut"});
  b.Node("Slice", {"x", "starts", "ends", "axes"}, {"right"});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "slice"), 3);
  EXPECT_EQ(CountKind(g, "onnx:Slice"), 0);
}

// A transformer's q, k, v = qkv[0], qkv[1], qkv[2]: a Gather of one constant index is a slice
// of that index, and a reshape dropping the axis when the index is a scalar (negative indices
// count from the end; an index of shape [1] keeps the axis). Not for several indices.
TEST(CanonicalizeTest, GatherOfOneConstantIndexBecomesSlice) {
  ModelBuilder b;
  b.Input("qkv", {3, 2, 4, 5});
  b.Output("q", {2, 4, 5}).Output("v", {2, 4, 5}).Output("row", {3, 1, 4, 5});
  b.Output("picked", {2, 2, 4, 5});
  b.Weight("zero", HostTensor::FromDoubles(kInt64, {}, {0}));
  b.Weight("last", HostTensor::FromDoubles(kInt64, {}, {-1}));
  b.Int64Weight("one", {1}).Int64Weight("two", {0, 2});
  b.Node("Gather", {"qkv", "zero"}, {"q"});
  b.Node("Gather", {"qkv", "last"}, {"v"});
  testing::SetInt(b.Node("Gather", {"qkv", "one"}, {"row"}), "axis", 1);
  b.Node("Gather", {"qkv", "two"}, {"picked"});  // two indices: stays
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "slice"), 3);
  EXPECT_EQ(CountKind(g, "reshape"), 2);
  EXPECT_EQ(CountKind(g, "onnx:Gather"), 1);
}

// Swin's patch merging, x[:, 0::2, 1::2, :] and its three siblings: a step that divides its
// axis views the axis as [strides, step], picks one element of each stride, keeps a range of
// strides, and reshapes back; a start past the first stride, a range of strides, a step of 3.
TEST(CanonicalizeTest, StridedSlicesGoThroughAView) {
  ModelBuilder b;
  b.Input("x", {1, 4, 6, 3});
  b.Output("even_odd", {1, 2, 3, 3}).Output("odd_even", {1, 2, 3, 3});
  b.Output("inner", {1, 4, 2, 3}).Output("thirds", {1, 4, 2, 3});
  b.Int64Weight("hw", {1, 2}).Int64Weight("big2", {100, 100}).Int64Weight("twos", {2, 2});
  b.Int64Weight("s01", {0, 1}).Int64Weight("s10", {1, 0});
  b.Int64Weight("w", {2}).Int64Weight("two", {2}).Int64Weight("six", {6}).Int64Weight("three", {3});
  b.Int64Weight("zero", {0});
  b.Node("Slice", {"x", "s01", "big2", "hw", "twos"}, {"even_odd"});
  b.Node("Slice", {"x", "s10", "big2", "hw", "twos"}, {"odd_even"});
  b.Node("Slice", {"x", "two", "six", "w", "two"}, {"inner"});      // W: 2, 4
  b.Node("Slice", {"x", "zero", "six", "w", "three"}, {"thirds"});  // W: 0, 3
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "onnx:Slice"), 0);
  // even_odd: 2 picks; odd_even: 2 picks; inner: a pick and a range of strides; thirds: a pick.
  EXPECT_EQ(CountKind(g, "slice"), 7);
  EXPECT_EQ(CountKind(g, "reshape"), 8);  // a view and back for each
}

// Must not fire: a step that does not divide its axis, bounds computed at run time, an empty
// range. Each stays an opaque Slice (and still runs). A slice of two axes at once (a window
// padding cut back off) becomes two slices.
TEST(CanonicalizeTest, SlicesWithUnevenStepsDynamicBoundsOrEmptyRangesStay) {
  ModelBuilder b;
  b.Input("x", {2, 8}).Input("n", {1}, kInt64);
  b.Output("stepped", {2, 3}).Output("dynamic", {2, 8}).Output("both", {1, 4});
  b.Int64Weight("zero", {0}).Int64Weight("big", {8}).Int64Weight("axis", {1});
  b.Int64Weight("three", {3}).Int64Weight("zeros", {0, 0}).Int64Weight("ends2", {1, 4});
  b.Int64Weight("axes2", {0, 1});
  b.Node("Slice", {"x", "zero", "big", "axis", "three"}, {"stepped"});
  b.Node("Slice", {"x", "zero", "n", "axis"}, {"dynamic"});
  b.Node("Slice", {"x", "zeros", "ends2", "axes2"}, {"both"});
  b.Output("empty", {2, 0});
  b.Node("Slice", {"x", "big", "big", "axis"}, {"empty"});
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(CountKind(*g, "slice"), 2);  // "both"
  EXPECT_EQ(CountKind(*g, "onnx:Slice"), 3);
}

}  // namespace
}  // namespace verisub::runtime
