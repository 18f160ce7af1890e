// Operator-level differential tests of the oneDNN backend against the reference backend on
// random inputs: groups, asymmetric pads, strides, dilation, broadcasting, fused chains, blocked
// layouts flowing between kernels, and reference fallbacks in the middle of blocked tensors.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "base/file_io.h"
#include "runtime/canonicalize.h"
#include "runtime/dnnl/builder.h"
#include "runtime/dnnl/dnnl_backend.h"
#include "runtime/dnnl/fusion.h"
#include "runtime/dnnl/vector_math.h"
#include "runtime/executor.h"
#include "runtime/graph_text.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#include "runtime/reference_backend.h"
#include "tests/runtime/dnnl/dnnl_test_util.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::ModelBuilder;
using testing::SetFloat;
using testing::SetInt;
using testing::SetInts;
using testing::SetString;

// Sets an environment variable for a scope (a kernel choice forced for a test) and restores it
// when the scope ends, also when an assertion returns early.
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) saved_ = v;
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (saved_)
      setenv(name_, saved_->c_str(), 1);
    else
      unsetenv(name_);
  }
  void Set(const char* value) { setenv(name_, value, 1); }

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

constexpr double kTolerance = 1e-4;

// Imports the model, runs both backends and checks the outputs agree.
// `map`: import onto spec operators (with the import's canonicalization), else ONNX nodes as
// they are.
PrepareStats Check(ModelBuilder& b, const std::string& name, bool map = true) {
  PrepareStats stats;
  ImportOptions options;
  options.map_to_spec_ops = map;
  auto g = ImportOnnxBytes(b.Bytes(), name, options);
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return stats;
  auto cmp = testing::CompareWithReference(*g, testing::RandomInputs(*g, 7), &stats);
  EXPECT_EQ(cmp.error, "") << name;
  EXPECT_LT(cmp.max_rel, kTolerance) << name << " max_abs " << cmp.max_abs;
  return stats;
}

// Prepares `g` on oneDNN with every 4-D activation stored in `layout`, runs it on random
// inputs (`seed`) and checks the outputs against the reference backend's; null when it failed.
// `layout_of` (when given) picks a value's layout instead.
std::unique_ptr<PreparedModel> CheckInLayout(
    const Graph& g, specs::Layout layout, uint64_t seed, const std::string& name,
    const std::function<specs::Layout(const Value&)>& layout_of = nullptr) {
  PrepareOptions options;
  options.layouts.assign(g.num_values(), specs::Layout::kPlain);
  for (int v = 0; v < g.num_values(); ++v)
    if (!g.value(v).constant && g.value(v).dims.size() == 4)
      options.layouts[v] = layout_of ? layout_of(g.value(v)) : layout;
  auto m = MakeDnnlBackend()->Prepare(g, options);
  if (!m.ok()) {
    ADD_FAILURE() << name << ": " << m.status().message();
    return nullptr;
  }
  auto inputs = testing::RandomInputs(g, seed);
  auto out = (*m)->Run(inputs);
  auto ref = MakeReferenceBackend()->Prepare(g, {});
  auto expected = ref.ok() ? (*ref)->Run(inputs) : ref.status();
  if (!out.ok() || !expected.ok()) {
    ADD_FAILURE() << name << ": a run failed";
    return nullptr;
  }
  auto cmp = testing::Compare(*out, *expected);
  EXPECT_EQ(cmp.error, "") << name;
  EXPECT_LT(cmp.max_rel, kTolerance) << name;
  return std::move(m).value();
}

// Prepares `g` on the oneDNN backend with `opts`, runs it on `inputs` and expects `expected`
// within kTolerance; returns the prepare statistics.
PrepareStats ExpectSameOutputs(const Graph& g, const PrepareOptions& opts,
                               const std::vector<HostTensor>& inputs,
                               const std::vector<HostTensor>& expected, const std::string& what) {
  auto m = MakeDnnlBackend()->Prepare(g, opts);
  if (!m.ok()) {
    ADD_FAILURE() << what << ": " << m.status().message();
    return {};
  }
  auto out = (*m)->Run(inputs);
  if (!out.ok()) {
    ADD_FAILURE() << what << ": " << out.status().message();
    return {};
  }
  auto cmp = testing::Compare(*out, expected);
  EXPECT_EQ(cmp.error, "") << what;
  EXPECT_LT(cmp.max_rel, kTolerance) << what;
  return (*m)->stats();
}

struct ConvCase {
  std::string name;
  int64_t c, o, group, k, stride, dilation;
  std::vector<int64_t> pads;
  bool cut = false;  // taps that read only padding are cut (TrimUnreachableTaps)
};

// Every geometry against the reference kernel. A dilated kernel larger than its input (DeepLabV3's
// atrous pyramid) loses the taps that read only padding, from either end of an axis, with any
// stride; the values stay the reference's.
TEST(DnnlOpsTest, ConvolutionGeometries) {
  std::vector<ConvCase> cases = {
      {"plain", 8, 16, 1, 3, 1, 1, {1, 1, 1, 1}},
      {"stride2", 8, 16, 1, 3, 2, 1, {1, 1, 1, 1}},
      {"asymmetric_pads", 8, 16, 1, 3, 1, 1, {0, 1, 2, 0}},
      {"groups", 8, 12, 4, 3, 1, 1, {1, 1, 1, 1}},
      {"depthwise", 16, 16, 16, 3, 2, 1, {1, 1, 1, 1}},
      {"dilation", 8, 8, 1, 3, 1, 2, {2, 2, 2, 2}},
      {"odd_channels_1x1", 3, 5, 1, 1, 1, 1, {0, 0, 0, 0}},
      {"kernel7_stride2", 3, 16, 1, 7, 2, 1, {3, 3, 3, 3}},
      {"atrous_beyond_the_image", 8, 8, 1, 3, 1, 24, {24, 24, 24, 24}, true},
      {"atrous_within_the_image", 8, 8, 1, 3, 1, 12, {12, 12, 12, 12}},
      {"atrous_stride2", 8, 8, 1, 3, 2, 24, {24, 24, 24, 24}, true},
      {"one_side_cut_per_axis", 8, 8, 1, 3, 1, 8, {12, 0, 0, 12}, true},
      {"atrous_depthwise", 8, 8, 8, 3, 1, 16, {16, 16, 16, 16}, true},
  };
  for (const ConvCase& c : cases) {
    ModelBuilder b;
    const int64_t h = 13, ext = (c.k - 1) * c.dilation + 1;
    int64_t oh = (h + c.pads[0] + c.pads[2] - ext) / c.stride + 1;
    int64_t ow = (h + c.pads[1] + c.pads[3] - ext) / c.stride + 1;
    b.Input("x", {2, c.c, h, h}).Output("y", {2, c.o, oh, ow});
    b.RandomWeight("w", {c.o, c.c / c.group, c.k, c.k}, 1).RandomWeight("b", {c.o}, 2);
    auto& n = b.Node("Conv", {"x", "w", "b"}, {"y"}, "conv");
    SetInt(n, "group", c.group);
    SetInts(n, "strides", {c.stride, c.stride});
    SetInts(n, "dilations", {c.dilation, c.dilation});
    SetInts(n, "pads", c.pads);
    PrepareStats s = Check(b, c.name);
    EXPECT_EQ(s.fallback_nodes, 0) << c.name;
    EXPECT_EQ(s.kernel_variants.count("taps reading padding cut"), c.cut ? 1u : 0u) << c.name;
  }
}

// How many convolutions of `model` (ONNX bytes) took kernel variant `variant`, with
// VERISUB_WINOGRAD=off and =on, every value in nChw16c; the outputs are the reference's either way
// and no node falls back to the reference kernels.
std::array<int, 2> WinogradVariantCounts(const std::string& model, const std::string& variant) {
  auto g = ImportOnnxBytes(model, "winograd");
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return {-1, -1};
  auto inputs = testing::RandomInputs(*g, 5);
  PrepareOptions opts;
  opts.layouts.assign(g->num_values(), specs::Layout::kNCHW16c);
  auto ref = MakeReferenceBackend()->Prepare(*g, {});
  EXPECT_TRUE(ref.ok());
  if (!ref.ok()) return {-1, -1};
  auto expected = (*ref)->Run(inputs);
  EXPECT_TRUE(expected.ok());
  if (!expected.ok()) return {-1, -1};
  ScopedEnv winograd("VERISUB_WINOGRAD");
  std::array<int, 2> taken{0, 0};
  for (int on = 0; on < 2; ++on) {
    winograd.Set(on ? "on" : "off");
    const PrepareStats stats =
        ExpectSameOutputs(*g, opts, inputs, *expected, on ? "winograd" : "direct");
    taken[on] = stats.kernel_variants.count(variant) ? stats.kernel_variants.at(variant) : 0;
    EXPECT_EQ(stats.fallback_nodes, 0);
  }
  return taken;
}

// 3x3 stride-1 convolutions may run on oneDNN's Winograd kernels (chosen by timing; here forced
// with VERISUB_WINOGRAD=on): the same values as the reference within float32 tolerance, with the
// ReLU and residual add fused, in blocked layouts; with =off none is taken. Skipped where oneDNN
// has no Winograd kernel (it needs AVX-512).
TEST(DnnlOpsTest, WinogradConvolutionsWhereOneDnnHasThem) {
  ModelBuilder b;
  b.Input("x", {1, 32, 20, 20}).Output("y", {1, 32, 20, 20});
  b.RandomWeight("w1", {32, 32, 3, 3}, 1).RandomWeight("b1", {32}, 2);
  b.RandomWeight("w2", {32, 32, 3, 3}, 3);
  SetInts(b.Node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r1"});
  SetInts(b.Node("Conv", {"r1", "w2"}, {"c2"}), "pads", {1, 1, 1, 1});
  b.Node("Add", {"c2", "x"}, {"y"});
  const std::array<int, 2> taken = WinogradVariantCounts(b.Bytes(), "winograd");
  EXPECT_EQ(taken[0], 0);
  if (taken[1] == 0) GTEST_SKIP() << "oneDNN has no Winograd convolution on this CPU";
  EXPECT_EQ(taken[1], 2);
}

// oneDNN's Winograd kernels take no SiLU post-op: a 3x3 convolution with SiLU (YOLO's
// Conv-BN-SiLU) runs the Winograd convolution bare, then the activation in the backend's SiLU
// pass; followed by a residual add (a C2f bottleneck), the activation as an eltwise step and the
// add as a binary add. The reference's values, forced on; with =off the direct kernels. Skipped
// where oneDNN has no Winograd convolution.
TEST(DnnlOpsTest, WinogradConvolutionsWithAnActivationAfterThem) {
  ModelBuilder b;
  b.Input("x", {1, 32, 20, 20}).Output("y", {1, 32, 20, 20});
  b.RandomWeight("w1", {32, 32, 3, 3}, 1).RandomWeight("b1", {32}, 2);
  b.RandomWeight("w2", {32, 32, 3, 3}, 3).RandomWeight("b2", {32}, 4);
  SetInts(b.Node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.Node("Sigmoid", {"c1"}, {"s1"});
  b.Node("Mul", {"c1", "s1"}, {"a1"});
  SetInts(b.Node("Conv", {"a1", "w2", "b2"}, {"c2"}), "pads", {1, 1, 1, 1});
  b.Node("Sigmoid", {"c2"}, {"s2"});
  b.Node("Mul", {"c2", "s2"}, {"a2"});
  b.Node("Add", {"a1", "a2"}, {"y"});
  const std::array<int, 2> bare = WinogradVariantCounts(b.Bytes(), "winograd");
  const std::array<int, 2> tail = WinogradVariantCounts(b.Bytes(), "winograd, activation after it");
  EXPECT_EQ(bare[0] + tail[0], 0);
  if (bare[1] + tail[1] == 0) GTEST_SKIP() << "oneDNN has no Winograd convolution on this CPU";
  EXPECT_EQ(bare[1], 1);  // the first, its SiLU in the pass after it
  EXPECT_EQ(tail[1], 1);  // the second, with its residual add
  EXPECT_EQ(WinogradVariantCounts(b.Bytes(), "silu after the primitive")[1], 1);
}

// ConvNeXt's block: a depthwise convolution, permuted channels-last for LayerNorm and the
// pointwise matmuls, permuted back and added to the block's input. With the image values stored
// channels-last, both transposes only rename dimensions and run as views: no transpose step and
// no reorder; in plain layouts they are strided copies. The same values either way.
TEST(DnnlOpsTest, TransposesBetweenChannelsFirstAndLastAreViews) {
  ModelBuilder b(17);  // LayerNormalization
  b.Input("x", {1, 8, 5, 6}).Output("y", {1, 8, 5, 6});
  b.RandomWeight("dw", {8, 1, 3, 3}, 1).RandomWeight("g", {8}, 2).RandomWeight("beta", {8}, 3);
  b.RandomWeight("w1", {8, 16}, 4).RandomWeight("w2", {16, 8}, 5);
  auto& conv = b.Node("Conv", {"x", "dw"}, {"c"}, "dwconv");
  SetInt(conv, "group", 8);
  SetInts(conv, "pads", {1, 1, 1, 1});
  SetInts(b.Node("Transpose", {"c"}, {"t"}, "to_last"), "perm", {0, 2, 3, 1});
  b.Node("LayerNormalization", {"t", "g", "beta"}, {"n"}, "norm");
  b.Node("MatMul", {"n", "w1"}, {"m1"}, "fc1");
  b.Node("Relu", {"m1"}, {"r"}, "relu");
  b.Node("MatMul", {"r", "w2"}, {"m2"}, "fc2");
  SetInts(b.Node("Transpose", {"m2"}, {"u"}, "to_first"), "perm", {0, 3, 1, 2});
  b.Node("Add", {"u", "x"}, {"y"}, "residual");
  auto g = ImportOnnxBytes(b.Bytes(), "convnext_block");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto transposes = [](PreparedModel& m) {
    int count = 0;
    for (const StepProfile& s : *m.Profile(1, true))
      count += s.kind.find("ranspose") != std::string::npos;
    return count;
  };
  const std::vector<int64_t> image = {1, 8, 5, 6};
  auto last = CheckInLayout(*g, specs::Layout::kPlain, 11, "channels-last", [&](const Value& v) {
    return v.dims == image ? specs::Layout::kNHWC : specs::Layout::kPlain;
  });
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(transposes(*last), 0);
  auto plain = CheckInLayout(*g, specs::Layout::kPlain, 11, "plain");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(transposes(*plain), 2);
}

// A constant mask applied by Where (a GPT decoder's causal mask: masked_fill with -inf, and the
// branches the other way round with a broadcast constant) runs as a host loop of the backend,
// not on the reference kernels; the values are the reference's.
TEST(DnnlOpsTest, WhereWithAConstantMask) {
  std::vector<int64_t> causal;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) causal.push_back(j <= i);
  for (bool fill_first : {true, false}) {
    ModelBuilder b;
    b.Input("x", {1, 2, 4, 4}).Output("y", {1, 2, 4, 4});
    b.Weight("mask", HostTensor::FromInts(kBool, {1, 1, 4, 4}, causal));
    if (fill_first) {
      b.Weight("fill", HostTensor::FromDoubles(kFloat, {}, {-1e9}));
      b.Node("Where", {"mask", "x", "fill"}, {"y"}, "where");
    } else {
      b.RandomWeight("fill", {4}, 3);
      b.Node("Where", {"mask", "fill", "x"}, {"y"}, "where");
    }
    const std::string name = fill_first ? "masked_fill" : "constant_where_true";
    PrepareStats s = Check(b, name, /*map=*/false);
    EXPECT_EQ(s.fallback_nodes, 0) << name;
  }
}

// The sub-operators an import now maps (an RMSNorm's Sqrt and 1 / y, a rotary embedding's Neg)
// run as oneDNN eltwise primitives, not on the reference kernels; the values are the reference's.
TEST(DnnlOpsTest, MappedSubOperatorsRunAsEltwisePrimitives) {
  ModelBuilder b;
  b.Input("x", {2, 8}).Output("y", {2, 8});
  b.Weight("one", HostTensor::FromDoubles(kFloat, {}, {1.0}));
  b.Node("Abs", {"x"}, {"a"});
  b.Node("Sqrt", {"a"}, {"r"});
  b.Node("Div", {"one", "r"}, {"i"});
  b.Node("Neg", {"i"}, {"y"});
  auto g = ImportOnnxBytes(b.Bytes(), "subops");
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (const char* kind : {"sqrt", "recip", "neg"})
    EXPECT_EQ(testing::CountKind(*g, kind), 1) << kind;
  EXPECT_EQ(Check(b, "subops").fallback_nodes, 0);
}

// An Expand repeating one axis of extent 1 (grouped-query attention's keys and values over the
// heads of a group) imports as broadcast and runs as the Expand copy loop; one repeating two
// axes stays an opaque Expand. Both compute the reference's values.
TEST(DnnlOpsTest, ExpandOfOneAxisIsABroadcast) {
  ModelBuilder b;
  b.Input("k", {1, 2, 1, 4, 8}).Output("y", {1, 2, 3, 4, 8}).Output("z", {3, 2, 3, 4, 8});
  b.Int64Weight("one_axis", {1, 2, 3, 4, 8}).Int64Weight("two_axes", {3, 2, 3, 4, 8});
  b.Node("Expand", {"k", "one_axis"}, {"y"});
  b.Node("Expand", {"k", "two_axes"}, {"z"});
  auto g = ImportOnnxBytes(b.Bytes(), "expand");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(testing::CountKind(*g, "broadcast"), 1);
  EXPECT_EQ(testing::CountKind(*g, "onnx:Expand"), 1);
  EXPECT_EQ(Check(b, "expand").fallback_nodes, 0);
}

// Kernels hold references to a slot's dimensions (KernelBuilder::dims) while a Read adds
// converted slots: the slots must not move. (They once lived in a vector: MaxViT's matmuls read
// freed dims after a conversion reallocated it, now and then a SIGSEGV.)
TEST(DnnlOpsTest, SlotsStayInPlaceWhileConversionsAreAdded) {
  dnnl_backend::ModelDraft draft;
  draft.engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
  dnnl_backend::Slot x;
  x.name = "x";
  x.dims = {1, 16, 4, 4};
  x.desc = dnnl_backend::PlainDesc(x.dims);
  draft.slots.push_back(x);
  dnnl_backend::Group group;
  dnnl_backend::KernelBuilder b(&draft, group, false);
  const std::vector<int64_t>& dims = b.dims(0);
  int added = 0;
  for (auto type : {dnnl::memory::data_type::f32, dnnl::memory::data_type::bf16})
    for (specs::Layout l : {specs::Layout::kPlain, specs::Layout::kNHWC, specs::Layout::kNCHW8c,
                            specs::Layout::kNCHW16c})
      if (auto want = dnnl_backend::LayoutDesc(x.dims, l, type); want && *want != x.desc) {
        b.Converted(0, *want);
        ++added;
      }
  EXPECT_EQ(added, 7);
  EXPECT_EQ(&b.dims(0), &dims);
  EXPECT_EQ(dims, x.dims);
}

// A kernel computed at run time (a rewritten graph can compute one) is converted to the
// convolution's layout each run instead of falling back to the reference kernels.
TEST(DnnlOpsTest, ConvolutionWithRunTimeWeights) {
  ModelBuilder b;
  b.Input("x", {1, 8, 9, 9}).Input("w", {16, 8, 3, 3}).Output("y", {1, 16, 9, 9});
  b.RandomWeight("b", {16}, 2);
  SetInts(b.Node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c"}, {"y"}, "relu");
  PrepareStats s = Check(b, "conv_runtime_weights");
  EXPECT_EQ(s.fallback_nodes, 0);
  EXPECT_EQ(s.fused_nodes, 2);  // the bias and the relu
}

TEST(DnnlOpsTest, ConvBatchnormReluResidualFuseIntoOneKernel) {
  ModelBuilder b;
  b.Input("x", {1, 16, 10, 10}).Output("y", {1, 16, 10, 10});
  b.RandomWeight("w", {16, 16, 3, 3}, 1).RandomWeight("b", {16}, 2);
  b.RandomWeight("scale", {16}, 3).RandomWeight("shift", {16}, 4).RandomWeight("mean", {16}, 5);
  HostTensor var = HostTensor::FromDoubles(kFloat, {16}, std::vector<double>(16, 0.7));
  b.Weight("var", var);
  SetInts(b.Node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  b.Node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"bn"}, "bn");
  b.Node("Add", {"bn", "x"}, {"sum"}, "residual");
  b.Node("Relu", {"sum"}, {"y"}, "relu");
  PrepareStats s = Check(b, "conv_bn_add_relu");
  // bias_add, the batchnorm's channel_scale and bias_add, add, relu into the convolution.
  EXPECT_EQ(s.fused_nodes, 5);
  EXPECT_EQ(s.fallback_nodes, 0);
}

TEST(DnnlOpsTest, ResidualAddInPlaceAndCopied) {
  // y1 = relu(conv1(x)); y2 = conv2b(conv2(y1)) + y1 (y1 dies there: in place, as in a ResNet
  // block; a convolution reading y1 itself could not sum over it); the second add reads x, which
  // is a graph input (copied).
  ModelBuilder b;
  b.Input("x", {1, 8, 6, 6}).Output("y", {1, 8, 6, 6});
  b.RandomWeight("w1", {8, 8, 3, 3}, 1).RandomWeight("w2", {8, 8, 3, 3}, 2);
  b.RandomWeight("w2b", {8, 8, 1, 1}, 4).RandomWeight("w3", {8, 8, 1, 1}, 3);
  SetInts(b.Node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"y1"});
  SetInts(b.Node("Conv", {"y1", "w2"}, {"c2a"}), "pads", {1, 1, 1, 1});
  b.Node("Conv", {"c2a", "w2b"}, {"c2"});
  b.Node("Add", {"c2", "y1"}, {"y2"});
  b.Node("Conv", {"y2", "w3"}, {"c3"});
  b.Node("Add", {"x", "c3"}, {"y"});
  PrepareStats s = Check(b, "residuals");
  EXPECT_EQ(s.fused_nodes, 3);
  auto g = ImportOnnxBytes(b.Bytes(), "residuals");
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (specs::Layout layout : {specs::Layout::kPlain, specs::Layout::kNCHW8c}) {
    std::unique_ptr<PreparedModel> m = CheckInLayout(*g, layout, 3, "residuals");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->stats().in_place, 1) << specs::LayoutName(layout);  // the first sum
  }
}

TEST(DnnlOpsTest, Pooling) {
  struct PoolCase {
    std::string op;
    int64_t k, s;
    std::vector<int64_t> pads;
    int ceil, include_pad;
    int64_t out;
  };
  std::vector<PoolCase> cases = {
      {"MaxPool", 3, 2, {0, 0, 0, 0}, 1, 0, 6},  // squeezenet's ceil mode: 13 -> 6
      {"MaxPool", 3, 2, {1, 1, 1, 1}, 0, 0, 7},      {"AveragePool", 3, 1, {1, 1, 1, 1}, 0, 1, 13},
      {"AveragePool", 3, 1, {1, 1, 1, 1}, 0, 0, 13}, {"AveragePool", 2, 2, {0, 0, 0, 0}, 0, 0, 6},
  };
  for (const PoolCase& c : cases) {
    ModelBuilder b;
    b.Input("x", {2, 8, 13, 13}).RandomWeight("w", {8, 8, 1, 1}, 1);
    b.Output("y", {2, 8, c.out, c.out});
    b.Node("Conv", {"x", "w"}, {"c"});  // blocked input
    auto& n = b.Node(c.op, {"c"}, {"y"});
    SetInts(n, "kernel_shape", {c.k, c.k});
    SetInts(n, "strides", {c.s, c.s});
    SetInts(n, "pads", c.pads);
    SetInt(n, "ceil_mode", c.ceil);
    if (c.op == "AveragePool") SetInt(n, "count_include_pad", c.include_pad);
    PrepareStats s = Check(b, c.op);
    EXPECT_EQ(s.fallback_nodes, 0) << c.op;
  }
  ModelBuilder g;
  g.Input("x", {2, 8, 5, 5}).Output("y", {2, 8, 1, 1});
  g.Node("GlobalAveragePool", {"x"}, {"y"});
  EXPECT_EQ(Check(g, "global_average_pool").fallback_nodes, 0);
}

// PyTorch exports avg_pool2d(count_include_pad=True) and explicit F.pad as Pad nodes; a zero
// spatial Pad becomes the window padding of the pool or convolution that reads it.
TEST(DnnlOpsTest, ZeroPadsFoldIntoWindows) {
  for (std::string op : {"AveragePool", "Conv"}) {
    ModelBuilder b;
    b.Input("x", {1, 8, 6, 6}).Output("y", {1, 8, 6, 7}).RandomWeight("w", {8, 8, 3, 3}, 1);
    b.Int64Weight("pads", {0, 0, 1, 1, 0, 0, 1, 2});
    b.Node("Relu", {"x"}, {"r"});
    b.Node("Pad", {"r", "pads"}, {"p"});
    if (op == "Conv") {
      b.Node("Conv", {"p", "w"}, {"y"});
    } else {
      SetInts(b.Node("AveragePool", {"p"}, {"y"}), "kernel_shape", {3, 3});
    }
    // Imported as exported (the import moves such a Pad into the window's own pads).
    PrepareStats s = Check(b, "pad_" + op, /*map=*/false);
    EXPECT_EQ(s.fallback_nodes, 0) << op;
    EXPECT_EQ(s.fused_nodes, 1) << op;
  }
}

TEST(DnnlOpsTest, Activations) {
  for (std::string op : {"Relu", "Sigmoid", "Tanh", "Exp", "HardSwish", "HardSigmoid", "LeakyRelu",
                         "Elu", "Softplus", "Abs", "Neg", "Clip"}) {
    ModelBuilder b(14);  // HardSwish
    b.Input("x", {2, 3, 4, 5}).Output("y", {2, 3, 4, 5});
    std::vector<std::string> in = {"x"};
    if (op == "Clip") {
      b.Weight("lo", HostTensor::FromDoubles(kFloat, {}, {-0.3}));
      b.Weight("hi", HostTensor::FromDoubles(kFloat, {}, {0.4}));
      in = {"x", "lo", "hi"};
    }
    b.Node(op, in, {"y"});
    EXPECT_EQ(Check(b, op).fallback_nodes, 0) << op;
  }
}

TEST(DnnlOpsTest, ActivationsFuseIntoConvolution) {
  for (std::string op : {"Relu", "Sigmoid", "Clip", "HardSwish"}) {
    ModelBuilder b(14);
    b.Input("x", {1, 4, 6, 6}).Output("y", {1, 8, 6, 6}).RandomWeight("w", {8, 4, 1, 1}, 1);
    b.Node("Conv", {"x", "w"}, {"c"});
    std::vector<std::string> in = {"c"};
    if (op == "Clip") {
      b.Weight("lo", HostTensor::FromDoubles(kFloat, {}, {0}));
      b.Weight("hi", HostTensor::FromDoubles(kFloat, {}, {6}));
      in = {"c", "lo", "hi"};
    }
    b.Node(op, in, {"y"});
    EXPECT_EQ(Check(b, "conv_" + op).fused_nodes, 1) << op;
  }
}

// Operator set v2's activations and conv2d_bias run on oneDNN, alone and fused into a
// convolution.
TEST(DnnlOpsTest, SpecActivationsAndConvBias) {
  for (std::string op :
       {"relu6", "hard_sigmoid", "hard_swish", "silu", "gelu", "gelu_tanh", "exp"}) {
    auto g = ParseGraphText("input x [2,3,4,5]\noutput (" + op + " x)\n");
    ASSERT_TRUE(g.ok()) << g.status().message();
    PrepareStats stats;
    auto cmp = testing::CompareWithReference(*g, testing::RandomInputs(*g, 3), &stats);
    EXPECT_EQ(cmp.error, "") << op;
    EXPECT_LT(cmp.max_rel, kTolerance) << op;
    EXPECT_EQ(stats.fallback_nodes, 0) << op;
    auto fused = ParseGraphText(
        "input x [1,4,6,6]\nweight w [8,4,3,3]\nweight b [8]\noutput (" + op +
        " (conv2d_bias[stride_h=1,stride_w=1,padding=same,activation=none,group=1] x w b))\n");
    ASSERT_TRUE(fused.ok()) << fused.status().message();
    PrepareStats fs;
    auto fc = testing::CompareWithReference(*fused, testing::RandomInputs(*fused, 4), &fs);
    EXPECT_EQ(fc.error, "") << op;
    EXPECT_LT(fc.max_rel, kTolerance) << op;
    EXPECT_EQ(fs.fallback_nodes, 0) << op;
    if (op != "hard_sigmoid") {
      EXPECT_EQ(fs.fused_nodes, 1) << op;
    }
  }
}

TEST(DnnlOpsTest, BinaryWithBroadcasting) {
  struct BinCase {
    std::string op;
    std::vector<int64_t> a, b;
  };
  std::vector<BinCase> cases = {
      {"Add", {2, 3, 4, 5}, {2, 3, 4, 5}}, {"Mul", {2, 3, 4, 5}, {1, 3, 1, 1}},
      {"Sub", {2, 3, 4, 5}, {5}},          {"Div", {2, 3, 4, 5}, {3, 1, 1}},
      {"Mul", {1}, {2, 3, 4, 5}},          {"Add", {2, 1, 4, 5}, {2, 3, 4, 5}},
      {"Sub", {2, 3, 4, 5}, {}},
  };
  for (const BinCase& c : cases) {
    ModelBuilder b;
    b.Input("a", c.a).Input("b", c.b).Output("y", {2, 3, 4, 5});
    b.Node(c.op, {"a", "b"}, {"y"});
    Check(b, c.op + DimsToString(c.b));
  }
  // A constant operand broadcast over a blocked tensor.
  ModelBuilder b;
  b.Input("x", {1, 8, 5, 5}).Output("y", {1, 8, 5, 5}).RandomWeight("w", {8, 8, 1, 1}, 1);
  b.RandomWeight("s", {1, 8, 1, 1}, 2);
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("Relu", {"c"}, {"r"});
  b.Node("Mul", {"r", "s"}, {"y"});
  Check(b, "blocked_mul");
}

TEST(DnnlOpsTest, ConcatOfBlockedBranches) {
  ModelBuilder b;
  b.Input("x", {1, 8, 7, 7}).Output("y", {1, 45, 7, 7});
  b.RandomWeight("w1", {16, 8, 1, 1}, 1).RandomWeight("w2", {8, 8, 3, 3}, 2);
  b.RandomWeight("w3", {13, 8, 1, 1}, 3);
  b.Node("Conv", {"x", "w1"}, {"a"});
  SetInts(b.Node("Conv", {"x", "w2"}, {"c"}), "pads", {1, 1, 1, 1});
  b.Node("Conv", {"x", "w3"}, {"d"});
  SetInt(b.Node("Concat", {"a", "c", "d", "x"}, {"cat"}), "axis", 1);
  b.Node("Relu", {"cat"}, {"y"});
  PrepareStats s = Check(b, "concat");
  EXPECT_EQ(s.fallback_nodes, 0);
}

// Channel concats of convolution outputs (fire modules, inception blocks) cost no copy: the
// convolutions write into the concat's buffer. Inputs that cannot be placed (a graph input, odd
// channel counts, one value twice) take the copying concat, with the same results. The layouts
// are assigned (channel-blocked): left to itself, oneDNN on AVX-512 stores convolution outputs
// channels-last, where a channel slice is not contiguous and the concat copies.
TEST(DnnlOpsTest, ConcatInPlace) {
  for (int variant = 0; variant < 3; ++variant) {
    ModelBuilder b;
    int64_t c3 = variant == 1 ? 12 : 16;
    b.Input("x", {1, 8, 7, 7}).Output("y", {1, 32 + c3 + (variant == 2 ? 16 : 0), 7, 7});
    b.RandomWeight("w1", {16, 8, 1, 1}, 1).RandomWeight("w2", {16, 8, 3, 3}, 2);
    b.RandomWeight("w3", {c3, 8, 1, 1}, 3);
    b.Node("Conv", {"x", "w1"}, {"a"});
    SetInts(b.Node("Conv", {"x", "w2"}, {"c"}), "pads", {1, 1, 1, 1});
    b.Node("Relu", {"c"}, {"r"});
    b.Node("Conv", {"x", "w3"}, {"d"});
    std::vector<std::string> in = {"a", "r", "d"};
    if (variant == 2) in.push_back("a");
    SetInt(b.Node("Concat", in, {"cat"}), "axis", 1);
    b.Node("Relu", {"cat"}, {"y"});
    const std::string name = "concat_in_place_" + std::to_string(variant);
    auto g = ImportOnnxBytes(b.Bytes(), name);
    ASSERT_TRUE(g.ok()) << g.status().message();
    std::unique_ptr<PreparedModel> m = CheckInLayout(*g, specs::Layout::kNCHW8c, 7, name);
    ASSERT_TRUE(m);
    const PrepareStats s = m->stats();
    int kernels = 4 + (variant == 0 ? 0 : 1);  // three convolutions, the relu, a copying concat
    EXPECT_EQ(s.steps - s.reorders, kernels) << variant;
  }
}

// RAFT's ConvGRU: the features x (a concatenation of their own) concatenated to the hidden state
// h for the gates, and again to the reset hidden state r*h for the candidate. Both concats write
// in place, each holding a copy of x; the second must not take the first's copy out of the
// first's buffer (the gates then read garbage: outputs 60% off).
TEST(DnnlOpsTest, AValueCopiedIntoTwoInPlaceConcatsGetsACopyInEach) {
  ModelBuilder b;
  b.Input("a", {1, 8, 5, 5}).Output("y", {1, 8, 5, 5});
  for (auto [w, in] : {std::pair{"wm", 8}, {"wh", 8}, {"wz", 24}, {"wr", 24}, {"wq", 24}})
    b.RandomWeight(w, {8, in, 3, 3}, static_cast<uint64_t>(in + w[1]));
  auto conv = [&](const char* x, const char* w, const char* y) {
    SetInts(b.Node("Conv", {x, w}, {y}, y), "pads", {1, 1, 1, 1});
  };
  b.Node("Relu", {"a"}, {"c"});
  conv("a", "wm", "mc");
  b.Node("Relu", {"mc"}, {"m"});
  conv("a", "wh", "hc");
  b.Node("Tanh", {"hc"}, {"h"});
  SetInt(b.Node("Concat", {"c", "m"}, {"x"}), "axis", 1);
  SetInt(b.Node("Concat", {"h", "x"}, {"hx"}), "axis", 1);
  conv("hx", "wz", "zc");
  b.Node("Sigmoid", {"zc"}, {"z"});
  conv("hx", "wr", "rc");
  b.Node("Sigmoid", {"rc"}, {"r"});
  b.Node("Mul", {"r", "h"}, {"rh"});
  SetInt(b.Node("Concat", {"rh", "x"}, {"rhx"}), "axis", 1);
  conv("rhx", "wq", "qc");
  b.Node("Tanh", {"qc"}, {"q"});
  b.Node("Mul", {"z", "q"}, {"zq"});
  b.Node("Add", {"zq", "h"}, {"y"});
  auto g = ImportOnnxBytes(b.Bytes(), "convgru");
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (specs::Layout l : {specs::Layout::kPlain, specs::Layout::kNCHW8c})
    EXPECT_TRUE(CheckInLayout(*g, l, 11, "convgru"));
}

// Adds "rows": the rows of graph input "x" whose graph input "v" is positive (NonZero, so
// their count is known only at run time, as the detections a detector keeps).
void KeepPositiveRows(ModelBuilder& b) {
  b.Weight("zero", HostTensor::FromDoubles(kFloat, {1}, {0}));
  b.Int64Weight("flat", {-1});
  b.Node("Greater", {"v", "zero"}, {"keep"});
  b.Node("NonZero", {"keep"}, {"where"});
  b.Node("Reshape", {"where", "flat"}, {"index"});
  SetInt(b.Node("Gather", {"x", "index"}, {"rows"}), "axis", 0);
}

// The model imported with shapes known only at run time allowed.
StatusOr<Graph> ImportWithRunTimeShapes(ModelBuilder& b, const std::string& name) {
  ImportOptions options;
  options.require_static_shapes = false;
  return ImportOnnxBytes(b.Bytes(), name, options);
}

// The model imported with shapes known only at run time allowed, prepared on oneDNN; null (and a
// failure) when either step fails.
std::unique_ptr<PreparedModel> PrepareWithRunTimeShapes(ModelBuilder& b, const std::string& name) {
  auto g = ImportWithRunTimeShapes(b, name);
  if (!g.ok()) {
    ADD_FAILURE() << name << ": " << g.status().message();
    return nullptr;
  }
  auto m = MakeDnnlBackend()->Prepare(*g, {});
  if (!m.ok()) {
    ADD_FAILURE() << name << ": " << m.status().message();
    return nullptr;
  }
  return std::move(m).value();
}

// One run of `m` on `inputs`, then a profile that reruns every step, each also alone: both run.
void ExpectProfileAfterOneRun(PreparedModel& m, const std::vector<HostTensor>& inputs) {
  auto ran = m.Run(inputs);
  ASSERT_TRUE(ran.ok()) << ran.status().message();
  auto profile = m.Profile(2, true);
  EXPECT_TRUE(profile.ok()) << profile.status().message();
}

// Runs the model on oneDNN and on the reference backend for each `v` (with `x`) and expects the
// same outputs, the first with as many rows as `v` has positive elements.
void ExpectAgreementForEveryCount(ModelBuilder& b, const std::string& name, const HostTensor& x,
                                  const std::vector<std::vector<double>>& vs) {
  auto g = ImportWithRunTimeShapes(b, name);
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto m = MakeDnnlBackend()->Prepare(*g, {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto ref = MakeReferenceBackend()->Prepare(*g, {});
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  for (const std::vector<double>& v : vs) {
    const std::vector<HostTensor> in = {
        HostTensor::FromDoubles(kFloat, {static_cast<int64_t>(v.size())}, v), x};
    auto out = (*m)->Run(in);
    auto expected = (*ref)->Run(in);
    ASSERT_TRUE(out.ok() && expected.ok()) << name;
    const auto cmp = testing::Compare(*out, *expected);
    EXPECT_EQ(cmp.error, "") << name;
    EXPECT_LT(cmp.max_rel, kTolerance) << name;
    EXPECT_EQ((*out)[0].dims[0], std::count_if(v.begin(), v.end(), [](double e) { return e > 0; }))
        << name;
  }
}

// Adds a box head over the kept rows of `rows` proposals of 8 features: a Gemm with a bias ("y")
// and a MatMul ("z") by constant weights.
void BoxHead(ModelBuilder& b, int64_t rows) {
  b.Input("v", {rows}).Input("x", {rows, 8}).Output("y", {-1, 5}).Output("z", {-1, 3});
  b.RandomWeight("w", {5, 8}, 1).RandomWeight("c", {5}, 2).RandomWeight("w2", {8, 3}, 3);
  KeepPositiveRows(b);
  SetInt(b.Node("Gemm", {"rows", "w", "c"}, {"y"}), "transB", 1);
  b.Node("MatMul", {"rows", "w2"}, {"z"});
}

// A detector's box head: the rows its Gemm and MatMul read are the proposals NMS kept, known
// only at run time (host values, no static shape); they run on one oneDNN matmul for any row
// count and must agree with the reference kernels, also when no row is kept.
TEST(DnnlOpsTest, GemmAndMatMulOverRowsKnownOnlyAtRunTime) {
  ModelBuilder b(16);
  BoxHead(b, 7);
  ExpectAgreementForEveryCount(
      b, "rows_at_run_time", testing::RandomTensor({7, 8}, 4),
      {{1, -1, 2, 3, -4, 5, 6}, {-1, -1, -1, -1, -1, -1, -1}, {1, 1, 1, 1, 1, 1, 1}});
}

// The same over more rows than one kernel's chunk of 16, after three products of a few rows
// (a decoder's steps: the weights move into the layout of oneDNN's kernel for a fixed row
// count): whole chunks, the rest through a chunk padded, and the kernels of a few rows; every
// count agrees with the reference kernels, before the move and after.
TEST(DnnlOpsTest, GemmAndMatMulOverRowsInChunks) {
  ModelBuilder b(16);
  BoxHead(b, 40);
  // Keeps the first n of the 40 rows.
  auto first = [](int n) {
    std::vector<double> v(40, -1.0);
    std::fill(v.begin(), v.begin() + n, 1.0);
    return v;
  };
  ExpectAgreementForEveryCount(b, "rows_in_chunks", testing::RandomTensor({40, 8}, 4),
                               {first(40), first(5), first(1), first(16), first(40), first(17),
                                first(33), first(5), first(0), first(38)});
}

// A mask head: convolutions and a transposed convolution over the detections kept, a batch
// known only at run time, on oneDNN primitives made per batch size (and their buffers, reused
// when a batch size comes again; a 3x3 window over 64 channels by Winograd's algorithm), and
// pools (a max pool padded and strided, an average pool not counting its padding, on oneDNN; a
// max pool whose ceil_mode window ends past the padding, on the reference kernel); they must
// agree with the reference kernels for every count of detections, none included.
TEST(DnnlOpsTest, ConvolutionsOverABatchKnownOnlyAtRunTime) {
  ModelBuilder b(16);
  b.Input("v", {5}).Input("x", {5, 4, 6, 6});
  b.Output("y", {-1, 3, 12, 12}).Output("z", {-1, 8, 2, 2});
  b.Output("mp", {-1, 8, 3, 3}).Output("ap", {-1, 8, 6, 6}).Output("cp", {-1, 4, 3, 3});
  b.Output("wide", {-1, 64, 6, 6}).Output("gap", {-1, 64, 1, 1}).Output("side", {-1, 64, 6, 6});
  b.RandomWeight("w64", {64, 4, 1, 1}, 7).RandomWeight("w3", {64, 64, 3, 3}, 8);
  b.RandomWeight("w1", {64, 64, 1, 1}, 9).RandomWeight("b64", {64, 1, 1}, 10);
  b.RandomWeight("w", {8, 4, 3, 3}, 1).RandomWeight("c", {8}, 2);
  b.RandomWeight("wt", {8, 3, 2, 2}, 3).RandomWeight("ct", {3}, 4);
  b.RandomWeight("wg", {8, 2, 3, 3}, 5);
  KeepPositiveRows(b);
  SetInts(b.Node("Conv", {"rows", "w", "c"}, {"h"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"h"}, {"r"});
  SetInts(b.Node("ConvTranspose", {"r", "wt", "ct"}, {"y"}), "strides", {2, 2});
  // Grouped, dilated and strided, without a bias.
  onnx::NodeProto& g2 = b.Node("Conv", {"rows", "wg"}, {"z"});
  SetInt(g2, "group", 2);
  SetInts(g2, "dilations", {2, 2});
  SetInts(g2, "strides", {1, 1});
  onnx::NodeProto& mp = b.Node("MaxPool", {"r"}, {"mp"});
  SetInts(mp, "kernel_shape", {3, 3});
  SetInts(mp, "strides", {2, 2});
  SetInts(mp, "pads", {1, 1, 1, 1});
  onnx::NodeProto& ap = b.Node("AveragePool", {"h"}, {"ap"});
  SetInts(ap, "kernel_shape", {3, 3});
  SetInts(ap, "pads", {1, 1, 1, 1});
  onnx::NodeProto& cp = b.Node("MaxPool", {"rows"}, {"cp"});
  SetInts(cp, "kernel_shape", {3, 3});
  SetInts(cp, "strides", {2, 2});
  SetInt(cp, "ceil_mode", 1);  // 6 wide: windows at 0, 2 and 4, the last one over 4 and 5
  // 64 channels, in channel blocks from one convolution to the next (through a 3x3 window of
  // stride 1: Winograd's where the CPU has it), a residual added in place, a ReLU and a max pool;
  // a sigmoid whose reader, a global pool, does not take blocks gets them in row-major order, as
  // do the model's outputs.
  b.Node("Conv", {"rows", "w64"}, {"r64"});
  SetInts(b.Node("Conv", {"r64", "w3"}, {"c3"}), "pads", {1, 1, 1, 1});
  b.Node("Add", {"c3", "r64"}, {"res"});
  b.Node("Relu", {"res"}, {"act"});
  onnx::NodeProto& m3 = b.Node("MaxPool", {"act"}, {"m3"});
  SetInts(m3, "kernel_shape", {3, 3});
  SetInts(m3, "pads", {1, 1, 1, 1});
  b.Node("Conv", {"m3", "w1"}, {"wide"});
  b.Node("Sigmoid", {"m3"}, {"sg"});
  b.Node("GlobalAveragePool", {"sg"}, {"gap"});
  // A bias broadcast over a value in channel blocks: added to it in row-major order.
  b.Node("Conv", {"r64", "w1"}, {"cb"});
  b.Node("Add", {"cb", "b64"}, {"side"});
  ExpectAgreementForEveryCount(b, "batch_at_run_time", testing::RandomTensor({5, 4, 6, 6}, 6),
                               // Counts seen again run on the buffers their shape's first run made.
                               {{1, -1, 2, 3, -4},
                                {-1, -1, -1, -1, -1},
                                {1, 1, 1, 1, 1},
                                {-1, 2, -3, -4, -5},
                                {3, -1, 2, 1, -4},
                                {1, 1, 1, 1, 1}});
  // The six convolutions, the transposed one, the two ReLUs, the four pools, the two adds and
  // the sigmoid; the outputs left in channel blocks: h (read by a ReLU and a pool), r64, c3, res,
  // act, m3 and cb.
  auto m = PrepareWithRunTimeShapes(b, "batch_at_run_time");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->stats().kernel_variants["kernels of run-time shape"], 16);
  EXPECT_EQ(m->stats().kernel_variants["outputs left in channel blocks"], 7);
  // A profile labels by what ran: the convolutions and two of the max pools on oneDNN, the
  // ceil_mode max pool (declined at run time), the rows' Gather and the global pool on the
  // reference kernels.
  auto ran = m->Run({HostTensor::FromDoubles(kFloat, {5}, {1, -1, 2, 3, -4}),
                     testing::RandomTensor({5, 4, 6, 6}, 6)});
  ASSERT_TRUE(ran.ok()) << ran.status().message();
  auto profile = m->Profile(1, false);
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  std::map<std::string, std::array<int, 2>> by_kind;  // [on oneDNN, on the reference]
  for (const StepProfile& p : *profile) ++by_kind[p.kind][p.reference ? 1 : 0];
  EXPECT_EQ(by_kind["onnx:Conv"], (std::array<int, 2>{6, 0}));
  EXPECT_EQ(by_kind["onnx:MaxPool"], (std::array<int, 2>{2, 1}));
  EXPECT_EQ(by_kind["onnx:Gather"], (std::array<int, 2>{0, 1}));
  EXPECT_EQ(by_kind["onnx:GlobalAveragePool"], (std::array<int, 2>{0, 1}));
}

// Attention over a sequence known only at run time (the rows kept): products of two computed
// values (scores, their weighted sum; batched over heads and with a shared right matrix),
// softmax along the last axis and, at opset 11, over the flattened trailing axes, a layer
// normalization with and without a bias, and broadcast arithmetic; each of the first four on
// oneDNN (counted), all agreeing with the reference kernels at every length, none included.
TEST(DnnlOpsTest, AttentionOverASequenceKnownOnlyAtRunTime) {
  for (int64_t opset : {17, 11}) {
    ModelBuilder b(opset);
    b.Input("v", {6}).Input("x", {6, 8});
    b.Output("y", {-1, 8}).Output("z", {2, -1, -1}).Output("n", {-1, 8});
    b.RandomWeight("wq", {8, 8}, 1).RandomWeight("wo", {8, 8}, 2).RandomWeight("g", {8}, 3);
    b.RandomWeight("beta", {8}, 4).RandomWeight("scale", {1}, 5);
    b.Int64Weight("heads", {-1, 2, 4});
    KeepPositiveRows(b);
    b.Node("MatMul", {"rows", "wq"}, {"q"});
    SetInts(b.Node("Transpose", {"rows"}, {"kt"}), "perm", {1, 0});
    b.Node("MatMul", {"q", "kt"}, {"s"});
    b.Node("Mul", {"s", "scale"}, {"scaled"});
    SetInt(b.Node("Softmax", {"scaled"}, {"p"}), "axis", 1);
    b.Node("MatMul", {"p", "rows"}, {"o"});
    b.Node("MatMul", {"o", "wo"}, {"y"});
    // Per head: [rows, 2, 4] -> [2, rows, 4] by itself transposed: [2, rows, rows].
    b.Node("Reshape", {"rows", "heads"}, {"h"});
    SetInts(b.Node("Transpose", {"h"}, {"hq"}), "perm", {1, 0, 2});
    SetInts(b.Node("Transpose", {"h"}, {"hk"}), "perm", {1, 2, 0});
    b.Node("MatMul", {"hq", "hk"}, {"hs"});
    SetInt(b.Node("Softmax", {"hs"}, {"z"}), "axis", opset < 13 ? 1 : -1);
    if (opset >= 17) {
      SetInt(b.Node("LayerNormalization", {"o", "g", "beta"}, {"ln"}), "axis", -1);
      b.Node("LayerNormalization", {"ln", "g"}, {"n"});
    } else {
      b.Node("Add", {"o", "beta"}, {"n"});
    }
    ExpectAgreementForEveryCount(b, "attention_at_run_time", testing::RandomTensor({6, 8}, 6),
                                 {{1, -1, 2, 3, -4, 5},
                                  {-1, -1, -1, -1, -1, -1},
                                  {1, 1, 1, 1, 1, 1},
                                  {-1, 2, -3, -4, -5, -6}});
    auto m = PrepareWithRunTimeShapes(b, "attention_at_run_time");
    ASSERT_TRUE(m);
    // The three products of computed values, the two softmaxes (opset 11: the second over its
    // two trailing axes flattened, the first's axis 1 the last), two layer norms at opset 17, the
    // matmuls with constant weights (2), the scale (and at opset 11 the bias) over the value it
    // reads last, in place.
    EXPECT_EQ(m->stats().kernel_variants["kernels of run-time shape"], opset >= 17 ? 10 : 9)
        << opset;
  }
}

// A product by a transposed value of run-time shape (q k^T per head over a run-time length),
// folded by FoldRunTimeTransposesIntoMatMuls, is one product reading that value transposed, no
// Transpose before it, computing what the reference kernels do on the graph as written, at every
// count.
TEST(DnnlOpsTest, ProductsByATransposedValueOfRunTimeShape) {
  // k^T alone (rank 3), then attention's heads whole: q, k and v moved to [1, heads, rows, 4],
  // the context moved back to [1, rows, heads, 4], every transpose folded (rank 4).
  for (bool heads : {false, true}) {
    ModelBuilder b(16);
    b.Input("v", {6}).Input("x", {6, 8});
    KeepPositiveRows(b);
    b.Node("Neg", {"rows"}, {"other"});
    if (!heads) {
      b.Output("z", {-1, 2, -1});
      b.Int64Weight("shape", {-1, 2, 4});
      b.Node("Reshape", {"rows", "shape"}, {"h"});
      b.Node("Reshape", {"other", "shape"}, {"o"});
      SetInts(b.Node("Transpose", {"h"}, {"hq"}), "perm", {1, 0, 2});
      SetInts(b.Node("Transpose", {"o"}, {"ho"}), "perm", {1, 0, 2});
      SetInts(b.Node("Transpose", {"ho"}, {"hkt"}), "perm", {0, 2, 1});
      b.Node("MatMul", {"hq", "hkt"}, {"s"});
      SetInts(b.Node("Transpose", {"s"}, {"z"}), "perm", {1, 0, 2});  // rows first
    } else {
      b.Output("z", {-1, 2, 4});
      b.Int64Weight("shape", {1, -1, 2, 4}).Int64Weight("back", {-1, 2, 4});
      b.Node("Reshape", {"rows", "shape"}, {"q"});
      b.Node("Reshape", {"other", "shape"}, {"k"});
      SetInts(b.Node("Transpose", {"q"}, {"qh"}), "perm", {0, 2, 1, 3});
      SetInts(b.Node("Transpose", {"k"}, {"kh"}), "perm", {0, 2, 3, 1});
      SetInts(b.Node("Transpose", {"k"}, {"vh"}), "perm", {0, 2, 1, 3});
      b.Node("MatMul", {"qh", "kh"}, {"s"});
      b.Node("MatMul", {"s", "vh"}, {"c"});
      SetInts(b.Node("Transpose", {"c"}, {"ct"}), "perm", {0, 2, 1, 3});
      b.Node("Reshape", {"ct", "back"}, {"z"});
    }
    auto g = ImportWithRunTimeShapes(b, "transposed_product");
    ASSERT_TRUE(g.ok()) << g.status().message();
    Graph folded = *g;
    ASSERT_EQ(FoldRunTimeTransposesIntoMatMuls(&folded), heads ? 2 : 1);
    EXPECT_EQ(testing::CountKind(folded, "onnx:Transpose"),
              testing::CountKind(*g, "onnx:Transpose") - (heads ? 4 : 3));
    auto m = MakeDnnlBackend()->Prepare(folded, {});
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ((*m)->stats().kernel_variants["kernels of run-time shape"], heads ? 2 : 1);
    auto ref = MakeReferenceBackend()->Prepare(*g, {});
    ASSERT_TRUE(ref.ok()) << ref.status().message();
    const HostTensor x = testing::RandomTensor({6, 8}, 6);
    for (const std::vector<double>& v : std::vector<std::vector<double>>{
             {1, -1, 2, 3, -4, 5}, {-1, -1, -1, -1, -1, -1}, {1, 1, 1, 1, 1, 1}}) {
      const std::vector<HostTensor> in = {HostTensor::FromDoubles(kFloat, {6}, v), x};
      auto out = (*m)->Run(in);
      auto expected = (*ref)->Run(in);
      ASSERT_TRUE(out.ok() && expected.ok());
      const auto cmp = testing::Compare(*out, *expected);
      EXPECT_EQ(cmp.error, "") << heads;
      EXPECT_LT(cmp.max_rel, kTolerance) << heads;
    }
  }
}

// Arithmetic over values of run-time shape read last there computes in place, over either
// operand of Add and Mul (a bias written first: Add(bias, x)), over none of Sub's when its first
// operand is a constant; the same values as the reference kernels at every count.
TEST(DnnlOpsTest, ArithmeticOfRunTimeShapeInPlaceOnEitherOperandThatCommutes) {
  ModelBuilder b(16);
  b.Input("v", {6}).Input("x", {6, 8}).Output("y", {-1, 8});
  b.RandomWeight("w", {8, 8}, 1).RandomWeight("beta", {8}, 2);
  b.Weight("two", HostTensor::FromDoubles(kFloat, {}, {2.0}));
  b.Weight("half", HostTensor::FromDoubles(kFloat, {1, 8}, std::vector<double>(8, 0.5)));
  KeepPositiveRows(b);
  b.Node("MatMul", {"rows", "w"}, {"h"});
  b.Node("Add", {"beta", "h"}, {"a"});
  b.Node("Sub", {"two", "a"}, {"s"});
  b.Node("Mul", {"half", "s"}, {"y"});
  ExpectAgreementForEveryCount(
      b, "arithmetic_at_run_time", testing::RandomTensor({6, 8}, 3),
      {{1, -1, 2, 3, -4, 5}, {-1, -1, -1, -1, -1, -1}, {1, 1, 1, 1, 1, 1}});
  auto m = PrepareWithRunTimeShapes(b, "arithmetic_at_run_time");
  ASSERT_TRUE(m);
  // The matmul, the Add and the Mul; not the Sub of a constant first.
  EXPECT_EQ(m->stats().kernel_variants["kernels of run-time shape"], 3);
}

// The Gelu FuseRunTimeGelus makes of PyTorch's decompositions over values of run-time shape:
// the backend's GELU pass (or oneDNN's gelu_erf) and gelu_tanh over large ones (counted), agreeing
// with the decompositions on the reference kernels at every count.
TEST(DnnlOpsTest, GeluOfRunTimeShape) {
  ModelBuilder b(16);
  b.Input("v", {5}).Input("x", {5, 4, 32, 32});
  b.Output("y", {-1, 4, 32, 32}).Output("z", {-1, 4, 32, 32});
  auto scalar = [](double v) { return HostTensor::FromDoubles(kFloat, {}, {v}); };
  b.Weight("sqrt2", scalar(std::sqrt(2.0))).Weight("one", scalar(1.0)).Weight("half", scalar(0.5));
  b.Weight("k", scalar(0.044715)).Weight("c", scalar(std::sqrt(2.0 / M_PI)));
  KeepPositiveRows(b);
  b.Node("Div", {"rows", "sqrt2"}, {"d"});
  b.Node("Erf", {"d"}, {"e"});
  b.Node("Add", {"e", "one"}, {"a"});
  b.Node("Mul", {"rows", "a"}, {"m"});
  b.Node("Mul", {"m", "half"}, {"y"});
  b.Node("Mul", {"rows", "rows"}, {"sq"});
  b.Node("Mul", {"rows", "sq"}, {"cube"});
  b.Node("Mul", {"cube", "k"}, {"kc"});
  b.Node("Add", {"rows", "kc"}, {"inner"});
  b.Node("Mul", {"inner", "c"}, {"scaled"});
  b.Node("Tanh", {"scaled"}, {"t"});
  b.Node("Add", {"t", "one"}, {"a2"});
  b.Node("Mul", {"rows", "half"}, {"hx"});
  b.Node("Mul", {"hx", "a2"}, {"z"});
  auto g = ImportWithRunTimeShapes(b, "gelu_at_run_time");
  ASSERT_TRUE(g.ok()) << g.status().message();
  Graph fused = *g;
  ASSERT_EQ(FuseRunTimeGelus(&fused), 2);
  auto m = MakeDnnlBackend()->Prepare(fused, {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->stats().kernel_variants["kernels of run-time shape"], 2);
  auto ref = MakeReferenceBackend()->Prepare(*g, {});
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  const HostTensor x = testing::RandomTensor({5, 4, 32, 32}, 9);
  ScopedEnv gelu("VERISUB_GELU");  // the erf form in the backend's pass, then in oneDNN's
  const std::vector<std::vector<double>> counts = {{1, -1, 2, 3, -4}, {-1, -1, -1, -1, -1},
                                                   {1, 1, 1, 1, 1},   {1, -1, 2, 3, -4},
                                                   {1, 1, 1, 1, 1},   {-1, -1, -1, -1, -1}};
  for (const char* mode : {"pass", "onednn"}) {
    gelu.Set(mode);
    for (const std::vector<double>& v : counts) {  // each twice: the kept primitives serve
      const std::vector<HostTensor> in = {HostTensor::FromDoubles(kFloat, {5}, v), x};
      auto out = (*m)->Run(in);
      auto expected = (*ref)->Run(in);
      ASSERT_TRUE(out.ok() && expected.ok()) << mode;
      const auto cmp = testing::Compare(*out, *expected);
      EXPECT_EQ(cmp.error, "") << mode;
      EXPECT_LT(cmp.max_rel, kTolerance) << mode;
    }
  }
}

// Two models of one process holding the same weights in the same layout share one buffer (the
// weights of a model prepared again for another input shape): the second prepare's statistics
// count them, both compute what the reference does, and the second still runs once the first is
// gone. Other weights, or weights under 64 KB, are their own.
TEST(DnnlOpsTest, ModelsOfOneProcessShareTheirWeights) {
  auto model = [](int64_t rows, uint64_t seed) {
    ModelBuilder b;
    b.Input("x", {rows, 256}).Output("y", {rows, 32});
    b.RandomWeight("w", {256, 128}, seed).RandomWeight("small", {128, 32}, 7);
    b.Node("MatMul", {"x", "w"}, {"h"});
    b.Node("MatMul", {"h", "small"}, {"y"});
    auto g = ImportOnnxBytes(b.Bytes(), "shared_weights");
    EXPECT_TRUE(g.ok()) << g.status().message();
    return *g;
  };
  const Graph first_graph = model(4, 1), second_graph = model(9, 1), other_graph = model(4, 2);
  auto first = MakeDnnlBackend()->Prepare(first_graph, {});
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = MakeDnnlBackend()->Prepare(second_graph, {});
  ASSERT_TRUE(second.ok()) << second.status().message();
  auto other = MakeDnnlBackend()->Prepare(other_graph, {});
  ASSERT_TRUE(other.ok()) << other.status().message();
  const int64_t w_bytes = 256 * 128 * 4;
  EXPECT_EQ((*second)->stats().shared_weight_bytes, w_bytes);
  EXPECT_EQ((*other)->stats().shared_weight_bytes, 0);
  first->reset();
  for (const auto& [g, m] :
       {std::make_pair(&second_graph, second->get()), std::make_pair(&other_graph, other->get())}) {
    const std::vector<HostTensor> in = testing::RandomInputs(*g, 3);
    auto out = m->Run(in);
    auto expected = Execute(*g, in);
    ASSERT_TRUE(out.ok() && expected.ok());
    EXPECT_LT(testing::Compare(*out, *expected).max_rel, kTolerance);
  }
}

// Activations over large tensors of run-time shape run on oneDNN's eltwise, over their input
// in place where nothing else reads it: ReLU's input is read again by Tanh (kept), Sigmoid's
// only by it (consumed).
TEST(DnnlOpsTest, ActivationsOfRunTimeShapeRunInPlaceOnlyOnDeadInputs) {
  ModelBuilder b(16);
  b.Input("v", {5}).Input("x", {5, 4, 32, 32});
  b.Output("y", {-1, 4, 32, 32}).Output("z", {-1, 4, 32, 32});
  KeepPositiveRows(b);
  b.Node("Relu", {"rows"}, {"r"});
  b.Node("Sigmoid", {"r"}, {"y"});
  b.Node("Tanh", {"rows"}, {"z"});
  ExpectAgreementForEveryCount(b, "activations_at_run_time",
                               testing::RandomTensor({5, 4, 32, 32}, 8),
                               {{1, -1, 2, 3, -4}, {-1, -1, -1, -1, -1}, {1, 1, 1, 1, 1}});
  // A profile reruns the steps, each also alone: a consumed input is still there to read.
  auto m = PrepareWithRunTimeShapes(b, "activations_profile");
  ASSERT_TRUE(m);
  ExpectProfileAfterOneRun(*m, {HostTensor::FromDoubles(kFloat, {5}, {1, 1, -1, 1, 1}),
                                testing::RandomTensor({5, 4, 32, 32}, 8)});
}

// An Unsqueeze or Reshape of a host value it reads last gives that value's tensor new dims
// instead of copying it (Mask R-CNN's pasted masks); a value read again later is copied. Values
// agree with the reference for every row count, and a profile rerunning the steps alone (the
// rename done already) still runs.
TEST(DnnlOpsTest, HostValuesReadLastAreRenamedInPlace) {
  ModelBuilder b(16);
  b.Input("v", {5}).Input("x", {5, 4, 8, 8});
  b.Output("y", {-1, 1, 4, 8, 8}).Output("z", {-1, 256}).Output("w", {-1, 4, 8, 8});
  b.Int64Weight("one", {1}).Int64Weight("rows_by_256", {-1, 256});
  KeepPositiveRows(b);
  b.Node("Tanh", {"rows"}, {"t"});
  b.Node("Unsqueeze", {"t", "one"}, {"y"});
  b.Node("Reshape", {"rows", "rows_by_256"}, {"z"});  // rows is read again below: copied
  b.Node("Sigmoid", {"rows"}, {"w"});
  ExpectAgreementForEveryCount(b, "renamed_host_values", testing::RandomTensor({5, 4, 8, 8}, 9),
                               {{1, -1, 2, 3, -4}, {-1, -1, -1, -1, -1}, {1, 1, 1, 1, 1}});
  auto m = PrepareWithRunTimeShapes(b, "renamed_host_values");
  ASSERT_TRUE(m);
  const auto& variants = m->stats().kernel_variants;
  const auto it = variants.find("host value renamed in place");
  // The Unsqueeze, and KeepPositiveRows's Reshape of NonZero's indices; not the Reshape of rows.
  EXPECT_EQ(it == variants.end() ? 0 : it->second, 2);
  ExpectProfileAfterOneRun(*m, {HostTensor::FromDoubles(kFloat, {5}, {1, 1, -1, 1, 1}),
                                testing::RandomTensor({5, 4, 8, 8}, 9)});
}

// A recommender's embedding looked up by indices computed from the input: a profile reruns the
// steps on the buffers of the last run, where later values may have taken the buffers of the
// input and of the values computed from it. The input keeps its buffer, and each step is timed
// alone right where it stands in a run, so the lookup sees indices of the input (here any other
// data read as an index is out of range: the table's rows hold 1000 and more).
TEST(DnnlOpsTest, ProfilesRerunStepsOnTheValuesOfTheirOwnRun) {
  ModelBuilder b(13);
  b.Input("x", {4, 2}).Output("y", {4, 8});
  std::vector<double> table;
  for (int r = 0; r < 10; ++r) table.insert(table.end(), 16, 1000 + r);
  b.Weight("table", HostTensor::FromDoubles(kFloat, {10, 16}, table));
  b.Weight("quarter", HostTensor::FromDoubles(kFloat, {1}, {0.25}));
  b.Weight("w", HostTensor::FromDoubles(kFloat, {32, 8}, std::vector<double>(256, 1)));
  b.Int64Weight("rows", {4, 32});
  b.Node("Add", {"x", "quarter"}, {"m"});
  SetInt(b.Node("Cast", {"m"}, {"i"}), "to", kInt64);
  SetInt(b.Node("Gather", {"table", "i"}, {"e"}, "embedding"), "axis", 0);
  b.Node("Reshape", {"e", "rows"}, {"f"});
  b.Node("MatMul", {"f", "w"}, {"y"});
  auto g = ImportOnnxBytes(b.Bytes(), "embedding_profile");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto m = MakeDnnlBackend()->Prepare(*g, {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  const std::vector<HostTensor> in = {
      HostTensor::FromDoubles(kFloat, {4, 2}, {0, 9, 1, 8, 2, 7, 3, 3})};
  auto first = (*m)->Run(in);
  ASSERT_TRUE(first.ok()) << first.status().message();
  // Row k of y: 16 x (1000 + x[k][0]) + 16 x (1000 + x[k][1]) in each column.
  EXPECT_EQ((*first)[0].ToDoubles()[0], 16 * 1000 + 16 * 1009);
  auto profile = (*m)->Profile(3, true);
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  for (const StepProfile& p : *profile) EXPECT_GT(p.alone_seconds, 0) << p.name;
  auto again = (*m)->Run(in);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)[0].ToDoubles(), (*first)[0].ToDoubles());
}

// A step that writes over its input (an Exp in place over a concatenation) gets that input back
// before each of its runs alone: run thrice over itself it would give exp(exp(exp(x))), which
// the Gather after it reads as indices far out of its table's range.
TEST(DnnlOpsTest, ProfilesGiveAStepInPlaceItsInputBackBeforeEachRunAlone) {
  ModelBuilder b(13);
  b.Input("x", {4, 1}).Output("y", {4, 2, 3});
  b.RandomWeight("table", {10, 3}, 1);
  SetInt(b.Node("Concat", {"x", "x"}, {"c"}), "axis", 1);
  b.Node("Exp", {"c"}, {"e"});
  SetInt(b.Node("Cast", {"e"}, {"i"}), "to", kInt64);
  SetInt(b.Node("Gather", {"table", "i"}, {"y"}, "embedding"), "axis", 0);
  auto g = ImportOnnxBytes(b.Bytes(), "in_place_profile");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto m = MakeDnnlBackend()->Prepare(*g, {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->stats().in_place, 1);
  auto ran = (*m)->Run({HostTensor::FromDoubles(kFloat, {4, 1}, {0, 1, 2, 0.5})});
  ASSERT_TRUE(ran.ok()) << ran.status().message();
  auto profile = (*m)->Profile(3, true);
  EXPECT_TRUE(profile.ok()) << profile.status().message();
}

TEST(DnnlOpsTest, MatmulAndGemm) {
  {
    ModelBuilder b;
    b.Input("a", {2, 3, 4, 5}).Output("y", {2, 3, 4, 6}).RandomWeight("w", {5, 6}, 1);
    b.RandomWeight("bias", {6}, 2);
    b.Node("MatMul", {"a", "w"}, {"m"});
    b.Node("Add", {"m", "bias"}, {"s"});
    b.Node("Relu", {"s"}, {"y"});
    PrepareStats s = Check(b, "matmul_bias_relu");
    EXPECT_EQ(s.fused_nodes, 2);
  }
  {
    // A per-column scale (Mul by a [6] constant: channel_scale on the last axis) after the bias
    // is folded into the constant weights and bias.
    ModelBuilder b;
    b.Input("a", {2, 3, 4, 5}).Output("y", {2, 3, 4, 6}).RandomWeight("w", {5, 6}, 1);
    b.RandomWeight("bias", {6}, 2).RandomWeight("scale", {6}, 3);
    b.Node("MatMul", {"a", "w"}, {"m"});
    b.Node("Add", {"m", "bias"}, {"s"});
    b.Node("Mul", {"s", "scale"}, {"y"});
    PrepareStats s = Check(b, "matmul_bias_scale");
    EXPECT_EQ(s.fused_nodes, 2);
    EXPECT_EQ(s.fallback_nodes, 0);
  }
  {
    // Must not fold: weights computed at run time. The scale runs as a binary mul.
    ModelBuilder b;
    b.Input("a", {3, 5}).Input("w", {5, 6}).Output("y", {3, 6}).RandomWeight("scale", {6}, 3);
    b.Node("MatMul", {"a", "w"}, {"m"});
    b.Node("Mul", {"m", "scale"}, {"y"});
    PrepareStats s = Check(b, "matmul_runtime_weights_scale");
    EXPECT_EQ(s.fused_nodes, 0);
    EXPECT_EQ(s.fallback_nodes, 0);
  }
  {
    // A matrix shared by the batch is one GEMM of every row viewed as [rows, K]; here with the
    // residual add accumulated into that view and PyTorch's [seq, 1, embed] shape.
    ModelBuilder b;
    b.Input("a", {7, 1, 5}).Input("r", {7, 1, 6}).Output("y", {7, 1, 6});
    b.RandomWeight("w", {5, 6}, 1).RandomWeight("bias", {6}, 2);
    b.Node("MatMul", {"a", "w"}, {"m"});
    b.Node("Add", {"m", "bias"}, {"s"});
    b.Node("Add", {"s", "r"}, {"y"});
    PrepareStats s = Check(b, "matmul_rows_residual");
    EXPECT_EQ(s.fallback_nodes, 0);
  }
  {
    ModelBuilder b;  // both operands computed, batch broadcast
    b.Input("a", {2, 3, 4, 5}).Input("c", {1, 3, 5, 4}).Output("y", {2, 3, 4, 4});
    b.Node("MatMul", {"a", "c"}, {"y"});
    Check(b, "matmul_batched");
  }
  {
    ModelBuilder b;
    b.Input("a", {3, 10}).Output("y", {3, 7}).RandomWeight("w", {7, 10}, 1);
    b.RandomWeight("bias", {7}, 2);
    SetInt(b.Node("Gemm", {"a", "w", "bias"}, {"y"}), "transB", 1);
    EXPECT_EQ(Check(b, "gemm_transb").fallback_nodes, 0);
  }
}

// PyTorch's GELU export, ((erf(x / sqrt 2) + 1) * x) * 0.5, after a matmul + bias (one jit
// gelu_erf kernel after the fused matmul + bias) and after a convolution (a gelu_erf post-op); a
// scalar Div after a matmul becomes a linear post-op.
void AddGelu(ModelBuilder& b, const std::string& x, const std::string& y) {
  b.Weight("sqrt2", HostTensor::FromDoubles(kFloat, {}, {1.4142135381698608}));
  b.Weight("one", HostTensor::FromDoubles(kFloat, {}, {1.0}));
  b.Weight("half", HostTensor::FromDoubles(kFloat, {}, {0.5}));
  b.Node("Div", {x, "sqrt2"}, {x + "_d"});
  b.Node("Erf", {x + "_d"}, {x + "_e"});
  b.Node("Add", {x + "_e", "one"}, {x + "_a"});
  b.Node("Mul", {x, x + "_a"}, {x + "_m"});
  b.Node("Mul", {x + "_m", "half"}, {y});
}

TEST(DnnlOpsTest, GeluAndScalesFuse) {
  {
    ModelBuilder b;
    b.Input("a", {2, 5, 8}).Output("y", {2, 5, 12}).RandomWeight("w", {8, 12}, 1);
    b.RandomWeight("bias", {12}, 2);
    b.Node("MatMul", {"a", "w"}, {"m"});
    b.Node("Add", {"m", "bias"}, {"x"});
    AddGelu(b, "x", "y");
    // The import canonicalizes the erf decomposition into one gelu node (runtime/canonicalize.h);
    // the bias joins the matmul, the gelu stays a kernel of its own after a matmul.
    PrepareStats s = Check(b, "matmul_gelu");
    EXPECT_EQ(s.fused_nodes, 1);
    EXPECT_EQ(s.steps - s.reorders, 2);
    EXPECT_EQ(s.fallback_nodes, 0);
  }
  {
    ModelBuilder b;
    b.Input("x", {1, 4, 5, 5}).Output("y", {1, 8, 5, 5}).RandomWeight("w", {8, 4, 1, 1}, 1);
    b.Node("Conv", {"x", "w"}, {"c"});
    AddGelu(b, "c", "y");
    PrepareStats s = Check(b, "conv_gelu");
    EXPECT_EQ(s.fused_nodes, 1);         // the gelu node, a post-op of the convolution
    EXPECT_EQ(s.steps - s.reorders, 1);  // one kernel after the input's reorder
  }
  {
    ModelBuilder b;
    b.Input("x", {2, 5, 8}).Output("y", {2, 5, 8});
    AddGelu(b, "x", "y");
    PrepareStats s = Check(b, "gelu");
    EXPECT_EQ(s.fused_nodes, 0);
    EXPECT_EQ(s.steps - s.reorders, 1);
    EXPECT_EQ(s.fallback_nodes, 0);
  }
  {
    ModelBuilder b;
    b.Input("q", {2, 4, 5, 8}).Input("k", {2, 4, 8, 5}).Output("y", {2, 4, 5, 5});
    b.Weight("scale", HostTensor::FromDoubles(kFloat, {}, {2.8284271247461903}));
    b.Node("MatMul", {"q", "k"}, {"s"});
    b.Node("Div", {"s", "scale"}, {"y"});
    EXPECT_EQ(Check(b, "matmul_div").fused_nodes, 1);
  }
}

// Imports with or without mapping to spec operators: the same oneDNN kernel runs the spec node
// (layer_norm, softmax, reduce_mean) and the opaque ONNX node.
PrepareStats CheckBothForms(ModelBuilder& b, const std::string& name, const std::string& kind) {
  PrepareStats stats = Check(b, name);
  auto mapped = ImportOnnxBytes(b.Bytes(), name);
  EXPECT_TRUE(mapped.ok() && testing::CountKind(*mapped, kind) == 1) << name;
  ImportOptions opaque_only;
  opaque_only.map_to_spec_ops = false;
  auto g = ImportOnnxBytes(b.Bytes(), name, opaque_only);
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return stats;
  PrepareStats opaque;
  auto cmp = testing::CompareWithReference(*g, testing::RandomInputs(*g, 7), &opaque);
  EXPECT_EQ(cmp.error, "") << name;
  EXPECT_LT(cmp.max_rel, kTolerance) << name << " (opaque) max_abs " << cmp.max_abs;
  EXPECT_EQ(opaque.fallback_nodes, stats.fallback_nodes) << name;
  return stats;
}

// A squeeze-excitation gate: x times sigmoid(W . mean(x)) of shape [1,C,1,1], imported as a
// channel_scale of a computed vector (through a reshape to [C]), runs as a broadcast binary mul.
TEST(DnnlOpsTest, SqueezeExcitationGateRunsAsChannelScale) {
  ModelBuilder b;
  b.Input("x", {1, 8, 6, 6}).Output("y", {1, 8, 6, 6}).RandomWeight("w", {8, 8, 1, 1}, 1);
  b.Node("GlobalAveragePool", {"x"}, {"gap"});
  b.Node("Conv", {"gap", "w"}, {"squeeze"});
  b.Node("Sigmoid", {"squeeze"}, {"gate"});
  b.Node("Mul", {"x", "gate"}, {"y"});
  auto g = ImportOnnxBytes(b.Bytes(), "se");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(testing::CountKind(*g, "channel_scale"), 1);
  PrepareStats s = Check(b, "squeeze_excitation");
  EXPECT_EQ(s.fallback_nodes, 0);
}

// The gate moved into the next 1x1 convolution's kernel (a rewrite of the index-level rules):
// a constant kernel scaled along its input channels by a computed vector, then a convolution
// with a kernel computed at run time. The channel affine kernel walks run-time buffers only and
// must leave the constant to the binary kernel (it read an absent buffer: "object is not
// initialized").
TEST(DnnlOpsTest, ConstantKernelScaledByAComputedGate) {
  ModelBuilder b;
  b.Input("x", {1, 8, 6, 6}).Output("y", {1, 12, 6, 6}).RandomWeight("w", {12, 8, 1, 1}, 1);
  b.Int64Weight("vector", {8}).Int64Weight("nchw", {1, 8, 1, 1});
  b.Node("GlobalAveragePool", {"x"}, {"gap"});
  b.Node("Sigmoid", {"gap"}, {"sig"});
  b.Node("Reshape", {"sig", "vector"}, {"flat"});  // as verisub-opt writes channel_scale back
  b.Node("Reshape", {"flat", "nchw"}, {"gate"});
  b.Node("Mul", {"w", "gate"}, {"scaled"});
  b.Node("Conv", {"x", "scaled"}, {"y"});
  auto g = ImportOnnxBytes(b.Bytes(), "scaled_kernel");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(testing::CountKind(*g, "channel_scale"), 1);
  EXPECT_EQ(Check(b, "scaled_kernel").fallback_nodes, 0);
}

// A gate whose only reader is a convolution with constant weights is folded into those weights
// on every run where they are the smaller tensor (squeeze-excite at high resolution: the input is
// then read once, by the convolution); where the weights are larger, or the convolution is
// grouped, the gate scales the input. Either way the values are the reference's, in every layout.
TEST(DnnlOpsTest, GateBeforeAConvolutionFoldsIntoItsWeightsWhereSmaller) {
  struct Case {
    int64_t c, o, hw, kernel, group;
    int folded;
  };
  for (const Case& k : {Case{16, 8, 24, 3, 1, 1}, Case{24, 8, 12, 1, 1, 1},
                        Case{16, 8, 12, 3, 1, 0}, Case{16, 16, 24, 3, 16, 0}}) {
    const std::string name = "gate_conv_" + std::to_string(k.c) + "_" + std::to_string(k.o) + "_" +
                             std::to_string(k.hw) + "_k" + std::to_string(k.kernel) + "_g" +
                             std::to_string(k.group);
    SCOPED_TRACE(name);
    ModelBuilder b;
    b.Input("x", {1, k.c, k.hw, k.hw})
        .Output("y", {1, k.o, k.hw, k.hw})
        .RandomWeight("w1", {k.c, k.c, 1, 1}, 1)
        .RandomWeight("w2", {k.o, k.c / k.group, k.kernel, k.kernel}, 2)
        .RandomWeight("b2", {k.o}, 3);
    b.Node("GlobalAveragePool", {"x"}, {"gap"});
    b.Node("Conv", {"gap", "w1"}, {"squeeze"});
    b.Node("Sigmoid", {"squeeze"}, {"gate"});
    b.Node("Mul", {"x", "gate"}, {"scaled"});
    onnx::NodeProto& conv = b.Node("Conv", {"scaled", "w2", "b2"}, {"y"});
    const int64_t pad = k.kernel / 2;
    SetInts(conv, "pads", {pad, pad, pad, pad});
    SetInt(conv, "group", k.group);
    const PrepareStats s = Check(b, name);
    EXPECT_EQ(s.fallback_nodes, 0);
    const auto it = s.kernel_variants.find("input scale folded into the weights");
    EXPECT_EQ(it == s.kernel_variants.end() ? 0 : it->second, k.folded);
    auto g = ImportOnnxBytes(b.Bytes(), name);
    ASSERT_TRUE(g.ok()) << g.status().message();
    for (specs::Layout layout : {specs::Layout::kNCHW16c, specs::Layout::kNHWC})
      CheckInLayout(*g, layout, 5, name + " " + std::string(specs::LayoutName(layout)));
  }
}

TEST(DnnlOpsTest, NormalizationsAndSoftmax) {
  {
    ModelBuilder b(17);
    b.Input("x", {2, 5, 16}).Output("y", {2, 5, 16});
    b.RandomWeight("g", {16}, 1).RandomWeight("beta", {16}, 2);
    SetFloat(b.Node("LayerNormalization", {"x", "g", "beta"}, {"y"}), "epsilon", 1e-5f);
    EXPECT_EQ(CheckBothForms(b, "layernorm", "layer_norm").fallback_nodes, 0);
  }
  {
    ModelBuilder b(17);  // two normalised axes, no bias, epsilon 1e-3
    b.Input("x", {2, 5, 16}).Output("y", {2, 5, 16});
    b.RandomWeight("g", {5, 16}, 1);
    auto& n = b.Node("LayerNormalization", {"x", "g"}, {"y"});
    SetInt(n, "axis", 1);
    SetFloat(n, "epsilon", 1e-3f);
    EXPECT_EQ(CheckBothForms(b, "layernorm_axis1", "layer_norm").fallback_nodes, 0);
  }
  {
    ModelBuilder b;
    b.Input("x", {2, 3, 5, 7}).Output("y", {2, 3, 5, 7});
    SetInt(b.Node("Softmax", {"x"}, {"y"}), "axis", -1);
    EXPECT_EQ(CheckBothForms(b, "softmax", "softmax").fallback_nodes, 0);
  }
  {
    ModelBuilder b;
    b.Input("x", {2, 3, 5, 7}).Output("y", {2, 3, 5, 7});
    SetInt(b.Node("Softmax", {"x"}, {"y"}), "axis", 1);
    EXPECT_EQ(CheckBothForms(b, "softmax_axis1", "softmax").fallback_nodes, 0);
  }
  {
    ModelBuilder b;  // a batchnorm that no convolution absorbs
    b.Input("x", {2, 8, 4, 4}).Output("y", {2, 8, 4, 4});
    b.RandomWeight("s", {8}, 1).RandomWeight("t", {8}, 2).RandomWeight("m", {8}, 3);
    b.Weight("v", HostTensor::FromDoubles(kFloat, {8}, std::vector<double>(8, 1.5)));
    b.Node("BatchNormalization", {"x", "s", "t", "m", "v"}, {"y"});
    EXPECT_EQ(Check(b, "batchnorm").fallback_nodes, 0);  // channel_scale, bias_add
  }
  {
    // Statistics computed at run time stay the batchnorm operator; oneDNN's batchnorm takes
    // constant statistics only, so it runs (correctly) on the reference kernel.
    ModelBuilder b;
    b.Input("x", {2, 8, 4, 4}).Input("m", {8}).Output("y", {2, 8, 4, 4});
    b.RandomWeight("s", {8}, 1).RandomWeight("t", {8}, 2);
    b.Weight("v", HostTensor::FromDoubles(kFloat, {8}, std::vector<double>(8, 1.5)));
    b.Node("BatchNormalization", {"x", "s", "t", "m", "v"}, {"y"});
    EXPECT_EQ(Check(b, "batchnorm_run_time_mean").fallback_nodes, 1);
  }
}

TEST(DnnlOpsTest, Reductions) {
  struct ReduceCase {
    std::string op;
    std::vector<int64_t> axes;
    int keepdims;
    std::vector<int64_t> out;
  };
  std::vector<ReduceCase> cases = {
      {"ReduceMean", {-1}, 1, {2, 3, 4, 1}}, {"ReduceMean", {2, 3}, 0, {2, 3}},
      {"ReduceMax", {1}, 1, {2, 1, 4, 5}},   {"ReduceMin", {0, 2}, 0, {3, 5}},
      {"ReduceProd", {3}, 0, {2, 3, 4}},     {"ReduceSum", {1, 3}, 1, {2, 1, 4, 1}},
  };
  for (const ReduceCase& c : cases) {
    ModelBuilder b;  // opset 13: ReduceSum takes axes as an input, the others as an attribute
    b.Input("x", {2, 3, 4, 5}).Output("y", c.out);
    std::vector<std::string> in = {"x"};
    if (c.op == "ReduceSum") {
      b.Int64Weight("axes", c.axes);
      in.push_back("axes");
    }
    auto& n = b.Node(c.op, in, {"y"});
    if (c.op != "ReduceSum") SetInts(n, "axes", c.axes);
    SetInt(n, "keepdims", c.keepdims);
    if (c.op == "ReduceMean")
      EXPECT_EQ(CheckBothForms(b, c.op, "reduce_mean").fallback_nodes, 0);
    else
      EXPECT_EQ(Check(b, c.op).fallback_nodes, 0) << c.op;
  }
}

// A mean or max over the spatial axes runs as a global pooling in the layout its input is
// stored in (runtime/dnnl/reduce.cc), written as plain; with a channel block that does not
// divide C it reads plain instead. The same values in every layout, batch 2.
TEST(DnnlOpsTest, SpatialReductionsRunAsGlobalPoolingInTheirInputsLayout) {
  for (int64_t c : {16, 12})
    for (const std::string op : {"ReduceMean", "ReduceMax"})
      for (int keepdims : {0, 1}) {
        ModelBuilder b;
        std::vector<int64_t> out = {2, c};
        if (keepdims) out.insert(out.end(), {1, 1});
        b.Input("x", {2, c, 5, 6}).Output("y", out);
        b.Node("Relu", {"x"}, {"r"});
        auto& n = b.Node(op, {"r"}, {"y"});
        SetInts(n, "axes", {2, 3});
        SetInt(n, "keepdims", keepdims);
        const std::string name =
            op + " c" + std::to_string(c) + " keepdims " + std::to_string(keepdims);
        auto g = ImportOnnxBytes(b.Bytes(), name);
        ASSERT_TRUE(g.ok()) << g.status().message();
        for (specs::Layout l : {specs::Layout::kPlain, specs::Layout::kNHWC, specs::Layout::kNCHW8c,
                                specs::Layout::kNCHW16c}) {
          // Only the relu's output (the reduction's input) in `l`.
          auto m = CheckInLayout(*g, l, 3, name, [&](const Value& v) {
            return v.name == "r" ? l : specs::Layout::kPlain;
          });
          ASSERT_TRUE(m) << name;
          const PrepareStats st = m->stats();
          EXPECT_EQ(st.fallback_nodes, 0) << name;
          const bool pooled = st.kernel_variants.count("global pool") > 0;
          if (l == specs::Layout::kNHWC || (l == specs::Layout::kNCHW8c && c % 8 == 0) ||
              (l == specs::Layout::kNCHW16c && c % 16 == 0)) {
            EXPECT_TRUE(pooled) << name << " in " << specs::LayoutName(l);
            // x converted to `l` for the relu; r read back as plain would be a second.
            EXPECT_LE(st.reorders, 1) << name << " in " << specs::LayoutName(l);
          }
        }
      }
}

// Resize on oneDNN's resampling where its arithmetic is the node's (linear with half-pixel
// centres, nearest upsampling by whole factors; 2-D and 3-D; scales or sizes), on the reference
// kernel elsewhere (align_corners, cubic, a fractional nearest): the same values either way.
TEST(DnnlOpsTest, ResizeRunsOnResamplingWhereItComputesTheSame) {
  struct ResizeCase {
    std::string mode, coordinates, nearest;
    std::vector<int64_t> in, out;
    bool by_scales;
    int fallback;
  };
  const std::vector<ResizeCase> cases = {
      {"linear", "half_pixel", "", {1, 3, 7, 5}, {1, 3, 14, 10}, false, 0},
      {"linear", "pytorch_half_pixel", "", {2, 4, 7, 5}, {2, 4, 10, 3}, false, 0},
      {"linear", "half_pixel", "", {1, 2, 4, 6}, {1, 2, 8, 12}, true, 0},
      {"linear", "half_pixel", "", {1, 2, 3, 4, 5}, {1, 2, 6, 8, 10}, false, 0},
      {"nearest", "asymmetric", "floor", {1, 3, 5, 4}, {1, 3, 10, 12}, true, 0},
      {"nearest", "half_pixel", "round_prefer_floor", {1, 3, 5, 4}, {1, 3, 15, 8}, false, 0},
      {"nearest", "asymmetric", "floor", {1, 3, 6, 4}, {1, 3, 9, 6}, false, 1},
      {"linear", "align_corners", "", {1, 3, 7, 5}, {1, 3, 14, 10}, false, 1},
      {"cubic", "half_pixel", "", {1, 3, 7, 5}, {1, 3, 14, 10}, false, 1},
  };
  for (const ResizeCase& c : cases) {
    const std::string name = c.mode + " " + c.coordinates + " " + c.nearest + " to " +
                             std::to_string(c.out[2]) + (c.by_scales ? " by scales" : "");
    ModelBuilder b;
    b.Input("x", c.in).Output("y", c.out);
    std::vector<std::string> in = {"x", ""};
    if (c.by_scales) {
      std::vector<double> scales;
      for (size_t d = 0; d < c.in.size(); ++d)
        scales.push_back(static_cast<double>(c.out[d]) / static_cast<double>(c.in[d]));
      b.Weight("scales",
               HostTensor::FromDoubles(kFloat, {static_cast<int64_t>(scales.size())}, scales));
      in.push_back("scales");
    } else {
      b.Int64Weight("sizes", c.out);
      in.insert(in.end(), {"", "sizes"});
    }
    auto& n = b.Node("Resize", in, {"y"});
    SetString(n, "mode", c.mode);
    SetString(n, "coordinate_transformation_mode", c.coordinates);
    if (!c.nearest.empty()) SetString(n, "nearest_mode", c.nearest);
    EXPECT_EQ(Check(b, name).fallback_nodes, c.fallback) << name;
  }
}

// The layout DP may store a resize's input blocked and its output plain (DeepLabV3's pooled
// branch: 256 channels 1x1 -> 14x14 in nChw16c -> plain). oneDNN's jit resampling wants one format
// on both sides and otherwise falls back to its reference kernel, 750x slower there; the kernel
// converts the smaller side instead. Upsampling and downsampling, every layout of the input.
TEST(DnnlOpsTest, ResizeBetweenTwoLayoutsRunsOnTheJitResampling) {
  for (const bool up : {true, false}) {
    const std::vector<int64_t> in =
        up ? std::vector<int64_t>{1, 32, 1, 1} : std::vector<int64_t>{1, 32, 14, 14};
    const std::vector<int64_t> out =
        up ? std::vector<int64_t>{1, 32, 14, 14} : std::vector<int64_t>{1, 32, 7, 7};
    ModelBuilder b;
    b.Input("x", in).Output("y", out);
    b.Int64Weight("sizes", out);
    b.RandomWeight("w", {32, 32, 1, 1}, 1);
    b.Node("Conv", {"x", "w"}, {"r"});
    auto& n = b.Node("Resize", {"r", "", "", "sizes"}, {"y"});
    SetString(n, "mode", "linear");
    SetString(n, "coordinate_transformation_mode", "half_pixel");
    const std::string name = up ? "upsampling" : "downsampling";
    auto g = ImportOnnxBytes(b.Bytes(), name);
    ASSERT_TRUE(g.ok()) << g.status().message();
    for (specs::Layout l :
         {specs::Layout::kNHWC, specs::Layout::kNCHW8c, specs::Layout::kNCHW16c}) {
      const std::string what = name + " from " + std::string(specs::LayoutName(l));
      auto m = CheckInLayout(*g, l, 5, what, [&](const Value& v) {
        return v.name == "r" ? l : specs::Layout::kPlain;
      });
      ASSERT_TRUE(m) << what;
      const PrepareStats st = m->stats();
      EXPECT_EQ(st.fallback_nodes, 0) << what;
      EXPECT_EQ(st.kernel_variants.count("reference resampling"), 0u) << what;
    }
  }
}

// LSTM and GRU on oneDNN's RNN primitives (forward and reverse, with and without biases and
// initial states, GRU with and without linear_before_reset), against the reference kernel; what
// oneDNN's arithmetic is not (a bidirectional layer, clipping, other activations) runs on the
// reference kernel.
TEST(DnnlOpsTest, RecurrentLayersRunOnOneDnnWhereTheyComputeTheSame) {
  struct RnnCase {
    std::string name, op, direction;
    bool bias, initial;
    int64_t lbr;  // GRU's linear_before_reset
    std::function<void(onnx::NodeProto&)> attrs;
    int fallback;
  };
  const std::vector<RnnCase> cases = {
      {"lstm", "LSTM", "forward", true, true, 0, nullptr, 0},
      {"lstm_reverse_bare", "LSTM", "reverse", false, false, 0, nullptr, 0},
      {"gru_lbr", "GRU", "forward", true, true, 1, nullptr, 0},
      {"gru_reverse", "GRU", "reverse", true, false, 0, nullptr, 0},
      {"lstm_bidirectional", "LSTM", "bidirectional", true, true, 0, nullptr, 0},
      {"gru_bidirectional_bare", "GRU", "bidirectional", false, false, 1, nullptr, 0},
      {"lstm_clip", "LSTM", "forward", true, false, 0,
       [](onnx::NodeProto& n) { SetFloat(n, "clip", 0.5f); }, 1},
  };
  const int64_t t = 5, batch = 2, in = 6, h = 8;
  for (const RnnCase& c : cases) {
    const int64_t gates = c.op == "LSTM" ? 4 : 3, dirs = c.direction == "bidirectional" ? 2 : 1;
    ModelBuilder b;
    b.Input("x", {t, batch, in}).Output("y", {t, dirs, batch, h}).Output("yh", {dirs, batch, h});
    b.RandomWeight("w", {dirs, gates * h, in}, 1).RandomWeight("r", {dirs, gates * h, h}, 2);
    std::vector<std::string> inputs = {"x", "w", "r", ""};
    if (c.bias) {
      b.RandomWeight("bias", {dirs, 2 * gates * h}, 3);
      inputs[3] = "bias";
    }
    if (c.initial) {
      b.Input("h0", {dirs, batch, h});
      inputs.insert(inputs.end(), {"", "h0"});
      if (c.op == "LSTM") {
        b.Input("c0", {dirs, batch, h});
        inputs.push_back("c0");
      }
    }
    std::vector<std::string> outputs = {"y", "yh"};
    if (c.op == "LSTM") {
      b.Output("yc", {dirs, batch, h});
      outputs.push_back("yc");
    }
    auto& n = b.Node(c.op, inputs, outputs);
    SetInt(n, "hidden_size", h);
    SetString(n, "direction", c.direction);
    if (c.op == "GRU") SetInt(n, "linear_before_reset", c.lbr);
    if (c.attrs) c.attrs(n);
    // Both of oneDNN's kernels (its brgemm one with weights in its own format, its gemm-based
    // one with plain weights; normally the faster is timed and kept) compute the same.
    ScopedEnv kernel("VERISUB_RNN_KERNEL");
    for (const char* policy : {"default", "gemm"}) {
      kernel.Set(policy);
      EXPECT_EQ(Check(b, c.name + " " + policy).fallback_nodes, c.fallback) << c.name << policy;
    }
  }
}

// Weights of 64 KiB and more stay in the mapped model file until a kernel reads them (the import
// of a model from its path). Every kernel that reads constant weights runs so: a ConvTranspose
// read them through a null copy and crashed (UNet and DCGAN exports, segfault at prepare); a
// convolution, a matmul, a recurrent layer the same values as the reference.
TEST(DnnlOpsTest, KernelsReadWeightsLeftInTheModelFile) {
  ModelBuilder b;
  b.Input("x", {1, 64, 6, 6}).Input("s", {4, 1, 64}).Output("up", {1, 64, 12, 12});
  b.Output("conv", {1, 64, 6, 6}).Output("mm", {4, 1, 256}).Output("seq", {4, 1, 1, 64});
  b.RandomWeight("wt", {64, 64, 2, 2}, 1);                                    // 64 KiB
  b.RandomWeight("wc", {64, 64, 3, 3}, 2);                                    // 144 KiB
  b.RandomWeight("wm", {64, 256}, 3);                                         // 64 KiB
  b.RandomWeight("wl", {1, 256, 64}, 4).RandomWeight("rl", {1, 256, 64}, 5);  // 64 KiB each
  auto& t = b.Node("ConvTranspose", {"x", "wt"}, {"up"});
  SetInts(t, "strides", {2, 2});
  SetInts(b.Node("Conv", {"x", "wc"}, {"conv"}), "pads", {1, 1, 1, 1});
  b.Node("MatMul", {"s", "wm"}, {"mm"});
  SetInt(b.Node("LSTM", {"s", "wl", "rl"}, {"seq"}), "hidden_size", 64);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "verisub_dnnl_weights_in_file";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "m.onnx").string();
  ASSERT_TRUE(base::WriteFileAtomically(path, b.Bytes()).ok());
  auto g = ImportOnnxFile(path);
  ASSERT_TRUE(g.ok()) << g.status().message();
  int in_file = 0;
  for (int v = 0; v < g->num_values(); ++v)
    in_file += g->value(v).constant && g->value(v).constant->f32.InFile();
  EXPECT_GE(in_file, 4);  // the twin of the bytes import, where none is
  PrepareStats stats;
  auto cmp = testing::CompareWithReference(*g, testing::RandomInputs(*g, 3), &stats);
  EXPECT_EQ(cmp.error, "");
  EXPECT_LT(cmp.max_rel, kTolerance) << "max_abs " << cmp.max_abs;
  EXPECT_EQ(stats.fallback_nodes, 0);
  std::filesystem::remove_all(dir);
}

// A max or mean over the points of a 1-D image (PointNet) or the voxels of a 3-D one, after a
// convolution that wrote it channels-last or in channel blocks (oneDNN's choice: the DP names
// layouts of 2-D images only), pools it as stored: no conversion to plain first (the 1-D case
// converted 4 MB per run, 0.44 ms of a 1.6 ms model). The same values as the reference.
TEST(DnnlOpsTest, GlobalPoolingOfOneAndThreeDImagesReadsThemAsStored) {
  for (const bool three_d : {false, true})
    for (const std::string op : {"ReduceMax", "ReduceMean"}) {
      ModelBuilder b;
      const std::vector<int64_t> x =
          three_d ? std::vector<int64_t>{1, 16, 4, 6, 6} : std::vector<int64_t>{1, 16, 256};
      std::vector<int64_t> w = {64, 16, 1}, c = x, axes = {2};
      c[1] = 64;
      if (three_d) {
        w.insert(w.end(), {1, 1});
        axes = {2, 3, 4};
      }
      b.Input("x", x).Output("y", {1, 64});
      b.RandomWeight("w", w, 1);
      b.Node("Conv", {"x", "w"}, {"c"});
      auto& n = b.Node(op, {"c"}, {"y"});
      SetInts(n, "axes", axes);
      SetInt(n, "keepdims", 0);
      const std::string name = op + (three_d ? " 3-D" : " 1-D");
      const PrepareStats st = Check(b, name);
      EXPECT_EQ(st.fallback_nodes, 0) << name;
      EXPECT_EQ(st.kernel_variants.count("global pool"), 1u) << name;
      EXPECT_LE(st.reorders, 1) << name;  // the graph input into the convolution's format only
    }
}

// A mean or max over a block of middle axes (a token mean of [N, tokens, channels]) runs as a 1-D
// pooling of the tensor read channels-last (oneDNN 2.6's reduction takes its reference loop
// there); fewer than 16 inner elements, a sum, or axes with a gap between them keep the
// reduction. The same values either way.
// A softmax along an axis that is not the last one (YOLOv8's box distributions): read with the
// axis innermost, oneDNN's jit softmax and a reorder back, not its reference loop; along the last
// axis the plain kernel as before.
TEST(DnnlOpsTest, SoftmaxAlongAMiddleAxisRunsWithThatAxisInnermost) {
  for (int64_t axis : {1, 2, 3}) {
    ModelBuilder b;
    b.Input("x", {1, 4, 16, 40}).Output("y", {1, 4, 16, 40});
    SetInt(b.Node("Softmax", {"x"}, {"y"}), "axis", axis);
    const std::string name = "softmax axis " + std::to_string(axis);
    const PrepareStats st = Check(b, name, /*map=*/false);
    EXPECT_EQ(st.fallback_nodes, 0) << name;
    EXPECT_EQ(st.kernel_variants.count("softmax along an inner axis"), axis < 3 ? 1u : 0u) << name;
  }
}

TEST(DnnlOpsTest, MiddleAxisMeansMaxesAndSumsRunAsPooling) {
  struct MiddleCase {
    std::string op;
    std::vector<int64_t> x, axes;
    bool pooled;
  };
  const std::vector<MiddleCase> cases = {
      {"ReduceMean", {2, 7, 32}, {1}, true},       {"ReduceMax", {2, 7, 32}, {1}, true},
      {"ReduceMean", {2, 3, 5, 32}, {1, 2}, true}, {"ReduceMean", {2, 7, 8}, {1}, false},
      {"ReduceSum", {2, 7, 32}, {1}, true},        {"ReduceMean", {3, 4, 5, 32}, {0, 2}, false},
      {"ReduceSum", {1, 4, 16, 40}, {2}, true},
  };
  for (const MiddleCase& c : cases) {
    ModelBuilder b;
    std::vector<int64_t> out = c.x;
    for (int64_t a : c.axes) out[a] = 1;
    b.Input("x", c.x).Output("y", out);
    std::vector<std::string> in = {"x"};
    if (c.op == "ReduceSum") {  // opset 13: axes as an input
      b.Int64Weight("axes", c.axes);
      in.push_back("axes");
    }
    auto& n = b.Node(c.op, in, {"y"});
    if (c.op != "ReduceSum") SetInts(n, "axes", c.axes);
    SetInt(n, "keepdims", 1);
    std::string name = c.op;
    for (int64_t d : c.x) name += " " + std::to_string(d);
    const PrepareStats st = Check(b, name);
    EXPECT_EQ(st.fallback_nodes, 0) << name;
    EXPECT_EQ(st.kernel_variants.count("pooled middle axes"), c.pooled ? 1u : 0u) << name;
  }
}

// ConvTranspose on oneDNN's deconvolution (DCGAN's stride-2 4x4, groups with a bias, dilation,
// output_padding, 1-D and 3-D), against the reference kernel; an output_shape that needs a
// negative pad runs on the reference kernel.
TEST(DnnlOpsTest, ConvTransposeRunsOnDeconvolution) {
  struct DeconvCase {
    std::string name;
    std::vector<int64_t> x, w, y;
    std::function<void(onnx::NodeProto&)> attrs;
    int fallback;
  };
  const std::vector<DeconvCase> cases = {
      {"dcgan",
       {1, 8, 5, 5},
       {8, 4, 4, 4},
       {1, 4, 10, 10},
       [](onnx::NodeProto& n) {
         SetInts(n, "strides", {2, 2});
         SetInts(n, "pads", {1, 1, 1, 1});
       },
       0},
      {"groups",
       {2, 6, 4, 3},
       {6, 2, 3, 3},
       {2, 6, 6, 5},
       [](onnx::NodeProto& n) { SetInt(n, "group", 3); },
       0},
      {"dilated",
       {1, 3, 4, 4},
       {3, 5, 3, 3},
       {1, 5, 8, 8},
       [](onnx::NodeProto& n) {
         SetInts(n, "dilations", {2, 2});
       },
       0},
      {"output_padding",
       {1, 4, 3, 3},
       {4, 2, 3, 3},
       {1, 2, 6, 6},
       [](onnx::NodeProto& n) {
         SetInts(n, "strides", {2, 2});
         SetInts(n, "pads", {1, 1, 1, 1});
         SetInts(n, "output_padding", {1, 1});
       },
       0},
      {"1d",
       {1, 4, 7},
       {4, 3, 5},
       {1, 3, 17},
       [](onnx::NodeProto& n) { SetInts(n, "strides", {2}); },
       0},
      {"3d",
       {1, 2, 3, 3, 3},
       {2, 2, 2, 2, 2},
       {1, 2, 6, 6, 6},
       [](onnx::NodeProto& n) {
         SetInts(n, "strides", {2, 2, 2});
       },
       0},
      {"negative pad",
       {1, 2, 3, 3},
       {2, 2, 3, 3},
       {1, 2, 7, 7},
       [](onnx::NodeProto& n) {
         SetInts(n, "output_shape", {7, 7});
       },
       1},
      {"stride 3, kernel 5, uneven pads",
       {1, 5, 4, 3},
       {5, 6, 5, 5},
       {1, 6, 11, 7},
       [](onnx::NodeProto& n) {
         SetInts(n, "strides", {3, 3});
         SetInts(n, "pads", {1, 2, 2, 2});
       },
       0},
      {"stride 2, kernel 2 (UNet)",
       {1, 8, 5, 5},
       {8, 4, 2, 2},
       {1, 4, 10, 10},
       [](onnx::NodeProto& n) {
         SetInts(n, "strides", {2, 2});
       },
       0},
  };
  // Each case as oneDNN's deconvolution and, where it applies (2-D, one group, no dilation,
  // stride 2 or more), as the sub-pixel form (one convolution per output phase, interleaved by
  // strided reorders; normally timed against the deconvolution), into a plain output and into
  // one in oneDNN's own layout: the same values.
  ScopedEnv subpixel("VERISUB_SUBPIXEL");
  for (const DeconvCase& c : cases)
    for (const char* policy : {"off", "on"}) {
      subpixel.Set(policy);
      ModelBuilder b;
      b.Input("x", c.x).Output("y", c.y).RandomWeight("w", c.w, 1).RandomWeight("b", {c.y[1]}, 2);
      c.attrs(b.Node("ConvTranspose", {"x", "w", "b"}, {"y"}));
      const std::string name = c.name + " sub-pixel " + policy;
      const PrepareStats st = Check(b, name);
      EXPECT_EQ(st.fallback_nodes, c.fallback) << name;
      const bool applies =
          c.x.size() == 4 && c.name != "groups" && c.name != "dilated" && c.name != "negative pad";
      EXPECT_EQ(st.kernel_variants.count("sub-pixel deconvolution"),
                std::string(policy) == "on" && applies ? 1u : 0u)
          << name;
      auto g = ImportOnnxBytes(b.Bytes(), name);
      ASSERT_TRUE(g.ok());
      EXPECT_TRUE(CheckInLayout(*g, specs::Layout::kPlain, 5, name + " plain")) << name;
    }
}

// LRN on oneDNN where its window is ONNX's (odd sizes, in any layout the input is stored in),
// on the reference kernel for an even size.
TEST(DnnlOpsTest, LrnRunsOnOneDnnForOddWindows) {
  for (int64_t size : {5, 3, 4}) {
    ModelBuilder b;
    b.Input("x", {2, 19, 6, 5}).Output("y", {2, 19, 6, 5});
    auto& n = b.Node("LRN", {"x"}, {"y"});
    SetInt(n, "size", size);
    SetFloat(n, "alpha", 0.5f);  // large enough that the sum matters at these magnitudes
    SetFloat(n, "beta", 0.75f);
    SetFloat(n, "bias", 2.0f);
    const std::string name = "lrn size " + std::to_string(size);
    EXPECT_EQ(Check(b, name).fallback_nodes, size % 2 == 0 ? 1 : 0) << name;
  }
}

// InstanceNormalization as oneDNN's layer normalization over the rows of the [N*C, spatial] view
// and a per-channel affine: any batch, 3-D and 4-D (PyTorch's GroupNorm export: a reshape to
// [N, groups, rest] and an instance norm of unit scale).
TEST(DnnlOpsTest, InstanceNormRunsAsRowNormalization) {
  for (int64_t batch : {1, 2}) {
    ModelBuilder b;
    b.Input("x", {batch, 6, 7, 5}).Output("y", {batch, 6, 7, 5});
    b.RandomWeight("s", {6}, 1).RandomWeight("t", {6}, 2);
    SetFloat(b.Node("InstanceNormalization", {"x", "s", "t"}, {"y"}), "epsilon", 1e-3f);
    const std::string name = "instance norm batch " + std::to_string(batch);
    EXPECT_EQ(Check(b, name).fallback_nodes, 0) << name;
  }
  ModelBuilder g;
  g.Input("x", {1, 8, 300}).Output("y", {1, 8, 300}).RandomWeight("w", {8, 8, 3}, 3);
  g.RandomWeight("s", {8}, 1).RandomWeight("t", {8}, 2);
  SetInts(g.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1});  // blocked
  g.Node("InstanceNormalization", {"c", "s", "t"}, {"y"});
  EXPECT_EQ(Check(g, "instance norm 3-D").fallback_nodes, 0);
}

// Expand on a copy loop of the backend's own (grouped-query attention's repeat_interleave: an
// unsqueezed axis expanded; a row broadcast to a matrix; a scalar to a tensor of higher rank).
TEST(DnnlOpsTest, ExpandRunsAsACopyLoop) {
  struct Case {
    std::vector<int64_t> x, shape;
  };
  for (const Case& c : std::vector<Case>{{{1, 2, 1, 6, 4}, {1, 2, 3, 6, 4}},
                                         {{1, 5}, {4, 5}},
                                         {{3, 1}, {2, 3, 4}},
                                         {{1}, {2, 3}}}) {
    ModelBuilder b;
    b.Input("x", c.x).Output("y", c.shape).Int64Weight("shape", c.shape);
    b.Node("Relu", {"x"}, {"r"});
    b.Node("Expand", {"r", "shape"}, {"y"});
    std::string name = "expand to";
    for (int64_t d : c.shape) name += " " + std::to_string(d);
    EXPECT_EQ(Check(b, name, /*map=*/false).fallback_nodes, 0) << name;
  }
}

// Pad in every mode on a host loop: constant with a value, reflect, edge, a crop (a negative
// pad), a 3-D tensor; each against the reference kernel.
TEST(DnnlOpsTest, PadInEveryMode) {
  struct Case {
    std::string mode;
    std::vector<int64_t> pads, out;
    float value;
  };
  const std::vector<Case> cases = {
      {"constant", {0, 0, 2, 1, 0, 0, 1, 3}, {1, 3, 8, 10}, 0.5f},
      {"reflect", {0, 0, 2, 3, 0, 0, 1, 3}, {1, 3, 8, 12}, 0.f},
      {"edge", {0, 1, 2, 1, 0, 0, 1, 2}, {1, 4, 8, 9}, 0.f},
      {"constant", {0, 0, -1, 2, 0, 0, 1, -2}, {1, 3, 5, 6}, -2.f},
  };
  for (const Case& c : cases) {
    ModelBuilder b;
    b.Input("x", {1, 3, 5, 6}).Output("y", c.out).Int64Weight("pads", c.pads);
    b.Weight("v", HostTensor::FromDoubles(kFloat, {}, {c.value}));
    b.Node("Relu", {"x"}, {"r"});
    SetString(b.Node("Pad", {"r", "pads", "v"}, {"y"}), "mode", c.mode);
    const std::string name = "pad " + c.mode + " " + std::to_string(c.out[2]);
    EXPECT_EQ(Check(b, name, /*map=*/false).fallback_nodes, 0) << name;
  }
  ModelBuilder a;
  a.Input("x", {2, 3, 5}).Output("y", {2, 3, 9}).Int64Weight("pads", {0, 0, 1, 0, 0, 3});
  SetString(a.Node("Pad", {"x", "pads"}, {"y"}), "mode", "reflect");
  EXPECT_EQ(Check(a, "pad 3-D", /*map=*/false).fallback_nodes, 0);
}

TEST(DnnlOpsTest, DataMovement) {
  ModelBuilder b;
  b.Input("x", {2, 8, 3, 3}).Output("t", {2, 3, 3, 8}).Output("s0", {2, 3, 3, 3});
  b.Output("s1", {2, 5, 3, 3}).Output("f", {2, 72}).RandomWeight("w", {8, 8, 1, 1}, 1);
  b.Int64Weight("split", {3, 5});
  b.Node("Conv", {"x", "w"}, {"c"});  // blocked
  SetInts(b.Node("Transpose", {"c"}, {"t"}), "perm", {0, 2, 3, 1});
  SetInt(b.Node("Split", {"c", "split"}, {"s0", "s1"}), "axis", 1);
  b.Node("Flatten", {"c"}, {"f"});
  EXPECT_EQ(Check(b, "data_movement").fallback_nodes, 0);
}

// Slice with unit steps runs as a reorder of the sub-tensor: channel halves of a blocked
// convolution output (ShuffleNet's split; 6 channels: not whole blocks; imported as the slice
// operator), a negative start, the last axis with axes omitted (an ONNX Slice of four axes), ends
// past the dimension; a step of 2 runs as a strided reorder.
TEST(DnnlOpsTest, Slices) {
  ModelBuilder b;
  b.Input("x", {1, 12, 4, 5}).RandomWeight("w", {12, 12, 1, 1}, 1);
  b.Output("lo", {1, 6, 4, 5}).Output("hi", {1, 6, 4, 5}).Output("last", {1, 12, 4, 3});
  b.Output("odd", {1, 12, 2, 5});
  b.Int64Weight("zero", {0}).Int64Weight("six", {6}).Int64Weight("big", {1000});
  b.Int64Weight("minus6", {-6}).Int64Weight("one", {1}).Int64Weight("two", {2});
  b.Int64Weight("s4", {0, 0, 0, 2}).Int64Weight("e4", {1, 12, 4, 1000});
  b.Int64Weight("step2", {2});
  b.Node("Conv", {"x", "w"}, {"c"});  // blocked
  b.Node("Slice", {"c", "zero", "six", "one"}, {"lo"});
  b.Node("Slice", {"c", "minus6", "big", "one", "one"}, {"hi"});
  b.Node("Slice", {"c", "s4", "e4"}, {"last"});
  b.Node("Slice", {"c", "zero", "big", "two", "step2"}, {"odd"});
  PrepareStats s = Check(b, "slices");
  EXPECT_EQ(s.fallback_nodes, 0);
}

// Channel slices of a channels-last or blocked tensor are copied in that layout where the view
// fits it (whole blocks), with no conversion of the sliced tensor; elsewhere through row-major.
// The values are the reference's either way.
TEST(DnnlOpsTest, ChannelSlicesStayInTheirInputsLayout) {
  ModelBuilder b;
  b.Input("x", {1, 64, 6, 6}).RandomWeight("w", {64, 64, 1, 1}, 1);
  b.Output("a", {1, 32, 6, 6}).Output("b", {1, 32, 6, 6}).Output("c", {1, 24, 6, 6});
  b.Int64Weight("zero", {0}).Int64Weight("one", {1}).Int64Weight("thirty_two", {32});
  b.Int64Weight("sixty_four", {64}).Int64Weight("eight", {8});
  b.Node("Conv", {"x", "w"}, {"y"});
  b.Node("Slice", {"y", "zero", "thirty_two", "one"}, {"a"});
  b.Node("Slice", {"y", "thirty_two", "sixty_four", "one"}, {"b"});
  b.Node("Slice", {"y", "eight", "thirty_two", "one"}, {"c"});  // offset 8: not a whole block
  auto g = ImportOnnxBytes(b.Bytes(), "channel_slices");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(testing::CountKind(*g, "slice"), 3);
  for (specs::Layout layout :
       {specs::Layout::kNHWC, specs::Layout::kNCHW8c, specs::Layout::kNCHW16c}) {
    auto m =
        CheckInLayout(*g, layout, 4, "channel_slices " + std::string(specs::LayoutName(layout)));
    ASSERT_TRUE(m);
    // The conversions: x into the layout, and y to row-major only for the slice at channel 8
    // of 16-channel blocks (before, y was converted for every slice).
    EXPECT_EQ(m->stats().reorders, layout == specs::Layout::kNCHW16c ? 2 : 1)
        << specs::LayoutName(layout);
  }
}

TEST(DnnlOpsTest, ReferenceFallbackBetweenBlockedKernels) {
  ModelBuilder b;
  b.Input("x", {1, 8, 5, 5}).Output("y", {1, 8, 5, 5});
  b.RandomWeight("w1", {8, 8, 1, 1}, 1).RandomWeight("w2", {8, 8, 1, 1}, 2);
  b.Node("Conv", {"x", "w1"}, {"a"});
  b.Node("Sin", {"a"}, {"e"});  // no oneDNN kernel: runs on the reference kernel
  b.Node("Conv", {"e", "w2"}, {"y"});
  PrepareStats s = Check(b, "fallback");
  EXPECT_EQ(s.fallback_nodes, 1);
}

// A layout assignment (the layout pass's output) decides the convolutions' and pools' output
// layouts; every assignment computes the same values.
TEST(DnnlOpsTest, AssignedLayoutsGiveTheSameResults) {
  ModelBuilder b;
  b.Input("x", {1, 8, 9, 9}).Output("y", {1, 16, 5, 5});
  b.RandomWeight("w1", {16, 8, 3, 3}, 1).RandomWeight("w2", {16, 16, 1, 1}, 2);
  SetInts(b.Node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r"});
  auto& pool = b.Node("MaxPool", {"r"}, {"p"});
  SetInts(pool, "kernel_shape", {2, 2});
  SetInts(pool, "strides", {2, 2});
  SetInts(pool, "pads", {0, 0, 1, 1});
  b.Node("Conv", {"p", "w2"}, {"y"});
  auto g = ImportOnnxBytes(b.Bytes(), "layouts");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto inputs = testing::RandomInputs(*g, 4);
  auto ref = MakeDnnlBackend()->Prepare(*g, {});
  ASSERT_TRUE(ref.ok());
  auto expected = (*ref)->Run(inputs);
  ASSERT_TRUE(expected.ok());
  for (specs::Layout l : {specs::Layout::kPlain, specs::Layout::kNHWC, specs::Layout::kNCHW8c,
                          specs::Layout::kNCHW16c}) {
    PrepareOptions opts;
    opts.layouts.assign(g->num_values(), l);
    ExpectSameOutputs(*g, opts, inputs, *expected, std::string(specs::LayoutName(l)));
  }
  PrepareOptions wrong;
  wrong.layouts.assign(3, specs::Layout::kNHWC);
  EXPECT_FALSE(MakeDnnlBackend()->Prepare(*g, wrong).ok());
}

// TimeNode times the kernel computing a node: a fused member times its group's kernel; a node
// index out of range is an error.
TEST(DnnlOpsTest, TimesNodes) {
  ModelBuilder b;
  b.Input("x", {1, 8, 6, 6}).Output("y", {1, 8, 6, 6}).RandomWeight("w", {8, 8, 3, 3}, 1);
  SetInts(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c"}, {"r"});
  b.Node("Sin", {"r"}, {"y"});
  auto g = ImportOnnxBytes(b.Bytes(), "time");
  ASSERT_TRUE(g.ok());
  auto m = MakeDnnlBackend()->Prepare(*g, {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto first = (*m)->Run(testing::RandomInputs(*g, 1));
  ASSERT_TRUE(first.ok());
  for (int node = 0; node < g->num_nodes(); ++node) {
    auto t = (*m)->TimeNode(node, 3);
    ASSERT_TRUE(t.ok()) << node << ": " << t.status().message();
    EXPECT_GE(*t, 0.0);
  }
  EXPECT_FALSE((*m)->TimeNode(g->num_nodes(), 3).ok());
  // The profile has every step: the convolution with its relu, the sine on the reference kernels
  // and the conversions around it.
  auto profile = (*m)->Profile(2, true);
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  ASSERT_EQ(static_cast<int>(profile->size()), (*m)->stats().steps);
  int conv = 0, reference = 0;
  for (const StepProfile& p : *profile) {
    EXPECT_GT(p.seconds, 0.0) << p.name;  // timed in the run
    EXPECT_GT(p.alone_seconds, 0.0) << p.name;
    conv += p.kind == "conv2d" && p.nodes == 2;  // conv2d and relu
    reference += p.reference && p.kind == "onnx:Sin";
  }
  EXPECT_EQ(conv, 1);
  EXPECT_EQ(reference, 1);
  // The output is unchanged by timing (kernels rerun on the same buffers).
  auto again = (*m)->Run(testing::RandomInputs(*g, 1));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(testing::Compare(*again, *first).max_abs, 0.0);
}

TEST(DnnlOpsTest, ThreadCountsGiveTheSameResults) {
  ModelBuilder b;
  b.Input("x", {1, 8, 9, 9}).Output("y", {1, 16, 9, 9}).RandomWeight("w", {16, 8, 3, 3}, 1);
  SetInts(b.Node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1, 1, 1});
  auto g = ImportOnnxBytes(b.Bytes(), "threads");
  ASSERT_TRUE(g.ok());
  auto inputs = testing::RandomInputs(*g, 3);
  for (int threads : {1, 2}) {
    auto cmp = testing::CompareWithReference(*g, inputs, nullptr, threads);
    EXPECT_EQ(cmp.error, "");
    EXPECT_LT(cmp.max_rel, kTolerance) << threads;
  }
}

// A BatchNormalization that cannot fold (a ReLU before the next convolution, DenseNet's pre-
// activation) and a squeeze-excite gate (a per-channel factor computed at run time) run as the
// channel-affine pass, in every layout a value can be stored in: plain, channels-last, and
// blocked by 8 and by 16 with 12 channels (a padded last block that must stay zero for the
// convolution reading it). Also the last axis of a matrix (a Mul and an Add by [12] vectors)
// with a Clip after them.
TEST(DnnlOpsTest, ChannelScaleAndShiftInEveryLayout) {
  for (specs::Layout layout : {specs::Layout::kPlain, specs::Layout::kNHWC, specs::Layout::kNCHW8c,
                               specs::Layout::kNCHW16c}) {
    ModelBuilder b;
    b.Input("x", {1, 8, 6, 5}).Output("y", {1, 12, 6, 5}).Output("m", {3, 12});
    b.Input("r", {3, 12});
    b.RandomWeight("w1", {6, 8, 1, 1}, 1).RandomWeight("w2", {12, 12, 3, 3}, 2);
    b.RandomWeight("w1b", {6, 8, 3, 3}, 12);
    b.RandomWeight("w3", {12, 12, 1, 1}, 3);
    b.RandomWeight("gamma", {12}, 4).RandomWeight("beta", {12}, 5);
    b.RandomWeight("mean", {12}, 6).Weight("var", testing::RandomTensor({12}, 7));
    b.RandomWeight("s", {12}, 8).RandomWeight("t", {12}, 9);
    // A concat of two convolutions, then the normalization (DenseNet's dense layer).
    b.Node("Conv", {"x", "w1"}, {"c1"});
    SetInts(b.Node("Conv", {"x", "w1b"}, {"c1b"}), "pads", {1, 1, 1, 1});
    SetInt(b.Node("Concat", {"c1", "c1b"}, {"cat"}), "axis", 1);
    b.Node("Abs", {"var"}, {"var_abs"});
    b.Node("BatchNormalization", {"cat", "gamma", "beta", "mean", "var_abs"}, {"bn"});
    b.Node("Relu", {"bn"}, {"act"});
    SetInts(b.Node("Conv", {"act", "w2"}, {"c2"}), "pads", {1, 1, 1, 1});
    b.Node("GlobalAveragePool", {"c2"}, {"pooled"});
    b.Node("Conv", {"pooled", "w3"}, {"gate_logits"});
    b.Node("Sigmoid", {"gate_logits"}, {"gate"});
    b.Node("Mul", {"c2", "gate"}, {"y"});
    b.Node("Mul", {"r", "s"}, {"rs"});
    b.Node("Add", {"rs", "t"}, {"rst"});
    auto& clip = b.Node("Clip", {"rst", "lo", "hi"}, {"m"});
    (void)clip;
    b.Weight("lo", HostTensor::FromDoubles(kFloat, {}, {-0.5}));
    b.Weight("hi", HostTensor::FromDoubles(kFloat, {}, {0.5}));
    auto g = ImportOnnxBytes(b.Bytes(), "affine");
    ASSERT_TRUE(g.ok()) << g.status().message();
    EXPECT_EQ(testing::CountKind(*g, "channel_scale"), 3);
    std::unique_ptr<PreparedModel> m =
        CheckInLayout(*g, layout, 11, std::string(specs::LayoutName(layout)));
    ASSERT_TRUE(m);
    EXPECT_EQ(m->stats().fallback_nodes, 0) << specs::LayoutName(layout);
    // Each pass is one step: the scale, its shift and the relu (or clip) after them.
    auto profile = m->Profile(1, true);
    ASSERT_TRUE(profile.ok());
    int affine_steps = 0;
    for (const StepProfile& p : *profile) {
      EXPECT_FALSE(p.reference) << p.name;
      affine_steps += p.kind == "channel_scale" && p.nodes >= 3;
    }
    EXPECT_EQ(affine_steps, 2) << specs::LayoutName(layout);
  }
}

// A broadcast along middle axes, which oneDNN 2.6 leaves to its reference loop (a shifted-window
// attention mask [1, W, 1, N, N] added to [B, W, H, N, N]), and the other binary operators with
// operands broadcast either way.
TEST(DnnlOpsTest, BroadcastsAlongMiddleAxes) {
  ModelBuilder b;
  b.Input("a", {2, 3, 4, 5, 5}).Input("mask", {1, 3, 1, 5, 5}).Input("c", {2, 1, 4, 1, 5});
  b.Output("sum", {2, 3, 4, 5, 5}).Output("diff", {2, 3, 4, 5, 5});
  b.Output("quot", {2, 3, 4, 5, 5}).Output("hi", {2, 3, 4, 5, 5});
  b.Node("Add", {"a", "mask"}, {"sum"});
  b.Node("Sub", {"mask", "a"}, {"diff"});
  b.Node("Abs", {"c"}, {"cabs"});
  b.Node("Add", {"cabs", "one"}, {"cpos"});
  b.Weight("one", HostTensor::FromDoubles(kFloat, {}, {1.0}));
  b.Node("Div", {"a", "cpos"}, {"quot"});
  b.Node("Max", {"a", "c"}, {"hi"});
  PrepareStats s = Check(b, "broadcasts");
  EXPECT_EQ(s.fallback_nodes, 0);
}

// Gather of one constant index along an axis (q, k, v = qkv[0], qkv[1], qkv[2]) is a strided
// copy of that sub-tensor, for a scalar index (the axis dropped) and a one-element vector (kept).
TEST(DnnlOpsTest, GatherOfOneConstantIndex) {
  ModelBuilder b;
  b.Input("qkv", {3, 2, 4, 6}).Output("k", {2, 4, 6}).Output("v", {3, 2, 1, 6});
  b.Weight("one", HostTensor::FromInts(kInt64, {}, {1}));
  b.Weight("last", HostTensor::FromInts(kInt64, {1}, {-1}));
  b.Node("Gather", {"qkv", "one"}, {"k"});
  SetInt(b.Node("Gather", {"qkv", "last"}, {"v"}), "axis", 2);
  PrepareStats s = Check(b, "gather", /*map=*/false);
  EXPECT_EQ(s.fallback_nodes, 0);
}

// A dense block (DenseNet): every layer concatenates all the feature maps before it. With the
// maps in one channel-blocked layout, each is written once into the block's buffer and every
// concat is a prefix of it: no step copies, and the outputs are the reference's.
// The dense block of the test below.
std::string DenseBlockBytes() {
  ModelBuilder b;
  b.Input("x", {1, 3, 5, 5}).Output("y", {1, 64, 5, 5});
  b.RandomWeight("stem", {16, 3, 1, 1}, 9);
  b.Node("Conv", {"x", "stem"}, {"s"});
  std::vector<std::string> features = {"s"};
  for (int layer = 0; layer < 3; ++layer) {
    const std::string l = std::to_string(layer);
    SetInt(b.Node("Concat", features, {"cat" + l}), "axis", 1);
    b.Node("Relu", {"cat" + l}, {"act" + l});
    const int64_t in = 16 * (layer + 1);
    b.RandomWeight("w" + l, {16, in, 3, 3}, 10 + layer);
    SetInts(b.Node("Conv", {"act" + l, "w" + l}, {"f" + l}), "pads", {1, 1, 1, 1});
    features.push_back("f" + l);
  }
  SetInt(b.Node("Concat", features, {"y"}), "axis", 1);
  return b.Bytes();
}

// Steps of `m` whose kind is one of `kinds`, and whose name begins with `prefix`.
int StepsOf(PreparedModel& m, const std::vector<std::string>& kinds,
            const std::string& prefix = "") {
  auto profile = m.Profile(1, true);
  EXPECT_TRUE(profile.ok());
  int steps = 0;
  for (const StepProfile& p : profile.ok() ? *profile : std::vector<StepProfile>{})
    steps += std::find(kinds.begin(), kinds.end(), p.kind) != kinds.end() &&
             p.name.rfind(prefix, 0) == 0;
  return steps;
}

int CopyingConcats(PreparedModel& m) { return StepsOf(m, {"concat", "onnx:Concat"}); }

TEST(DnnlOpsTest, DenseBlockConcatsArePrefixesOfOneBuffer) {
  auto g = ImportOnnxBytes(DenseBlockBytes(), "dense_block");
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::unique_ptr<PreparedModel> m = CheckInLayout(*g, specs::Layout::kNCHW16c, 3, "dense_block");
  ASSERT_TRUE(m);
  EXPECT_EQ(CopyingConcats(*m), 0);
  // The fusion plan predicts it on the graph alone (the layout DP prices these concats free).
  const dnnl_backend::FusionPlan plan = dnnl_backend::PlanFusion(*g);
  int concats = 0;
  for (const dnnl_backend::Group& grp : plan.groups)
    if (dnnl_backend::IsConcat(g->node(grp.kernel_node))) {
      ++concats;
      EXPECT_TRUE(grp.concat_in_place) << g->node(grp.kernel_node).name;
    }
  EXPECT_EQ(concats, 3);  // the first layer's Concat of one input is removed at import
}

// A standalone elementwise kernel writes over its input when nothing reads the input after it,
// and into a buffer of its own when something does.
TEST(DnnlOpsTest, EltwiseRunsInPlaceOverADeadInput) {
  for (bool input_read_later : {false, true}) {
    ModelBuilder b;
    b.Input("x", {1, 8, 16, 16}).Output("y", {1, 8, 16, 16});
    b.RandomWeight("w1", {64, 8, 1, 1}, 1).RandomWeight("w2", {8, 64, 1, 1}, 2);
    b.Node("Conv", {"x", "w1"}, {"c"});
    auto& pool = b.Node("MaxPool", {"c"}, {"t"});  // takes no post-op
    SetInts(pool, "kernel_shape", {3, 3});
    SetInts(pool, "pads", {1, 1, 1, 1});
    b.Node("Sigmoid", {"t"}, {"s"});
    if (input_read_later) {
      b.Node("Add", {"s", "t"}, {"a"});
      b.Node("Conv", {"a", "w2"}, {"y"});
    } else {
      b.Node("Conv", {"s", "w2"}, {"y"});
    }
    const std::string name = input_read_later ? "input read later" : "input dead";
    auto g = ImportOnnxBytes(b.Bytes(), name);
    ASSERT_TRUE(g.ok()) << g.status().message();
    for (specs::Layout layout : {specs::Layout::kPlain, specs::Layout::kNCHW16c}) {
      std::unique_ptr<PreparedModel> m = CheckInLayout(*g, layout, 5, name);
      ASSERT_TRUE(m);
      EXPECT_EQ(m->stats().in_place, input_read_later ? 0 : 1) << specs::LayoutName(layout);
    }
  }
}

// Feature maps stored channels-last (the layout DP's choice where oneDNN's convolution is faster
// so) in a block whose concats are assigned a channel-blocked layout: each map is converted once,
// straight into its piece of the block's buffer, and still no concat copies.
TEST(DnnlOpsTest, DenseBlockConvertsPiecesIntoPlace) {
  auto g = ImportOnnxBytes(DenseBlockBytes(), "dense_block_nhwc");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto layout_of = [](const Value& v) {
    return v.name.rfind("f", 0) == 0 ? specs::Layout::kNHWC : specs::Layout::kNCHW16c;
  };
  std::unique_ptr<PreparedModel> m =
      CheckInLayout(*g, specs::Layout::kNCHW16c, 3, "dense_block_nhwc", layout_of);
  ASSERT_TRUE(m);
  EXPECT_EQ(CopyingConcats(*m), 0);
  // f0, f1 and f2 once each, read by every later concat.
  EXPECT_EQ(StepsOf(*m, {"reorder"}, "reorder f"), 3);
}

// Concats the plan must not predict in place: a part that is a graph input, a part given twice,
// a part some reshape views (its buffer is shared, plain), a concat on the batch axis.
TEST(DnnlOpsTest, ConcatsThatCannotBeInPlaceAreNotMarked) {
  for (int variant = 0; variant < 4; ++variant) {
    ModelBuilder b;
    b.Input("x", {1, 8, 5, 5}).Output("y", {variant == 3 ? 2 : 1, variant == 3 ? 16 : 32, 5, 5});
    b.RandomWeight("w1", {16, 8, 1, 1}, 1).RandomWeight("w2", {16, 8, 1, 1}, 2);
    b.Node("Conv", {"x", "w1"}, {"a"});
    b.Node("Conv", {"x", "w2"}, {"c"});
    std::vector<std::string> in = {"a", variant == 1 ? "a" : "c"};
    if (variant == 0) {
      b.RandomWeight("w3", {8, 8, 1, 1}, 3);
      b.Node("Conv", {"x", "w3"}, {"d"});
      in = {"a", "d", "x"};
    }
    if (variant == 2) {
      b.Output("flat", {1, 400});
      SetInt(b.Node("Flatten", {"c"}, {"flat"}), "axis", 1);
    }
    SetInt(b.Node("Concat", in, {"cat"}), "axis", variant == 3 ? 0 : 1);
    b.Node("Relu", {"cat"}, {"y"});
    const std::string name = "concat_not_in_place_" + std::to_string(variant);
    ImportOptions options;
    options.map_to_spec_ops = false;
    auto g = ImportOnnxBytes(b.Bytes(), name, options);
    ASSERT_TRUE(g.ok()) << g.status().message();
    const dnnl_backend::FusionPlan plan = dnnl_backend::PlanFusion(*g);
    for (const dnnl_backend::Group& grp : plan.groups) {
      if (dnnl_backend::IsConcat(g->node(grp.kernel_node))) {
        EXPECT_FALSE(grp.concat_in_place) << name;
      }
    }
    // The backend copies too (a graph input converted into its piece would not be: not run):
    // the whole concat, or, where only the viewed part cannot move, that part into its piece.
    if (variant == 0) continue;
    std::unique_ptr<PreparedModel> m =
        CheckInLayout(*g, variant == 2 ? specs::Layout::kPlain : specs::Layout::kNCHW8c, 7, name);
    ASSERT_TRUE(m);
    EXPECT_EQ(CopyingConcats(*m), variant == 2 ? 0 : 1) << name;
    if (variant == 2) {
      EXPECT_EQ(StepsOf(*m, {"reorder"}, "reorder c"), 1) << name;
    }
  }
}

// A channel split of one image stored plain, or blocked with every piece whole blocks, is no
// copy: the pieces are parts of the input's buffer (an Inception-style merged 1x1 convolution's
// outputs). The middle piece is rectified before the last one is read: it may not be written
// over while the input's buffer still holds a live piece, and may be after. In channels-last the
// pieces are strided and copied.
TEST(DnnlOpsTest, ChannelSplitsOfOneImageAreViews) {
  for (bool relu_last : {false, true}) {
    ModelBuilder b;
    b.Input("x", {1, 8, 6, 6}).Output("y", {1, 48, 6, 6});
    b.RandomWeight("w", {64, 8, 1, 1}, 1).RandomWeight("wp", {8, 16, 3, 3}, 2);
    b.RandomWeight("wr", {8, 16, 1, 1}, 3).Int64Weight("sizes", {16, 32, 16});
    b.Node("Conv", {"x", "w"}, {"t"});
    SetInt(b.Node("Split", {"t", "sizes"}, {"p", "q", "r"}), "axis", 1);
    SetInts(b.Node("Conv", {"p", "wp"}, {"cp"}), "pads", {1, 1, 1, 1});
    if (!relu_last) b.Node("Relu", {"q"}, {"rq"});
    b.Node("Conv", {"r", "wr"}, {"cr"});
    if (relu_last) b.Node("Relu", {"q"}, {"rq"});
    SetInt(b.Node("Concat", {"cp", "rq", "cr"}, {"y"}), "axis", 1);
    const std::string name = relu_last ? "split_views_relu_last" : "split_views";
    auto g = ImportOnnxBytes(b.Bytes(), name);
    ASSERT_TRUE(g.ok()) << g.status().message();
    for (specs::Layout layout :
         {specs::Layout::kPlain, specs::Layout::kNCHW16c, specs::Layout::kNHWC}) {
      const std::string what = name + " " + std::string(specs::LayoutName(layout));
      std::unique_ptr<PreparedModel> m = CheckInLayout(*g, layout, 5, what);
      ASSERT_TRUE(m);
      // (The import makes the split three slices.)
      EXPECT_EQ(StepsOf(*m, {"slice", "split", "onnx:Split"}),
                layout == specs::Layout::kNHWC ? 3 : 0)
          << what;
    }
  }
}

// Explicit paddings import as the spec's pad before a valid window (AlexNet's 11x11/4 convolution
// padded by 2, GoogLeNet's ceil-mode 3x3/2 max pool whose last window overhangs); the backend
// folds each into its window's padding, and runs a pad no window reads (edge copies before a relu)
// as a copy loop. Every layout computes what the reference does.
TEST(DnnlOpsTest, SpecPadsFoldIntoTheWindowsThatReadThem) {
  ModelBuilder b;
  b.Input("x", {1, 3, 35, 35}).Output("y", {1, 8, 4, 4}).Output("e", {1, 3, 37, 38});
  b.RandomWeight("w", {8, 3, 11, 11}, 1).Int64Weight("pads", {0, 0, 1, 2, 0, 0, 1, 1});
  auto& conv = b.Node("Conv", {"x", "w"}, {"c"});
  SetInts(conv, "pads", {2, 2, 2, 2});
  SetInts(conv, "strides", {4, 4});
  auto& pool = b.Node("MaxPool", {"c"}, {"y"});  // 8x8 -> 4x4: ceil((8 - 3) / 2) + 1
  SetInts(pool, "kernel_shape", {3, 3});
  SetInts(pool, "strides", {2, 2});
  SetInt(pool, "ceil_mode", 1);
  SetString(b.Node("Pad", {"x", "pads"}, {"p"}), "mode", "edge");
  b.Node("Relu", {"p"}, {"e"});
  auto g = ImportOnnxBytes(b.Bytes(), "explicit_pads");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(testing::CountKind(*g, "pad"), 3);
  EXPECT_EQ(testing::CountKind(*g, "onnx:Conv") + testing::CountKind(*g, "onnx:MaxPool"), 0);
  for (specs::Layout layout :
       {specs::Layout::kPlain, specs::Layout::kNHWC, specs::Layout::kNCHW8c}) {
    const std::string what = "explicit_pads " + std::string(specs::LayoutName(layout));
    std::unique_ptr<PreparedModel> m = CheckInLayout(*g, layout, 9, what);
    ASSERT_TRUE(m);
    EXPECT_EQ(StepsOf(*m, {"pad"}), 1) << what;  // the edge pad the relu reads
  }
}

// ONNX Runtime's dynamically quantized matmul (quantize_dynamic: DynamicQuantizeLinear,
// MatMulInteger, Cast, the scales' Mul, Mul, the bias' Add) imports as one com.microsoft
// DynamicQuantizeMatMul that the oneDNN backend runs as an int8 matmul, computing what the
// pattern computes on the reference kernels: signed weights without zero point (what
// quantize_dynamic writes), unsigned weights with a zero point per column (run shifted, the
// shift corrected by the rows' sums), signed weights with a zero point; scales one or per
// column; with and without bias. Export writes the pattern again.
TEST(DnnlOpsTest, DynamicallyQuantizedMatmulsRunAsOneInt8Matmul) {
  struct QuantCase {
    std::string name;
    int32_t type;
    std::vector<int64_t> zero;  // empty: no zero point input
    bool per_column_scale, bias;
  };
  const int64_t k = 40, cols = 24;
  const std::vector<QuantCase> cases = {
      {"int8 symmetric", kInt8, {0}, false, true},
      {"uint8 per column", kUint8, {}, true, false},
      {"int8 zero point", kInt8, {-3}, false, true},
      {"uint8 no zero point", kUint8, {}, false, false},
  };
  for (const QuantCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<int64_t> w(k * cols), zero = c.zero;
    const int64_t lo = c.type == kInt8 ? -127 : 0, span = c.type == kInt8 ? 255 : 256;
    for (size_t i = 0; i < w.size(); ++i) w[i] = lo + static_cast<int64_t>((i * 7919 + 13) % span);
    if (c.type == kUint8 && c.per_column_scale)
      for (int64_t j = 0; j < cols; ++j) zero.push_back(100 + 3 * j);
    std::vector<double> scales = {0.0125};
    if (c.per_column_scale)
      for (int64_t j = 1; j < cols; ++j) scales.push_back(0.01 + 0.001 * static_cast<double>(j));
    ModelBuilder b;
    b.Input("x", {2, 3, k}).Output("y", {2, 3, cols});
    b.Weight("w", HostTensor::FromInts(c.type, {k, cols}, w));
    b.Weight("ws", HostTensor::FromDoubles(kFloat, {static_cast<int64_t>(scales.size())}, scales));
    std::vector<std::string> operands = {"q", "w", "z"};
    if (!zero.empty()) {
      b.Weight("wz", HostTensor::FromInts(c.type, {static_cast<int64_t>(zero.size())}, zero));
      operands.push_back("wz");
    }
    b.Node("DynamicQuantizeLinear", {"x"}, {"q", "s", "z"});
    b.Node("MatMulInteger", operands, {"p"});
    SetInt(b.Node("Cast", {"p"}, {"f"}), "to", kFloat);
    b.Node("Mul", {"s", "ws"}, {"sc"});
    if (c.bias) {
      b.RandomWeight("bias", {cols}, 5);
      b.Node("Mul", {"f", "sc"}, {"y0"});
      b.Node("Add", {"y0", "bias"}, {"y"});
    } else {
      b.Node("Mul", {"sc", "f"}, {"y"});
    }
    ImportOptions pattern_only;
    pattern_only.map_to_spec_ops = false;
    auto pattern = ImportOnnxBytes(b.Bytes(), c.name, pattern_only);
    auto fused = ImportOnnxBytes(b.Bytes(), c.name);
    ASSERT_TRUE(pattern.ok() && fused.ok());
    EXPECT_EQ(fused->num_nodes(), 1);
    EXPECT_EQ(testing::CountKind(*fused, "onnx:com.microsoft.DynamicQuantizeMatMul"), 1);
    const std::vector<HostTensor> inputs = testing::RandomInputs(*pattern, 11);
    auto expected = MakeReferenceBackend()->Prepare(*pattern, {});
    ASSERT_TRUE(expected.ok());
    auto want = (*expected)->Run(inputs);
    ASSERT_TRUE(want.ok());
    auto model = MakeDnnlBackend()->Prepare(*fused, {});
    ASSERT_TRUE(model.ok()) << model.status().message();
    EXPECT_EQ((*model)->stats().fallback_nodes, 0);
    auto got = (*model)->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status().message();
    const testing::Comparison cmp = testing::Compare(*got, *want);
    EXPECT_EQ(cmp.error, "");
    EXPECT_LT(cmp.max_abs, 1e-5 * cmp.max_ref) << "max |ref| " << cmp.max_ref;
    // The reference kernel of the fused node too, and the pattern written out again.
    auto reference = MakeReferenceBackend()->Prepare(*fused, {});
    ASSERT_TRUE(reference.ok());
    auto fused_ref = (*reference)->Run(inputs);
    ASSERT_TRUE(fused_ref.ok());
    EXPECT_LT(testing::Compare(*fused_ref, *want).max_abs, 1e-6 * cmp.max_ref);
    onnx::ModelProto written;
    ASSERT_TRUE(ExportOnnxModel(*fused, &written).ok());
    std::set<std::string> types,
        want_types = {"Cast", "DynamicQuantizeLinear", "MatMulInteger", "Mul"};
    for (const onnx::NodeProto& n : written.graph().node()) types.insert(n.op_type());
    if (c.bias) want_types.insert("Add");
    EXPECT_EQ(types, want_types);
    auto again = ImportOnnxBytes(written.SerializeAsString(), c.name, pattern_only);
    ASSERT_TRUE(again.ok()) << again.status().message();
    auto rerun = MakeReferenceBackend()->Prepare(*again, {});
    ASSERT_TRUE(rerun.ok());
    auto rewritten = (*rerun)->Run(inputs);
    ASSERT_TRUE(rewritten.ok());
    EXPECT_EQ(testing::Compare(*rewritten, *want).max_abs, 0.0);
  }
}

// ONNX Runtime's quantize_dynamic on a Conv (DynamicQuantizeLinear, ConvInteger, Cast, the scales'
// Mul, Mul, a bias Add) imports as a Conv over DequantizeLinear of the run-time quantization and
// of the int8 weights, which the oneDNN backend runs as one range-and-round pass and a float
// convolution: no node on the reference kernels (ResNet-50 2.9 s -> 33 ms), the pattern's own
// values (the reference kernels on the pattern as written).
TEST(DnnlOpsTest, DynamicallyQuantizedConvolutionsRunAsFloatConvolutions) {
  for (int32_t w_type : {kInt8, kUint8}) {
    SCOPED_TRACE(w_type == kInt8 ? "int8 weights" : "uint8 weights");
    ModelBuilder b;
    b.Input("x", {1, 4, 6, 6}).Output("y", {1, 8, 6, 6});
    std::vector<int64_t> w(8 * 4 * 9);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = static_cast<int64_t>((i * 7919 + 13) % 255) - (w_type == kInt8 ? 127 : 0);
    b.Weight("w", HostTensor::FromInts(w_type, {8, 4, 3, 3}, w))
        .Weight("ws", HostTensor::FromDoubles(kFloat, {1}, {0.0123}))
        .Weight("wz", HostTensor::FromInts(w_type, {}, {w_type == kInt8 ? 0 : 121}))
        .RandomWeight("bias", {1, 8, 1, 1}, 4);
    b.Node("DynamicQuantizeLinear", {"x"}, {"q", "s", "z"});
    // Two convolutions of one quantized input (a block's input read by conv1 and downsample).
    for (const char* k : {"0", "1"}) {
      const std::string p = std::string("p") + k, f = std::string("f") + k;
      SetInts(b.Node("ConvInteger", {"q", "w", "z", "wz"}, {p}), "pads", {1, 1, 1, 1});
      SetInt(b.Node("Cast", {p}, {f}), "to", kFloat);
      b.Node("Mul", {"s", "ws"}, {std::string("sc") + k});
      b.Node("Mul", {f, std::string("sc") + k}, {std::string("y") + k});
    }
    b.Node("Add", {"y0", "bias"}, {"yb"});
    b.Node("Add", {"yb", "y1"}, {"y"});
    ImportOptions pattern_only;
    pattern_only.map_to_spec_ops = false;
    auto pattern = ImportOnnxBytes(b.Bytes(), "conv integer", pattern_only);
    auto g = ImportOnnxBytes(b.Bytes(), "conv integer");
    ASSERT_TRUE(pattern.ok() && g.ok()) << g.status().message();
    EXPECT_EQ(testing::CountKind(*pattern, "onnx:ConvInteger"), 2);
    EXPECT_EQ(testing::CountKind(*g, "onnx:ConvInteger"), 0);
    const std::vector<HostTensor> inputs = testing::RandomInputs(*pattern, 3);
    auto ref = MakeReferenceBackend()->Prepare(*pattern, {});
    auto fast = MakeDnnlBackend()->Prepare(*g, {});
    ASSERT_TRUE(ref.ok() && fast.ok()) << fast.status().message();
    EXPECT_EQ((*fast)->stats().fallback_nodes, 0);
    auto want = (*ref)->Run(inputs);
    auto got = (*fast)->Run(inputs);
    ASSERT_TRUE(want.ok() && got.ok()) << got.status().message();
    const testing::Comparison cmp = testing::Compare(*got, *want);
    EXPECT_EQ(cmp.error, "");
    EXPECT_GT(cmp.max_ref, 0.5);
    EXPECT_LT(cmp.max_abs, 1e-5 * cmp.max_ref);
  }
}

// A model quantized in ONNX Runtime's QDQ form: every activation a QuantizeLinear read only by
// a DequantizeLinear (one scale and zero point). The oneDNN backend computes the pair in float
// (no 8-bit value): as eltwise post-ops of the convolution before it (and after a residual add
// that convolution absorbs), else as one pass ("pattern:fake_quant"): the reference's values,
// up to a tie rounded the other way now and then (x times the reciprocal of the scale), which
// moves that element by one step.
TEST(DnnlOpsTest, QuantizeDequantizePairsRunInFloat) {
  for (int32_t zero_type : {kUint8, kInt8}) {
    SCOPED_TRACE(zero_type == kUint8 ? "uint8" : "int8");
    ModelBuilder b;
    b.Input("x", {1, 8, 6, 6}).Input("r", {1, 8, 6, 6}).Output("y", {1, 8, 6, 6});
    b.RandomWeight("w", {8, 8, 3, 3}, 3).RandomWeight("bias", {8}, 4);
    const double scale = 0.0173;
    b.Weight("s", HostTensor::FromDoubles(kFloat, {}, {scale}));
    b.Weight("z", HostTensor::FromInts(zero_type, {}, {zero_type == kUint8 ? 131 : -5}));
    auto qdq = [&](const std::string& in, const std::string& out) {
      b.Node("QuantizeLinear", {in, "s", "z"}, {out + "_q"});
      b.Node("DequantizeLinear", {out + "_q", "s", "z"}, {out});
    };
    qdq("x", "xd");  // on its own
    auto& conv = b.Node("Conv", {"xd", "w", "bias"}, {"c"});
    SetInts(conv, "pads", {1, 1, 1, 1});
    qdq("c", "cd");  // a post-op
    b.Node("Add", {"cd", "r"}, {"a"});
    qdq("a", "y");  // after the residual add's sum post-op
    PrepareStats stats;
    auto g = ImportOnnxBytes(b.Bytes(), "qdq");
    ASSERT_TRUE(g.ok()) << g.status().message();
    const std::vector<HostTensor> inputs = testing::RandomInputs(*g, 5);
    const testing::Comparison cmp = testing::CompareWithReference(*g, inputs, &stats);
    EXPECT_EQ(cmp.error, "");
    EXPECT_EQ(stats.fallback_nodes, 0);
    // The conv's group: the bias, Q, DQ, the residual Add, Q, DQ; the first pair's group: DQ.
    EXPECT_EQ(stats.fused_nodes, 7);
    EXPECT_LE(cmp.max_abs, scale * 1.01);
    EXPECT_LT(cmp.norm_rel, 0.02);
  }
}

// Runs QDQ model `b` on oneDNN against the reference backend: nothing on the reference kernels,
// `int8` int8 kernels and `eight_bit` 8-bit outputs where the CPU has 8-bit dot products (none
// elsewhere), the reference's values within `tolerance` of the largest.
void ExpectQdqRun(const ModelBuilder& b, uint64_t seed, int int8, int eight_bit,
                  double tolerance = 1e-4) {
  auto g = ImportOnnxBytes(b.Bytes(), "qdq");
  ASSERT_TRUE(g.ok()) << g.status().message();
  const std::vector<HostTensor> inputs = testing::RandomInputs(*g, seed);
  PrepareStats stats;
  const testing::Comparison cmp = testing::CompareWithReference(*g, inputs, &stats);
  EXPECT_EQ(cmp.error, "");
  EXPECT_EQ(stats.fallback_nodes, 0);
  const bool dot = dnnl_backend::HasInt8DotKernels();
  EXPECT_EQ(stats.kernel_variants["int8"], dot ? int8 : 0);
  EXPECT_EQ(stats.kernel_variants["8-bit output"], dot ? eight_bit : 0);
  EXPECT_GT(cmp.max_ref, 0.5);
  EXPECT_LT(cmp.max_abs, tolerance * cmp.max_ref) << "norm " << cmp.norm_rel;
}

// A QDQ model's convolutions (the input a QuantizeLinear / DequantizeLinear pair, the weights a
// DequantizeLinear of int8 constants) run as int8 oneDNN convolutions where the CPU has 8-bit
// dot products: the input requantized into its steps, int32 sums, the input's scale times the
// weights' as output scales, the bias in units of the sums, then the group's post-ops (a
// residual add). Uint8 and int8 inputs with and without zero points (padding reads the real 0),
// per-tensor and per-channel weight scales, a depthwise convolution. The model's arithmetic is
// sums of integer products times scales, so the int8 kernel agrees with the reference's float
// evaluation to float rounding (checked on the convolution's float output, not a quantized one).
TEST(DnnlOpsTest, QdqConvolutionsRunInInt8) {
  struct QdqCase {
    std::string name;
    int32_t type;  // of the input's steps
    int64_t zero;
    bool per_channel, depthwise;
  };
  const std::vector<QdqCase> cases = {{"uint8", kUint8, 0, false, false},
                                      {"uint8 zero point", kUint8, 131, true, false},
                                      {"int8 zero point", kInt8, -5, true, false},
                                      {"depthwise", kUint8, 7, true, true}};
  for (const QdqCase& c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t ch = 16, groups = c.depthwise ? ch : 1;
    ModelBuilder b;
    b.Input("x", {1, ch, 7, 7}).Input("r", {1, ch, 7, 7}).Output("y", {1, ch, 7, 7});
    std::vector<int64_t> w(ch * (ch / groups) * 9);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int64_t>((i * 7919 + 13) % 255) - 127;
    std::vector<double> w_scale = {0.011};
    if (c.per_channel)
      for (int64_t o = 1; o < ch; ++o) w_scale.push_back(0.004 + 0.001 * static_cast<double>(o));
    const int64_t scales = static_cast<int64_t>(w_scale.size());
    b.Weight("w8", HostTensor::FromInts(kInt8, {ch, ch / groups, 3, 3}, w))
        .Weight("ws",
                HostTensor::FromDoubles(
                    kFloat, scales > 1 ? std::vector<int64_t>{scales} : std::vector<int64_t>{},
                    w_scale))
        .Weight("wz", HostTensor::FromInts(
                          kInt8, scales > 1 ? std::vector<int64_t>{scales} : std::vector<int64_t>{},
                          std::vector<int64_t>(w_scale.size(), 0)))
        .RandomWeight("bias", {ch}, 4);
    b.Weight("s", HostTensor::FromDoubles(kFloat, {}, {0.0173}));
    b.Weight("z", HostTensor::FromInts(c.type, {}, {c.zero}));
    b.Node("QuantizeLinear", {"x", "s", "z"}, {"xq"});
    b.Node("DequantizeLinear", {"xq", "s", "z"}, {"xd"});
    SetInt(b.Node("DequantizeLinear", {"w8", "ws", "wz"}, {"wd"}), "axis", 0);
    auto& conv = b.Node("Conv", {"xd", "wd", "bias"}, {"c"});
    SetInts(conv, "pads", {1, 1, 1, 1});
    SetInt(conv, "group", groups);
    b.Node("Add", {"c", "r"}, {"y"});
    // x's pair writes the steps the int8 kernel reads (8 bits).
    ExpectQdqRun(b, 5, 1, 1, 1e-5);
  }
}

// Int8 weights [8, 8, 3, 3] (deterministic values in [-127, 127], one scale, zero point 0) and
// the DequantizeLinear making `name` of them: a QDQ model's convolution weights.
void AddInt8Weights(ModelBuilder& b, const std::string& name, uint64_t seed, double scale) {
  std::vector<int64_t> w(8 * 8 * 9);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<int64_t>((i * 7919 + 13 * seed) % 255) - 127;
  b.Weight(name + "8", HostTensor::FromInts(kInt8, {8, 8, 3, 3}, w))
      .Weight(name + "s", HostTensor::FromDoubles(kFloat, {}, {scale}))
      .Weight(name + "z", HostTensor::FromInts(kInt8, {}, {0}));
  b.Node("DequantizeLinear", {name + "8", name + "s", name + "z"}, {name});
}

// A uint8 QuantizeLinear / DequantizeLinear pair from `in` to `out`.
void AddQdqPair(ModelBuilder& b, const std::string& in, const std::string& out, double scale,
                int64_t zero) {
  b.Weight(out + "_s", HostTensor::FromDoubles(kFloat, {}, {scale}))
      .Weight(out + "_z", HostTensor::FromInts(kUint8, {}, {zero}));
  b.Node("QuantizeLinear", {in, out + "_s", out + "_z"}, {out + "_q"});
  b.Node("DequantizeLinear", {out + "_q", out + "_s", out + "_z"}, {out});
}

// Between two int8 kernels the 8-bit value stays 8 bits: the producer (a convolution's group or
// a pair of its own) writes the steps (round to nearest even, saturate) and the int8 convolution
// reads them as they are, where only int8 kernels read the value; one float32 reader (an Add)
// keeps it float32. The outputs are the reference's either way.
TEST(DnnlOpsTest, EightBitValuesStayEightBitBetweenInt8Kernels) {
  for (bool float_reader : {false, true}) {
    SCOPED_TRACE(float_reader ? "also read by an Add" : "read by int8 convolutions only");
    ModelBuilder b;
    b.Input("x", {1, 8, 7, 7}).Output("y", {1, 8, 7, 7});
    if (float_reader) b.Output("z", {1, 8, 7, 7});
    AddInt8Weights(b, "w1", 1, 0.004);
    AddInt8Weights(b, "w2", 2, 0.008);
    b.RandomWeight("bias", {8}, 4);
    AddQdqPair(b, "x", "xd", 0.0173, 131);
    SetInts(b.Node("Conv", {"xd", "w1", "bias"}, {"c1"}), "pads", {1, 1, 1, 1});
    b.Node("Relu", {"c1"}, {"r1"});
    AddQdqPair(b, "r1", "rd", 0.0311, 0);
    SetInts(b.Node("Conv", {"rd", "w2"}, {"y"}), "pads", {1, 1, 1, 1});
    if (float_reader) b.Node("Add", {"rd", "x"}, {"z"});
    // x's pair on its own, and the first convolution unless the Add reads its output.
    ExpectQdqRun(b, 3, 2, float_reader ? 1 : 2);
  }
}

// A QDQ residual block (ResNet's: a convolution's quantized output plus the block's input, the
// sum quantized again) keeps its values 8 bits: the convolution's group takes the pair after the
// add (Group::trailing_quantize) and writes its steps, its destination holding the residual's
// steps first (a sum post-op with the residual's scale and zero point). Where the residual
// is float32 (also a graph output) the same group adds it and applies the pair in a pass of its
// own. The outputs are the reference's either way.
TEST(DnnlOpsTest, QdqResidualBlocksStayEightBit) {
  for (bool float_residual : {false, true}) {
    SCOPED_TRACE(float_residual ? "the residual also a graph output" : "8-bit residual");
    ModelBuilder b;
    b.Input("x", {1, 8, 7, 7}).Output("y", {1, 8, 7, 7});
    if (float_residual) b.Output("r", {1, 8, 7, 7});
    AddInt8Weights(b, "w1", 1, 0.003);
    AddInt8Weights(b, "w2", 2, 0.006);
    AddInt8Weights(b, "w3", 3, 0.009);
    b.RandomWeight("b1", {8}, 4).RandomWeight("b2", {8}, 5);
    AddQdqPair(b, "x", "xd", 0.0173, 131);
    SetInts(b.Node("Conv", {"xd", "w1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
    AddQdqPair(b, "c1", "r", 0.021, 0);  // the block's input, read by conv2 and the add
    SetInts(b.Node("Conv", {"r", "w2", "b2"}, {"c2"}), "pads", {1, 1, 1, 1});
    AddQdqPair(b, "c2", "c2d", 0.019, 120);
    b.Node("Add", {"c2d", "r"}, {"a"});
    AddQdqPair(b, "a", "ad", 0.027, 0);  // the block's output: a dropped Relu's range
    SetInts(b.Node("Conv", {"ad", "w3"}, {"y"}), "pads", {1, 1, 1, 1});
    // Three int8 convolutions; 8-bit outputs: x's pair, conv1 (read by conv2 and the add),
    // conv2's group with the add and its pair; with a float32 residual x's pair only (conv2's
    // group adds it and runs the pair after).
    ExpectQdqRun(b, 6, 3, float_residual ? 1 : 3);
  }
}

// The same for a QDQ model's matmuls with constant int8 weights (a transformer's projections):
// a 3-D input times a 2-D right-hand side, one scale or one per column (axis 1), a bias add.
TEST(DnnlOpsTest, QdqMatmulsRunInInt8) {
  struct QdqCase {
    std::string name;
    int32_t type;
    int64_t zero;
    bool per_column, bias;
  };
  const std::vector<QdqCase> cases = {{"uint8 per tensor", kUint8, 0, false, true},
                                      {"uint8 zero point per column", kUint8, 131, true, true},
                                      {"int8 zero point", kInt8, -5, true, false}};
  const int64_t k = 24, cols = 16;
  for (const QdqCase& c : cases) {
    SCOPED_TRACE(c.name);
    ModelBuilder b;
    b.Input("x", {2, 5, k}).Input("r", {2, 5, cols}).Output("y", {2, 5, cols});
    std::vector<int64_t> w(k * cols);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int64_t>((i * 7919 + 13) % 255) - 127;
    std::vector<double> w_scale = {0.011};
    if (c.per_column)
      for (int64_t o = 1; o < cols; ++o) w_scale.push_back(0.004 + 0.001 * static_cast<double>(o));
    const std::vector<int64_t> sd =
        c.per_column ? std::vector<int64_t>{cols} : std::vector<int64_t>{};
    b.Weight("w8", HostTensor::FromInts(kInt8, {k, cols}, w))
        .Weight("ws", HostTensor::FromDoubles(kFloat, sd, w_scale))
        .Weight("wz", HostTensor::FromInts(kInt8, sd, std::vector<int64_t>(w_scale.size(), 0)))
        .RandomWeight("bias", {cols}, 4);
    b.Weight("s", HostTensor::FromDoubles(kFloat, {}, {0.0173}));
    b.Weight("z", HostTensor::FromInts(c.type, {}, {c.zero}));
    b.Node("QuantizeLinear", {"x", "s", "z"}, {"xq"});
    b.Node("DequantizeLinear", {"xq", "s", "z"}, {"xd"});
    SetInt(b.Node("DequantizeLinear", {"w8", "ws", "wz"}, {"wd"}), "axis", 1);
    b.Node("MatMul", {"xd", "wd"}, {c.bias ? "m" : "mb"});
    if (c.bias) b.Node("Add", {"m", "bias"}, {"mb"});
    b.Node("Add", {"mb", "r"}, {"y"});
    // x's pair writes the steps the int8 kernel reads (8 bits).
    ExpectQdqRun(b, 5, 1, 1, 1e-5);
  }
}

// A lone Erf (a GELU whose pattern a QDQ pair breaks) runs on the backend's own vectorized
// kernel, not the reference's std::erf loop: within a few float32 ulps of std::erf from -6 to 6,
// NaN kept, in place of its input where nothing else reads it.
TEST(DnnlOpsTest, ErfRunsVectorizedWithinAFewUlps) {
  const int64_t n = 4801;
  ModelBuilder b;
  b.Input("x", {n}).Output("y", {n});
  b.Weight("two", HostTensor::FromDoubles(kFloat, {}, {2.0}));
  b.Node("Mul", {"x", "two"}, {"x2"});
  b.Node("Erf", {"x2"}, {"y"});
  auto g = ImportOnnxBytes(b.Bytes(), "erf");
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::vector<double> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = -3.0 + 6.0 * static_cast<double>(i) / (n - 1);
  x[17] = std::nan("");
  auto model = MakeDnnlBackend()->Prepare(*g, {});
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ((*model)->stats().fallback_nodes, 0);
  auto got = (*model)->Run({HostTensor::FromDoubles(kFloat, {n}, x)});
  ASSERT_TRUE(got.ok()) << got.status().message();
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float in = static_cast<float>(x[i]) * 2.f;
    const double want = std::erf(static_cast<double>(in)), have = (*got)[0].DoubleAt(i);
    if (i == 17) {
      EXPECT_TRUE(std::isnan(have));
      continue;
    }
    worst = std::max(worst, std::abs(have - want));
  }
  EXPECT_LT(worst, 4e-7);  // a few ulps of 1 (1.2e-7 each)
}

// x evenly over [lo, hi] in 4001 steps, then `extra`, NaN, -inf and +inf (not a multiple of 16
// long: a scalar tail); f over it whole and over each element alone (the scalar form): the same
// float (or NaN) either way, NaN for NaN. Returns x and f(x).
std::pair<std::vector<float>, std::vector<float>> SameInVectorsAndAlone(
    void (*f)(const float*, float*, int64_t), float lo, float hi,
    std::initializer_list<float> extra) {
  std::vector<float> x;
  for (int i = 0; i <= 4000; ++i) x.push_back(lo + (hi - lo) * static_cast<float>(i) / 4000.f);
  x.insert(x.end(), extra);
  for (float v : {std::nanf(""), -INFINITY, INFINITY}) x.push_back(v);
  std::vector<float> y(x.size());
  f(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    float alone;
    f(&x[i], &alone, 1);
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i]));
    }
    if (std::isnan(y[i]))
      EXPECT_TRUE(std::isnan(alone)) << "at " << x[i];
    else
      EXPECT_EQ(y[i], alone) << "at " << x[i];
  }
  return {x, y};
}

// SiLU (x * sigmoid(x)) by the backend's vector pass: within a few float32 ulps of the exact
// value relative to it, over the whole range and around the cut below which it is 0; NaN kept;
// the same float for an element whether it falls in a vector or in the scalar tail.
TEST(DnnlOpsTest, SiluPassIsWithinAFewUlpsEverywhere) {
  const auto [x, y] = SameInVectorsAndAlone(dnnl_backend::SiluOf, -20.f, 20.f,
                                            {-1e30f, -200.f, -88.5f, -87.9f, -87.f, -30.f, -1e-30f,
                                             0.f, 1e-30f, 60.f, 88.f, 100.f, 3e38f});
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) continue;
    const double v = x[i];
    const double want = v < -88.0 ? 0.0 : std::isinf(v) ? v : v / (1.0 + std::exp(-v));
    if (v < -88.0) {
      EXPECT_EQ(y[i], 0.f) << "at " << v;
      continue;
    }
    if (std::isinf(v)) {
      EXPECT_EQ(y[i], v);
      continue;
    }
    if (want == 0.0) {
      EXPECT_EQ(y[i], 0.f);
      continue;
    }
    worst = std::max(worst, std::abs(y[i] - want) / std::abs(want));
  }
  EXPECT_LT(worst, 3e-7);  // a few ulps (6e-8 each, relative)
}

// A convolution whose group ends in SiLU computes the convolution (with its batch normalization)
// on oneDNN without the activation, then SiLU in the backend's pass over its output in place; a
// SiLU of its own (after a pooling) runs that pass too. The reference's values, as with
// VERISUB_SILU=fused, which keeps oneDNN's swish post-op; in blocked and plain layouts.
TEST(DnnlOpsTest, SiluRunsAsAPassAfterTheConvolution) {
  ModelBuilder b;
  b.Input("x", {1, 12, 9, 9}).Output("y", {1, 20, 4, 4});
  b.RandomWeight("w", {20, 12, 1, 1}, 1).RandomWeight("bias", {20}, 2);
  b.RandomWeight("g", {20}, 3).RandomWeight("beta", {20}, 4).RandomWeight("mean", {20}, 5);
  b.Weight("var", HostTensor::FromDoubles(kFloat, {20}, std::vector<double>(20, 0.7)));
  b.Node("Conv", {"x", "w", "bias"}, {"c"});
  b.Node("BatchNormalization", {"c", "g", "beta", "mean", "var"}, {"n"});
  b.Node("Sigmoid", {"n"}, {"s"});
  b.Node("Mul", {"n", "s"}, {"a"});
  auto& pool = b.Node("MaxPool", {"a"}, {"p"});
  SetInts(pool, "kernel_shape", {2, 2});
  SetInts(pool, "strides", {2, 2});
  b.Node("Sigmoid", {"p"}, {"q"});
  b.Node("Mul", {"q", "p"}, {"y"});
  auto g = ImportOnnxBytes(b.Bytes(), "silu");
  ASSERT_TRUE(g.ok()) << g.status().message();
  const auto inputs = testing::RandomInputs(*g, 11);
  auto ref = MakeReferenceBackend()->Prepare(*g, {});
  ASSERT_TRUE(ref.ok());
  auto expected = (*ref)->Run(inputs);
  ASSERT_TRUE(expected.ok());
  ScopedEnv silu("VERISUB_SILU");
  for (specs::Layout layout : {specs::Layout::kNCHW16c, specs::Layout::kPlain})
    for (const char* mode : {"pass", "fused"}) {
      const std::string what = std::string(mode) + " " + std::string(specs::LayoutName(layout));
      silu.Set(mode);
      PrepareOptions opts;
      opts.layouts.assign(g->num_values(), layout);
      const PrepareStats stats = ExpectSameOutputs(*g, opts, inputs, *expected, what);
      EXPECT_EQ(stats.fallback_nodes, 0) << what;
      const auto it = stats.kernel_variants.find("silu after the primitive");
      EXPECT_EQ(it == stats.kernel_variants.end() ? 0 : it->second,
                std::string(mode) == "pass" ? 1 : 0)
          << what;
    }
}

// For each import of `b` (mapped to spec operators, then ONNX's operators as they are), each
// value `mode` of environment variable `var` and each of `layouts` given to the 4-D activations
// `pick` selects (every other value plain; no layouts at all where `layouts` is empty): the dnnl
// backend's outputs equal the reference's on the same inputs, no node falls back, and
// `check(what, mode, stats)` holds.
void ExpectEveryModeComputesTheReference(
    ModelBuilder& b, const std::string& name, const char* var,
    std::initializer_list<const char*> modes, std::initializer_list<specs::Layout> layouts,
    const std::function<bool(const Value&)>& pick,
    const std::function<void(const std::string&, const std::string&, const PrepareStats&)>& check) {
  ScopedEnv env(var);
  for (bool map : {true, false})
    for (const char* mode : modes) {
      const std::string what = std::string(mode) + (map ? " mapped" : " onnx");
      env.Set(mode);
      ImportOptions options;
      options.map_to_spec_ops = map;
      auto g = ImportOnnxBytes(b.Bytes(), name, options);
      ASSERT_TRUE(g.ok()) << g.status().message();
      const auto inputs = testing::RandomInputs(*g, 5);
      auto ref = MakeReferenceBackend()->Prepare(*g, {});
      ASSERT_TRUE(ref.ok());
      auto expected = (*ref)->Run(inputs);
      ASSERT_TRUE(expected.ok());
      std::vector<std::optional<specs::Layout>> each(layouts.begin(), layouts.end());
      if (each.empty()) each.push_back(std::nullopt);
      for (const std::optional<specs::Layout>& layout : each) {
        PrepareOptions opts;
        std::string at = what;
        if (layout) {
          opts.layouts.assign(g->num_values(), specs::Layout::kPlain);
          for (int v = 0; v < g->num_values(); ++v)
            if (!g->value(v).constant && g->value(v).dims.size() == 4 && pick(g->value(v)))
              opts.layouts[v] = *layout;
          at += " " + std::string(specs::LayoutName(*layout));
        }
        const PrepareStats stats = ExpectSameOutputs(*g, opts, inputs, *expected, at);
        EXPECT_EQ(stats.fallback_nodes, 0) << at;
        check(at, mode, stats);
      }
    }
}

// How many kernels of `variant` a prepare counted.
int VariantCount(const PrepareStats& stats, const std::string& variant) {
  const auto it = stats.kernel_variants.find(variant);
  return it == stats.kernel_variants.end() ? 0 : it->second;
}

// GELU (x/2 (1 + erf(x / sqrt 2))) by the backend's vector pass: within 1e-6 of the exact value
// relative to max(|x|, 1) over the whole range, exactly 0 far below 0, +inf kept, NaN kept and
// NaN for -inf (x/2 times 1 + erf(x / sqrt 2) = 0, as the erf decomposition computes it);
// the same float for an element whether it falls in a vector or in the scalar tail.
TEST(DnnlOpsTest, GeluPassIsWithinAMillionthEverywhere) {
  const auto [x, y] = SameInVectorsAndAlone(
      dnnl_backend::GeluOf, -12.f, 12.f,
      {-1e30f, -200.f, -6.f, -5.6f, -1e-30f, 0.f, 1e-30f, 1e-3f, 60.f, 3e38f});
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) continue;
    const double v = x[i];
    if (v == -INFINITY) {  // -inf * (1 + erf(-inf)) = -inf * 0, as the graph's decomposition says
      EXPECT_TRUE(std::isnan(y[i]));
      continue;
    }
    if (std::isinf(v)) {
      EXPECT_EQ(y[i], v);
      continue;
    }
    if (v < -6.0) {  // erf(x / sqrt 2) rounds to -1: GELU is below 6e-9 * |x| there
      EXPECT_EQ(y[i], 0.f) << "at " << v;
      continue;
    }
    const double want = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    worst = std::max(worst, std::abs(y[i] - want) / std::max(std::abs(v), 1.0));
  }
  EXPECT_LT(worst, 1e-6);
}

// GELU on its own runs the backend's pass, whether the import made it a gelu node (after a matmul
// with its bias, over a 4-D value stored in channel blocks with padding) or kept PyTorch's erf
// decomposition as ONNX nodes (the matched pattern); the reference's values, as with
// VERISUB_GELU=onednn, which keeps oneDNN's gelu_erf.
TEST(DnnlOpsTest, GeluRunsInTheBackendsPass) {
  ModelBuilder b;
  b.Input("a", {2, 5, 8}).Input("x", {1, 20, 5, 5});
  b.Output("y", {2, 5, 12}).Output("z", {1, 20, 5, 5});
  b.RandomWeight("w", {8, 12}, 1).RandomWeight("bias", {12}, 2);
  b.Node("MatMul", {"a", "w"}, {"m"});
  b.Node("Add", {"m", "bias"}, {"h"});
  AddGelu(b, "h", "y");
  b.Node("Relu", {"x"}, {"r"});            // a kernel before: the GELU's input is no model input
  b.Node("Div", {"r", "sqrt2"}, {"r_d"});  // AddGelu's nodes over AddGelu's constants
  b.Node("Erf", {"r_d"}, {"r_e"});
  b.Node("Add", {"r_e", "one"}, {"r_a"});
  b.Node("Mul", {"r", "r_a"}, {"r_m"});
  b.Node("Mul", {"r_m", "half"}, {"z"});
  ExpectEveryModeComputesTheReference(
      b, "gelu_pass", "VERISUB_GELU", {"pass", "onednn"},
      {specs::Layout::kNCHW16c, specs::Layout::kPlain}, [](const Value&) { return true; },
      [](const std::string& at, const std::string& mode, const PrepareStats& stats) {
        EXPECT_EQ(VariantCount(stats, "gelu in the backend's pass"), mode == "pass" ? 2 : 0) << at;
      });
}

// Softmax along rows by the backend's pass: within 1e-6 relative of the exact value on rows of
// every length from 1 to 70 (whole vectors, masked tails) and of 128, 197 and 1000, values
// spread over +-8 and over +-1e4 (most exps underflow: 0 where the exact value is below 1e-36);
// each row sums to 1; the same floats in place as into another array. Masked (-inf) entries
// give 0; a row of -inf only, or holding NaN or +inf, comes out NaN, as exp(x - max) / sum does.
TEST(DnnlOpsTest, SoftmaxPassIsWithinAMillionthEverywhere) {
  std::vector<int64_t> lengths = {128, 197, 1000};
  for (int64_t c = 1; c <= 70; ++c) lengths.push_back(c);
  for (double spread : {8.0, 1e4})
    for (int64_t cols : lengths) {
      const int64_t rows = 3;
      std::vector<float> x(rows * cols);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>(spread * std::sin(0.37 * static_cast<double>(i) + cols));
      std::vector<float> y(x.size()), z = x;
      dnnl_backend::SoftmaxRowsOf(x.data(), y.data(), rows, cols);
      dnnl_backend::SoftmaxRowsOf(z.data(), z.data(), rows, cols);
      EXPECT_EQ(y, z) << cols;
      double worst = 0;
      for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x.data() + r * cols;
        double max = -INFINITY, sum = 0, got = 0;
        for (int64_t i = 0; i < cols; ++i) max = std::max(max, static_cast<double>(xr[i]));
        for (int64_t i = 0; i < cols; ++i) sum += std::exp(xr[i] - max);
        for (int64_t i = 0; i < cols; ++i) {
          const double want = std::exp(xr[i] - max) / sum, have = y[r * cols + i];
          got += have;
          if (want < 1e-36)
            EXPECT_LE(have, 1e-36) << cols;
          else
            worst = std::max(worst, std::abs(have - want) / want);
        }
        EXPECT_NEAR(got, 1.0, 1e-6) << cols;
      }
      EXPECT_LT(worst, 1e-6) << cols << " " << spread;
    }
  const float inf = INFINITY, nan = std::nanf("");
  const std::vector<std::vector<float>> special = {
      {1.f, -inf, 2.f, -inf, 3.f, 0.5f, -inf, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f, -inf},
      std::vector<float>(17, -inf),
      {1.f, 2.f, nan, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f},
      {1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, inf}};
  for (size_t k = 0; k < special.size(); ++k) {
    std::vector<float> y(special[k].size());
    dnnl_backend::SoftmaxRowsOf(special[k].data(), y.data(), 1, 17);
    for (size_t i = 0; i < y.size(); ++i) {
      if (k > 0)
        EXPECT_TRUE(std::isnan(y[i])) << k << " " << i;
      else if (std::isinf(special[k][i]))
        EXPECT_EQ(y[i], 0.f) << i;
      else
        EXPECT_GT(y[i], 0.f) << i;
    }
  }
}

// Softmax along the last axis runs the backend's pass: after a kernel (over its input's buffer),
// over a 4-D value stored in channel blocks with padding (converted to row-major first), as a
// mapped softmax node and as ONNX's; along another axis oneDNN's. The reference's values, as with
// VERISUB_SOFTMAX=onednn, which keeps oneDNN's everywhere.
TEST(DnnlOpsTest, SoftmaxRunsInTheBackendsPass) {
  ModelBuilder b;
  b.Input("a", {2, 3, 7, 49}).Input("x", {1, 20, 5, 5});
  b.Output("y", {2, 3, 7, 49}).Output("z", {1, 20, 5, 5}).Output("w", {1, 20, 5, 5});
  b.Node("Relu", {"a"}, {"r"});
  SetInt(b.Node("Softmax", {"r"}, {"y"}), "axis", -1);
  b.Node("Neg", {"x"}, {"n"});
  SetInt(b.Node("Softmax", {"n"}, {"z"}), "axis", 3);
  SetInt(b.Node("Softmax", {"n"}, {"w"}), "axis", 1);
  ExpectEveryModeComputesTheReference(
      b, "softmax_pass", "VERISUB_SOFTMAX", {"pass", "onednn"},
      {specs::Layout::kNCHW16c, specs::Layout::kPlain},
      [](const Value& v) { return v.dims[1] == 20; },
      [](const std::string& at, const std::string& mode, const PrepareStats& stats) {
        EXPECT_EQ(VariantCount(stats, "softmax in the backend's pass"), mode == "pass" ? 2 : 0)
            << at;
      });
}

// A transpose of the last two axes that only matrix products read is a strided view of its
// input, which the products read in place: attention's k^T as the right operand, a transposed
// left operand (two steps fewer: no copy, and no conversion before the products); one also read
// by another kernel stays a copy, as do other permutations (heads moved out of the middle). The
// reference's values, as with VERISUB_TRANSPOSE=copy, which keeps every copy.
TEST(DnnlOpsTest, TransposesReadOnlyByMatmulsAreReadInPlace) {
  ModelBuilder b;
  b.Input("q", {2, 3, 5, 8}).Input("k", {2, 3, 5, 8});
  b.Output("s", {2, 3, 5, 5}).Output("u", {2, 3, 8, 5}).Output("r", {2, 3, 8, 5});
  b.Node("Relu", {"k"}, {"kr"});
  SetInts(b.Node("Transpose", {"kr"}, {"kt"}), "perm", {0, 1, 3, 2});
  b.Node("MatMul", {"q", "kt"}, {"s"});
  SetInts(b.Node("Transpose", {"q"}, {"qt"}), "perm", {0, 1, 3, 2});
  b.Node("MatMul", {"qt", "s"}, {"u"});
  SetInts(b.Node("Transpose", {"kr"}, {"kt2"}), "perm", {0, 1, 3, 2});
  b.Node("MatMul", {"kt2", "s"}, {"m"});
  b.Node("Add", {"m", "kt2"}, {"r"});  // kt2 read by an add too: copied
  // Heads moved out of the middle (matrices interleaved in the input): copied.
  b.Output("h", {2, 5, 3, 3});
  SetInts(b.Node("Transpose", {"q"}, {"qh"}), "perm", {0, 2, 1, 3});
  SetInts(b.Node("Transpose", {"kr"}, {"kh"}), "perm", {0, 2, 3, 1});
  b.Node("MatMul", {"qh", "kh"}, {"h"});
  std::map<std::string, int> steps;  // per import, in place
  ExpectEveryModeComputesTheReference(
      b, "transpose_in_place", "VERISUB_TRANSPOSE", {"inplace", "copy"}, {}, {},
      [&](const std::string& at, const std::string& mode, const PrepareStats& stats) {
        EXPECT_EQ(VariantCount(stats, "transpose read in place by its matmuls"),
                  mode == "inplace" ? 2 : 0)
            << at;
        const std::string form = at.substr(at.find(' '));
        if (mode == "inplace")
          steps[form] = stats.steps;
        else
          EXPECT_EQ(stats.steps, steps[form] + 2) << at;
      });
}

// ONNX Runtime's transformer optimizer's EmbedLayerNormalization and Attention (a BERT layer as
// its saved model has it) import as standard operators that compute what the operators'
// documented formulas give, written here as loops: embeddings gathered by word, position and
// segment, layer-normalized; mask_index the count of mask ones; the packed QKV projection,
// per-head softmax(Q K^T / sqrt(d) + mask) V with the keys at or past each end position
// masked by -10000. (Checked against ONNX Runtime itself when written: within 7e-7.)
TEST(DnnlOpsTest, OrtAttentionAndEmbeddingsImportAsTheirFormulas) {
  const int64_t batch = 2, seq = 5, hidden = 8, heads = 2, head = 4, vocab = 7;
  ModelBuilder b;
  b.Input("ids", {batch, seq}, kInt32).Input("seg", {batch, seq}, kInt32);
  b.Input("mask", {batch, seq}, kInt32).Output("y", {batch, seq, hidden});
  std::map<std::string, std::vector<double>> weights;
  auto weight = [&](const std::string& name, std::vector<int64_t> dims, uint64_t seed) {
    const HostTensor t = testing::RandomTensor(std::move(dims), seed);
    b.Weight(name, t);
    weights[name] = t.ToDoubles();
  };
  weight("we", {vocab, hidden}, 1);
  weight("pe", {seq, hidden}, 2);
  weight("se", {2, hidden}, 3);
  weight("ga", {hidden}, 4);
  weight("be", {hidden}, 5);
  weight("w", {hidden, 3 * hidden}, 6);
  weight("bias", {3 * hidden}, 7);
  auto& e = b.Node("EmbedLayerNormalization", {"ids", "seg", "we", "pe", "se", "ga", "be", "mask"},
                   {"e", "mi"});
  e.set_domain("com.microsoft");
  SetFloat(e, "epsilon", 1e-5f);
  auto& a = b.Node("Attention", {"e", "w", "bias", "mi"}, {"y"});
  a.set_domain("com.microsoft");
  SetInt(a, "num_heads", heads);
  auto* ms = b.model().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  auto g = ImportOnnxBytes(b.Bytes(), "bert layer");
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (int i = 0; i < g->num_nodes(); ++i)
    EXPECT_NE(g->node(i).domain, "com.microsoft") << g->node(i).op_type;
  const std::vector<int64_t> ids = {1, 4, 2, 0, 0, 3, 3, 6, 5, 1},
                             seg = {0, 0, 1, 1, 1, 0, 1, 1, 1, 1},
                             mask = {1, 1, 1, 0, 0, 1, 1, 1, 1, 1};
  const std::vector<HostTensor> inputs = {HostTensor::FromInts(kInt32, {batch, seq}, ids),
                                          HostTensor::FromInts(kInt32, {batch, seq}, seg),
                                          HostTensor::FromInts(kInt32, {batch, seq}, mask)};
  const std::vector<double>&we = weights["we"], &pe = weights["pe"], &se = weights["se"],
        &ga = weights["ga"], &be = weights["be"], &w = weights["w"], &bias = weights["bias"];
  std::vector<double> emb(batch * seq * hidden), want(batch * seq * hidden);
  for (int64_t t = 0; t < batch * seq; ++t) {
    double* x = &emb[t * hidden];
    double mean = 0, var = 0;
    for (int64_t h = 0; h < hidden; ++h) {
      x[h] = we[ids[t] * hidden + h] + pe[(t % seq) * hidden + h] + se[seg[t] * hidden + h];
      mean += x[h] / hidden;
    }
    for (int64_t h = 0; h < hidden; ++h) var += (x[h] - mean) * (x[h] - mean) / hidden;
    for (int64_t h = 0; h < hidden; ++h)
      x[h] = (x[h] - mean) / std::sqrt(var + 1e-5) * ga[h] + be[h];
  }
  for (int64_t bi = 0; bi < batch; ++bi) {
    int64_t end = 0;
    for (int64_t j = 0; j < seq; ++j) end += mask[bi * seq + j] == 1;
    std::vector<double> qkv(seq * 3 * hidden);
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t c = 0; c < 3 * hidden; ++c) {
        double acc = bias[c];
        for (int64_t h = 0; h < hidden; ++h)
          acc += emb[(bi * seq + s) * hidden + h] * w[h * 3 * hidden + c];
        qkv[s * 3 * hidden + c] = acc;
      }
    for (int64_t n = 0; n < heads; ++n)
      for (int64_t i = 0; i < seq; ++i) {
        std::vector<double> p(seq);
        double top = -1e300, total = 0;
        for (int64_t j = 0; j < seq; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < head; ++d)
            dot += qkv[i * 3 * hidden + n * head + d] * qkv[j * 3 * hidden + hidden + n * head + d];
          p[j] = dot / std::sqrt(static_cast<double>(head)) + (j < end ? 0.0 : -10000.0);
          top = std::max(top, p[j]);
        }
        for (double& v : p) total += (v = std::exp(v - top));
        for (int64_t d = 0; d < head; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < seq; ++j)
            acc += p[j] / total * qkv[j * 3 * hidden + 2 * hidden + n * head + d];
          want[(bi * seq + i) * hidden + n * head + d] = acc;
        }
      }
  }
  for (bool fast : {false, true}) {
    SCOPED_TRACE(fast ? "oneDNN" : "reference");
    auto m = (fast ? MakeDnnlBackend() : MakeReferenceBackend())->Prepare(*g, {});
    ASSERT_TRUE(m.ok()) << m.status().message();
    auto got = (*m)->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status().message();
    double worst = 0, top = 0;
    for (size_t k = 0; k < want.size(); ++k) {
      worst = std::max(worst, std::abs((*got)[0].DoubleAt(static_cast<int64_t>(k)) - want[k]));
      top = std::max(top, std::abs(want[k]));
    }
    EXPECT_GT(top, 0.3);
    EXPECT_LT(worst, 1e-5 * top);
  }
}

// ONNX Runtime's contrib operators that its graph optimizations save into a model (FusedConv,
// FusedMatMul with transposes of the matrix and batch axes, Gelu, BiasGelu, FastGelu,
// QuickGelu, SkipLayerNormalization with its sum as an output), and ONNX's experimental operators
// of opsets before 10 (ImageScaler, ScaledTanh, ParametricSoftplus, Affine, Scale) import as
// standard operators:
// none is left, each computes what the same formula written by hand in standard operators
// computes, and the oneDNN backend runs every node.
TEST(DnnlOpsTest, OrtContribOperatorsImportAsStandardOperators) {
  auto floats = [](onnx::NodeProto& n, const std::string& name, std::vector<float> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float f : v) a->add_floats(f);
  };
  auto scalar = [](ModelBuilder& b, const std::string& name, double v) {
    b.Weight(name, HostTensor::FromDoubles(kFloat, {}, {v}));
  };
  struct ContribCase {
    std::string name;
    std::function<void(ModelBuilder&)> contrib, standard;
    int64_t opset = 13;
  };
  auto skip_layer_norm = [](ModelBuilder& b) {
    b.Input("x", {2, 5, 16}).Input("skip", {2, 5, 16});
    b.Output("y", {2, 5, 16}).Output("sum", {2, 5, 16});
    b.RandomWeight("gamma", {16}, 5).RandomWeight("beta", {16}, 6).RandomWeight("bias", {16}, 7);
    auto& n = b.Node("SkipLayerNormalization", {"x", "skip", "gamma", "beta", "bias"},
                     {"y", "", "", "sum"});
    n.set_domain("com.microsoft");
    SetFloat(n, "epsilon", 1e-5f);
  };
  auto sum_of = [](ModelBuilder& b) {
    b.Input("x", {2, 5, 16}).Input("skip", {2, 5, 16});
    b.Output("y", {2, 5, 16}).Output("sum", {2, 5, 16});
    b.RandomWeight("gamma", {16}, 5).RandomWeight("beta", {16}, 6).RandomWeight("bias", {16}, 7);
    b.Node("Add", {"x", "skip"}, {"s0"});
    b.Node("Add", {"s0", "bias"}, {"sum"});
  };
  const std::vector<ContribCase> cases = {
      {"FusedConv with a sum and LeakyRelu",
       [&](ModelBuilder& b) {
         b.Input("x", {1, 4, 6, 6}).Input("z", {1, 8, 6, 6}).Output("y", {1, 8, 6, 6});
         b.RandomWeight("w", {8, 4, 3, 3}, 1).RandomWeight("bias", {8}, 2);
         auto& c = b.Node("FusedConv", {"x", "w", "bias", "z"}, {"y"});
         c.set_domain("com.microsoft");
         SetInts(c, "pads", {1, 1, 1, 1});
         SetString(c, "activation", "LeakyRelu");
         floats(c, "activation_params", {0.1f});
       },
       [&](ModelBuilder& b) {
         b.Input("x", {1, 4, 6, 6}).Input("z", {1, 8, 6, 6}).Output("y", {1, 8, 6, 6});
         b.RandomWeight("w", {8, 4, 3, 3}, 1).RandomWeight("bias", {8}, 2);
         SetInts(b.Node("Conv", {"x", "w", "bias"}, {"c"}), "pads", {1, 1, 1, 1});
         b.Node("Add", {"c", "z"}, {"s"});
         SetFloat(b.Node("LeakyRelu", {"s"}, {"y"}), "alpha", 0.1f);
       }},
      {"FusedConv with Clip",
       [&](ModelBuilder& b) {
         b.Input("x", {1, 4, 6, 6}).Output("y", {1, 8, 6, 6}).RandomWeight("w", {8, 4, 1, 1}, 3);
         auto& c = b.Node("FusedConv", {"x", "w"}, {"y"});
         c.set_domain("com.microsoft");
         SetString(c, "activation", "Clip");
         floats(c, "activation_params", {-0.2f, 0.3f});
       },
       [&](ModelBuilder& b) {
         b.Input("x", {1, 4, 6, 6}).Output("y", {1, 8, 6, 6}).RandomWeight("w", {8, 4, 1, 1}, 3);
         scalar(b, "lo", -0.2);
         scalar(b, "hi", 0.3);
         b.Node("Conv", {"x", "w"}, {"c"});
         b.Node("Clip", {"c", "lo", "hi"}, {"y"});
       }},
      {"FusedMatMul transA, transBatchB, alpha",
       [&](ModelBuilder& b) {
         b.Input("a", {2, 5, 3}).Input("b", {5, 2, 4}).Output("y", {2, 3, 4});
         auto& m = b.Node("FusedMatMul", {"a", "b"}, {"y"});
         m.set_domain("com.microsoft");
         SetInt(m, "transA", 1);
         SetInt(m, "transBatchB", 1);
         SetFloat(m, "alpha", 0.5f);
       },
       [&](ModelBuilder& b) {
         b.Input("a", {2, 5, 3}).Input("b", {5, 2, 4}).Output("y", {2, 3, 4});
         scalar(b, "half", 0.5);
         SetInts(b.Node("Transpose", {"a"}, {"at"}), "perm", {0, 2, 1});
         SetInts(b.Node("Transpose", {"b"}, {"bt"}), "perm", {1, 0, 2});
         b.Node("MatMul", {"at", "bt"}, {"p"});
         b.Node("Mul", {"p", "half"}, {"y"});
       }},
      {"FusedMatMul transBatchA and transA, transB",
       [&](ModelBuilder& b) {
         b.Input("a", {5, 2, 3}).Input("b", {2, 4, 5}).Output("y", {2, 3, 4});
         auto& m = b.Node("FusedMatMul", {"a", "b"}, {"y"});
         m.set_domain("com.microsoft");
         SetInt(m, "transA", 1);
         SetInt(m, "transBatchA", 1);
         SetInt(m, "transB", 1);
       },
       [&](ModelBuilder& b) {
         b.Input("a", {5, 2, 3}).Input("b", {2, 4, 5}).Output("y", {2, 3, 4});
         SetInts(b.Node("Transpose", {"a"}, {"at"}), "perm", {1, 2, 0});
         SetInts(b.Node("Transpose", {"b"}, {"bt"}), "perm", {0, 2, 1});
         b.Node("MatMul", {"at", "bt"}, {"y"});
       }},
      {"BiasGelu, FastGelu, QuickGelu",
       [&](ModelBuilder& b) {
         b.Input("x", {3, 16}).Output("y", {3, 16}).RandomWeight("bias", {16}, 4);
         b.Node("BiasGelu", {"x", "bias"}, {"g"}).set_domain("com.microsoft");
         b.Node("FastGelu", {"g", "bias"}, {"f"}).set_domain("com.microsoft");
         auto& q = b.Node("QuickGelu", {"f"}, {"q"});
         q.set_domain("com.microsoft");
         SetFloat(q, "alpha", 1.5f);
         b.Node("Gelu", {"q"}, {"y"}).set_domain("com.microsoft");
       },
       [&](ModelBuilder& b) {
         b.Input("x", {3, 16}).Output("y", {3, 16}).RandomWeight("bias", {16}, 4);
         scalar(b, "half", 0.5);
         scalar(b, "one", 1.0);
         scalar(b, "sqrt2", std::sqrt(2.0));
         scalar(b, "k", std::sqrt(2.0 / M_PI));
         scalar(b, "c", 0.044715);
         scalar(b, "a", 1.5);
         auto erf_gelu = [&](const std::string& x, const std::string& y) {
           b.Node("Div", {x, "sqrt2"}, {y + "_d"});
           b.Node("Erf", {y + "_d"}, {y + "_e"});
           b.Node("Add", {y + "_e", "one"}, {y + "_p"});
           b.Node("Mul", {x, "half"}, {y + "_h"});
           b.Node("Mul", {y + "_h", y + "_p"}, {y});
         };
         b.Node("Add", {"x", "bias"}, {"s"});
         erf_gelu("s", "g");
         b.Node("Add", {"g", "bias"}, {"t"});
         b.Node("Pow", {"t", "three"}, {"t3"});
         b.Weight("three", HostTensor::FromDoubles(kFloat, {}, {3.0}));
         b.Node("Mul", {"t3", "c"}, {"t3c"});
         b.Node("Add", {"t", "t3c"}, {"in"});
         b.Node("Mul", {"in", "k"}, {"ink"});
         b.Node("Tanh", {"ink"}, {"th"});
         b.Node("Add", {"th", "one"}, {"thp"});
         b.Node("Mul", {"t", "thp"}, {"tp"});
         b.Node("Mul", {"tp", "half"}, {"f"});
         b.Node("Mul", {"f", "a"}, {"fa"});
         b.Node("Sigmoid", {"fa"}, {"fs"});
         b.Node("Mul", {"f", "fs"}, {"q"});
         erf_gelu("q", "y");
       }},
      {"SkipLayerNormalization with bias and its sum", skip_layer_norm,
       [&](ModelBuilder& b) {
         sum_of(b);
         auto& ln = b.Node("LayerNormalization", {"sum", "gamma", "beta"}, {"y"});
         SetInt(ln, "axis", -1);
         SetFloat(ln, "epsilon", 1e-5f);
       },
       17},
      {"ONNX's experimental operators of opset 8",
       [&](ModelBuilder& b) {
         b.Input("x", {1, 3, 4, 4}).Output("y", {1, 3, 4, 4});
         auto& is = b.Node("ImageScaler", {"x"}, {"a"});
         SetFloat(is, "scale", 2.f);
         floats(is, "bias", {1.f, 2.f, 3.f});
         auto& st = b.Node("ScaledTanh", {"a"}, {"t"});
         SetFloat(st, "alpha", 1.5f);
         SetFloat(st, "beta", 0.3f);
         auto& sp = b.Node("ParametricSoftplus", {"t"}, {"p"});
         SetFloat(sp, "alpha", 0.7f);
         SetFloat(sp, "beta", 2.f);
         auto& af = b.Node("Affine", {"p"}, {"f"});
         SetFloat(af, "alpha", 3.f);
         SetFloat(af, "beta", -1.f);
         SetFloat(b.Node("Scale", {"f"}, {"y"}), "scale", 0.5f);
       },
       [&](ModelBuilder& b) {
         b.Input("x", {1, 3, 4, 4}).Output("y", {1, 3, 4, 4});
         b.Weight("bias", HostTensor::FromDoubles(kFloat, {1, 3, 1, 1}, {1, 2, 3}));
         for (auto [name, v] : std::vector<std::pair<std::string, double>>{{"two", 2},
                                                                           {"a1", 1.5},
                                                                           {"b1", 0.3},
                                                                           {"a2", 0.7},
                                                                           {"a3", 3},
                                                                           {"m1", -1},
                                                                           {"half", 0.5}})
           scalar(b, name, v);
         b.Node("Mul", {"x", "two"}, {"x2"});
         b.Node("Add", {"x2", "bias"}, {"a"});
         b.Node("Mul", {"a", "b1"}, {"ab"});
         b.Node("Tanh", {"ab"}, {"th"});
         b.Node("Mul", {"th", "a1"}, {"t"});
         b.Node("Mul", {"t", "two"}, {"t2"});
         b.Node("Softplus", {"t2"}, {"sp"});
         b.Node("Mul", {"sp", "a2"}, {"p"});
         b.Node("Mul", {"p", "a3"}, {"p3"});
         b.Node("Add", {"p3", "m1"}, {"f"});
         b.Node("Mul", {"f", "half"}, {"y"});
       },
       8},
      {"FusedGemm with transB, alpha and LeakyRelu",
       [&](ModelBuilder& b) {
         b.Input("x", {3, 12}).Output("y", {3, 8});
         b.RandomWeight("w", {8, 12}, 1).RandomWeight("bias", {8}, 2);
         auto& g = b.Node("FusedGemm", {"x", "w", "bias"}, {"y"});
         g.set_domain("com.microsoft");
         SetInt(g, "transB", 1);
         SetFloat(g, "alpha", 0.5f);
         SetString(g, "activation", "LeakyRelu");
         SetFloat(g, "activation_alpha", 0.2f);
       },
       [&](ModelBuilder& b) {
         b.Input("x", {3, 12}).Output("y", {3, 8});
         b.RandomWeight("w", {8, 12}, 1).RandomWeight("bias", {8}, 2);
         auto& g = b.Node("Gemm", {"x", "w", "bias"}, {"g"});
         SetInt(g, "transB", 1);
         SetFloat(g, "alpha", 0.5f);
         SetFloat(b.Node("LeakyRelu", {"g"}, {"y"}), "alpha", 0.2f);
       }},
      {"SimplifiedLayerNormalization (ONNX Runtime's RMS norm, default domain) and "
       "SkipSimplifiedLayerNormalization with a bias and its sum",
       [&](ModelBuilder& b) {
         b.Input("x", {2, 5, 16}).Input("skip", {2, 5, 16});
         b.Output("y", {2, 5, 16}).Output("sum", {2, 5, 16}).Output("r", {2, 5, 16});
         b.RandomWeight("gamma", {16}, 5).RandomWeight("bias", {16}, 7);
         auto& n = b.Node("SkipSimplifiedLayerNormalization", {"x", "skip", "gamma", "bias"},
                          {"y", "", "", "sum"});
         n.set_domain("com.microsoft");
         SetFloat(n, "epsilon", 1e-5f);
         SetFloat(b.Node("SimplifiedLayerNormalization", {"x", "gamma"}, {"r"}), "epsilon", 1e-4f);
       },
       [&](ModelBuilder& b) {
         sum_of(b);
         b.Output("r", {2, 5, 16});
         auto rms = [&](const std::string& v, const std::string& out, double eps) {
           scalar(b, out + "_eps", eps);
           b.Node("Mul", {v, v}, {out + "_sq"});
           SetInts(b.Node("ReduceMean", {out + "_sq"}, {out + "_ms"}), "axes", {-1});
           b.Node("Add", {out + "_ms", out + "_eps"}, {out + "_mse"});
           b.Node("Sqrt", {out + "_mse"}, {out + "_rms"});
           b.Node("Div", {v, out + "_rms"}, {out + "_n"});
           b.Node("Mul", {out + "_n", "gamma"}, {out});
         };
         rms("sum", "y", 1e-5);
         rms("x", "r", 1e-4);
       },
       17},
      {"SkipLayerNormalization before opset 17", skip_layer_norm,
       [&](ModelBuilder& b) {
         sum_of(b);
         scalar(b, "eps", 1e-5);
         SetInts(b.Node("ReduceMean", {"sum"}, {"mean"}), "axes", {2});
         b.Node("Sub", {"sum", "mean"}, {"d"});
         b.Node("Mul", {"d", "d"}, {"d2"});
         SetInts(b.Node("ReduceMean", {"d2"}, {"var"}), "axes", {2});
         b.Node("Add", {"var", "eps"}, {"ve"});
         b.Node("Sqrt", {"ve"}, {"sd"});
         b.Node("Div", {"d", "sd"}, {"n"});
         b.Node("Mul", {"n", "gamma"}, {"ng"});
         b.Node("Add", {"ng", "beta"}, {"y"});
       }},
  };
  for (const ContribCase& c : cases) {
    SCOPED_TRACE(c.name);
    ModelBuilder cb(c.opset), sb(c.opset);
    c.contrib(cb);
    c.standard(sb);
    auto g = ImportOnnxBytes(cb.Bytes(), "contrib");
    auto want_g = ImportOnnxBytes(sb.Bytes(), "standard");
    ASSERT_TRUE(g.ok()) << g.status().message();
    ASSERT_TRUE(want_g.ok()) << want_g.status().message();
    for (int i = 0; i < g->num_nodes(); ++i)
      EXPECT_NE(g->node(i).domain, "com.microsoft") << g->node(i).op_type;
    const std::vector<HostTensor> inputs = testing::RandomInputs(*g, 8);
    auto ref = MakeReferenceBackend()->Prepare(*g, {});
    auto want_ref = MakeReferenceBackend()->Prepare(*want_g, {});
    ASSERT_TRUE(ref.ok() && want_ref.ok());
    auto got = (*ref)->Run(inputs);
    auto want = (*want_ref)->Run(inputs);
    ASSERT_TRUE(got.ok() && want.ok()) << got.status().message();
    const testing::Comparison cmp = testing::Compare(*got, *want);
    EXPECT_EQ(cmp.error, "");
    EXPECT_GT(cmp.max_ref, 0.05);
    EXPECT_LE(cmp.max_abs, 1e-5 * std::max(cmp.max_ref, 1.0));
    PrepareStats stats;
    const testing::Comparison fast = testing::CompareWithReference(*g, inputs, &stats);
    EXPECT_EQ(fast.error, "");
    EXPECT_EQ(stats.fallback_nodes, 0);
  }
  // The NCHWc layout of level "all" (weights packed for the saving CPU) is refused by name.
  ModelBuilder nchwc;
  nchwc.Input("x", {1, 16, 4, 4}).Output("y", {1, 16, 4, 4}).RandomWeight("w", {16, 16, 1, 1}, 1);
  nchwc.Node("Conv", {"x", "w"}, {"y"}, "packed_conv").set_domain("com.microsoft.nchwc");
  auto refused = ImportOnnxBytes(nchwc.Bytes(), "nchwc");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'packed_conv' (com.microsoft.nchwc.Conv)"),
            std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("'extended'"), std::string::npos);
}

// A node whose inputs are all constants but whose output the model also returns is not folded
// (ViT's class token expanded to the batch, with the model's every intermediate as an output, as
// a calibration run asks): a host kernel reading its constant input had no buffer for it
// ("oneDNN: object is not initialized").
TEST(DnnlOpsTest, AnOutputComputedFromConstantsOnlyRuns) {
  ModelBuilder b(17);
  b.Input("x", {1, 4, 8}).Output("y", {1, 5, 8}).Output("e", {1, 1, 8});
  b.RandomWeight("token", {1, 1, 8}, 1).Int64Weight("shape", {1, 1, 8});
  b.Node("Expand", {"token", "shape"}, {"e"});
  SetInt(b.Node("Concat", {"e", "x"}, {"y"}), "axis", 1);
  auto g = ImportOnnxBytes(b.Bytes(), "constant output");
  ASSERT_TRUE(g.ok()) << g.status().message();
  PrepareStats stats;
  const testing::Comparison cmp =
      testing::CompareWithReference(*g, testing::RandomInputs(*g, 2), &stats);
  EXPECT_EQ(cmp.error, "");
  EXPECT_EQ(cmp.max_abs, 0.0);
  EXPECT_GT(cmp.max_ref, 0.1);
}

// oneDNN 2.6's jit post-ops keep one set of constants per eltwise algorithm, so a chain with a
// function twice under different constants computed both with the first's: two clips, two
// scales after a convolution and a matmul. Such a function takes another algorithm's form
// (AppendEltwise) or stays out of the chain.
TEST(DnnlOpsTest, PostOpChainsRepeatingAFunctionComputeEachOne) {
  ModelBuilder b;
  b.Input("x", {1, 8, 6, 6}).Input("m", {4, 16}).Output("y", {1, 8, 6, 6}).Output("z", {4, 16});
  b.RandomWeight("w", {8, 8, 3, 3}, 3).RandomWeight("v", {16, 16}, 4);
  b.Weight("lo", HostTensor::FromDoubles(kFloat, {}, {-0.5}))
      .Weight("hi", HostTensor::FromDoubles(kFloat, {}, {2.0}));
  b.Weight("lo2", HostTensor::FromDoubles(kFloat, {}, {-0.2}))
      .Weight("hi2", HostTensor::FromDoubles(kFloat, {}, {0.3}));
  b.Weight("two", HostTensor::FromDoubles(kFloat, {}, {2.0}));
  b.Weight("three", HostTensor::FromDoubles(kFloat, {}, {3.0}));
  SetInts(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  b.Node("Clip", {"c", "lo", "hi"}, {"c1"});
  b.Node("Clip", {"c1", "lo2", "hi2"}, {"c2"});
  b.Node("Mul", {"c2", "two"}, {"c3"});
  b.Node("Mul", {"c3", "three"}, {"y"});
  b.Node("MatMul", {"m", "v"}, {"p"});
  b.Node("Mul", {"p", "two"}, {"p1"});
  b.Node("Mul", {"p1", "three"}, {"z"});
  Check(b, "repeated post-op functions");
}

// A model stored in float16 (a GPU-minded export) computes in float32 on the CPU: its float16
// values become float32, the interface stays float16 (casts where inputs enter and outputs
// leave), so the convolutions map onto spec operators and run on oneDNN instead of every node on
// the reference kernels (ResNet-50 in float16: 2.6 s -> 33 ms). The outputs agree with the
// float16 arithmetic to float16's precision. A model that makes a float16 value by a dtype
// attribute is left as it is.
TEST(DnnlOpsTest, Float16ModelsComputeInFloat32) {
  auto half = [](std::vector<int64_t> dims, uint64_t seed) {
    std::vector<double> v(CountElements(dims));
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i * 7 + seed)) * 0.3;
    return HostTensor::FromDoubles(kFloat16, std::move(dims), v);
  };
  ModelBuilder b;
  b.Input("x", {1, 4, 6, 6}, kFloat16).Output("y", {1, 4, 6, 6}, kFloat16);
  b.Weight("w", half({4, 4, 3, 3}, 1)).Weight("bias", half({4}, 2));
  SetInts(b.Node("Conv", {"x", "w", "bias"}, {"c"}), "pads", {1, 1, 1, 1});
  SetInt(b.Node("Cast", {"c"}, {"cf"}), "to", kFloat);
  SetInt(b.Node("Cast", {"cf"}, {"c16"}), "to", kFloat16);
  b.Node("Relu", {"c16"}, {"y"});
  ImportOptions as_is, widened;
  widened.float16_as_float32 = true;
  auto original = ImportOnnxBytes(b.Bytes(), "half", as_is);
  auto g = ImportOnnxBytes(b.Bytes(), "half", widened);
  ASSERT_TRUE(original.ok() && g.ok()) << g.status().message();
  EXPECT_EQ(testing::CountKind(*original, "conv2d"), 0);
  EXPECT_EQ(testing::CountKind(*g, "conv2d"), 1);
  EXPECT_EQ(g->value(g->inputs()[0]).elem_type, kFloat16);
  EXPECT_EQ(g->value(g->outputs()[0]).elem_type, kFloat16);
  EXPECT_EQ(g->value(g->outputs()[0]).name, "y");
  const std::vector<HostTensor> inputs = testing::RandomInputs(*original, 3);
  ASSERT_EQ(inputs[0].elem_type, kFloat16);
  auto ref = MakeReferenceBackend()->Prepare(*original, {});
  auto fast = MakeDnnlBackend()->Prepare(*g, {});
  ASSERT_TRUE(ref.ok() && fast.ok());
  EXPECT_EQ((*fast)->stats().fallback_nodes, 2);  // the casts at the interface
  auto want = (*ref)->Run(inputs);
  auto got = (*fast)->Run(inputs);
  ASSERT_TRUE(want.ok() && got.ok()) << got.status().message();
  EXPECT_EQ((*got)[0].elem_type, kFloat16);
  const testing::Comparison cmp = testing::Compare(*got, *want);
  EXPECT_EQ(cmp.error, "");
  EXPECT_LT(cmp.max_abs, 2e-3 * std::max(cmp.max_ref, 1.0));
  EXPECT_GT(cmp.max_ref, 0.1);

  ModelBuilder e;  // EyeLike with dtype float16: made in float16 whatever its input
  e.Input("x", {3, 3}).Output("y", {3, 3}, kFloat16);
  SetInt(e.Node("EyeLike", {"x"}, {"y"}), "dtype", kFloat16);
  auto eye = ImportOnnxBytes(e.Bytes(), "eye", widened);
  ASSERT_TRUE(eye.ok()) << eye.status().message();
  EXPECT_EQ(eye->num_nodes(), 1);
}

// A model in the QOperator form (QLinearConv with per-channel int8 weights and an int32 bias, a
// MaxPool of 8-bit values, ONNX Runtime's contrib QLinearAdd and QLinearGlobalAveragePool)
// imports in the QDQ form: no quantized operator left, every pair of the 8-bit values in float
// on oneDNN. The standard operators' reference kernels agree with the rewrite up to one step of
// the output's quantization (float rounding before a quantizer).
TEST(DnnlOpsTest, QOperatorModelsRunInTheQdqForm) {
  for (bool contrib : {false, true}) {
    SCOPED_TRACE(contrib ? "with contrib operators" : "standard operators");
    ModelBuilder b(13);
    if (contrib) {
      auto* op = b.model().add_opset_import();
      op->set_domain("com.microsoft");
      op->set_version(1);
    }
    const int64_t c = 8;
    b.Input("x", {1, 4, 8, 8}).Output("y", {1, c, contrib ? 1 : 4, contrib ? 1 : 4});
    auto scalar = [&](const std::string& name, double v) {
      b.Weight(name, HostTensor::FromDoubles(kFloat, {}, {v}));
    };
    auto zero = [&](const std::string& name, int64_t v) {
      b.Weight(name, HostTensor::FromInts(kUint8, {}, {v}));
    };
    scalar("sx", 2.0 / 255), zero("zx", 128), scalar("sy", 0.05), zero("zy", 100);
    scalar("sa", 0.08), zero("za", 90), scalar("sg", 0.04), zero("zg", 60);
    std::vector<int64_t> w(c * 4 * 9), bias(c), wz(c, 0);
    std::vector<double> sw(c);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int64_t>((i * 37) % 255) - 127;
    for (int64_t k = 0; k < c; ++k) {
      sw[k] = 0.002 + 0.0005 * static_cast<double>(k);
      bias[k] = (k - 4) * 30000;  // up to 0.5 in float: more than a step of the output
    }
    b.Weight("w", HostTensor::FromInts(kInt8, {c, 4, 3, 3}, w));
    b.Weight("sw", HostTensor::FromDoubles(kFloat, {c}, sw));
    b.Weight("wz", HostTensor::FromInts(kInt8, {c}, wz));
    b.Weight("bias", HostTensor::FromInts(kInt32, {c}, bias));
    b.Node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
    SetInts(b.Node("QLinearConv", {"xq", "sx", "zx", "w", "sw", "wz", "sy", "zy", "bias"}, {"cq"}),
            "pads", {1, 1, 1, 1});
    auto& pool = b.Node("MaxPool", {"cq"}, {"pq"});
    SetInts(pool, "kernel_shape", {2, 2});
    SetInts(pool, "strides", {2, 2});
    if (contrib) {
      b.Node("QLinearAdd", {"pq", "sy", "zy", "pq", "sy", "zy", "sa", "za"}, {"aq"})
          .set_domain("com.microsoft");
      b.Node("QLinearGlobalAveragePool", {"aq", "sa", "za", "sg", "zg"}, {"gq"})
          .set_domain("com.microsoft");
      b.Node("DequantizeLinear", {"gq", "sg", "zg"}, {"y"});
    } else {
      b.Node("DequantizeLinear", {"pq", "sy", "zy"}, {"y"});
    }
    auto g = ImportOnnxBytes(b.Bytes(), "qoperator");
    ASSERT_TRUE(g.ok()) << g.status().message();
    for (const char* kind : {"onnx:QLinearConv", "onnx:com.microsoft.QLinearAdd",
                             "onnx:com.microsoft.QLinearGlobalAveragePool"})
      EXPECT_EQ(testing::CountKind(*g, kind), 0) << kind;
    PrepareStats stats;
    const std::vector<HostTensor> inputs = testing::RandomInputs(*g, 9);
    const testing::Comparison cmp = testing::CompareWithReference(*g, inputs, &stats);
    EXPECT_EQ(cmp.error, "");
    EXPECT_EQ(stats.fallback_nodes, 0);
    // The convolution runs in int8 (QdqConvolutionsRunInInt8) where the CPU has 8-bit dot products.
    EXPECT_EQ(stats.kernel_variants["int8"], dnnl_backend::HasInt8DotKernels() ? 1 : 0);
    const double step = contrib ? 0.04 : 0.05;
    EXPECT_LE(cmp.max_abs, step * 1.01);
    EXPECT_GT(cmp.max_ref, 4 * step);
    if (contrib) continue;  // no reference kernels for the contrib operators as such
    ImportOptions as_is;
    as_is.map_to_spec_ops = false;
    auto original = ImportOnnxBytes(b.Bytes(), "qoperator", as_is);
    ASSERT_TRUE(original.ok());
    EXPECT_EQ(testing::CountKind(*original, "onnx:QLinearConv"), 1);
    auto ref = MakeReferenceBackend()->Prepare(*original, {});
    ASSERT_TRUE(ref.ok());
    auto want = (*ref)->Run(inputs);
    auto model = MakeDnnlBackend()->Prepare(*g, {});
    ASSERT_TRUE(want.ok() && model.ok());
    auto got = (*model)->Run(inputs);
    ASSERT_TRUE(got.ok());
    EXPECT_LE(testing::Compare(*got, *want).max_abs, step * 1.01);
  }
}

// A QOperator rewrite that fails half way (a per-channel weight scale before opset 13, which the
// QDQ form cannot state) drops the DequantizeLinear it had made for a shared operand, so a later
// operator reading that operand makes its own: the first stays a QLinearConv, the second is
// rewritten, both compute what the reference kernels compute.
TEST(DnnlOpsTest, AFailedQOperatorRewriteLeavesNoDanglingOperand) {
  ModelBuilder b(12);
  b.Input("x", {1, 4, 6, 6}).Output("y1", {1, 3, 6, 6}).Output("y2", {1, 4, 6, 5});
  b.Weight("sx", HostTensor::FromDoubles(kFloat, {}, {0.01}))
      .Weight("zx", HostTensor::FromInts(kUint8, {}, {128}));
  b.Weight("sy", HostTensor::FromDoubles(kFloat, {}, {0.05}))
      .Weight("zy", HostTensor::FromInts(kUint8, {}, {100}));
  std::vector<int64_t> w(3 * 4 * 9), v(6 * 5);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int64_t>(i % 11) - 5;
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i % 7) - 3;
  b.Weight("w", HostTensor::FromInts(kInt8, {3, 4, 3, 3}, w));
  b.Weight("sw", HostTensor::FromDoubles(kFloat, {3}, {0.01, 0.02, 0.03}));
  b.Weight("wz", HostTensor::FromInts(kInt8, {3}, {0, 0, 0}));
  b.Weight("v", HostTensor::FromInts(kInt8, {6, 5}, v));
  b.Weight("sv", HostTensor::FromDoubles(kFloat, {}, {0.02}))
      .Weight("vz", HostTensor::FromInts(kInt8, {}, {0}));
  b.Node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  SetInts(b.Node("QLinearConv", {"xq", "sx", "zx", "w", "sw", "wz", "sy", "zy"}, {"cq"}), "pads",
          {1, 1, 1, 1});
  b.Node("QLinearMatMul", {"xq", "sx", "zx", "v", "sv", "vz", "sy", "zy"}, {"mq"});
  b.Node("DequantizeLinear", {"cq", "sy", "zy"}, {"y1"});
  b.Node("DequantizeLinear", {"mq", "sy", "zy"}, {"y2"});
  auto g = ImportOnnxBytes(b.Bytes(), "half rewritten");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(testing::CountKind(*g, "onnx:QLinearConv"), 1);
  EXPECT_EQ(testing::CountKind(*g, "onnx:QLinearMatMul"), 0);
  const testing::Comparison cmp = testing::CompareWithReference(*g, testing::RandomInputs(*g, 4));
  EXPECT_EQ(cmp.error, "");
  EXPECT_LE(cmp.max_abs, 0.05 * 1.01);
}

}  // namespace
}  // namespace verisub::runtime
