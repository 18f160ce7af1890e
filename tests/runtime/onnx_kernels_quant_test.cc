// The integer operators of quantized models against the examples of the ONNX operator
// documentation (DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul) and, for
// QLinearConv with per-channel scales and a bias, against dequantize -> Conv -> quantize.
#include <gtest/gtest.h>

#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::ModelBuilder;

StatusOr<std::vector<HostTensor>> RunModel(ModelBuilder& b, const std::vector<HostTensor>& inputs) {
  ImportOptions options;
  options.map_to_spec_ops = false;
  options.fold_constants = false;
  auto g = ImportOnnxBytes(b.Bytes(), "quant", options);
  if (!g.ok()) return g.status();
  return Execute(*g, inputs);
}

HostTensor U8(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return HostTensor::FromInts(kUint8, std::move(dims), std::move(v));
}
HostTensor F(std::vector<int64_t> dims, std::vector<double> v) {
  return HostTensor::FromDoubles(kFloat, std::move(dims), std::move(v));
}

TEST(QuantKernelsTest, DynamicQuantizeLinearAsDocumented) {
  ModelBuilder b;
  b.Input("x", {6}).Output("y", {6}, kUint8).Output("s", {}).Output("z", {}, kUint8);
  b.Node("DynamicQuantizeLinear", {"x"}, {"y", "s", "z"});
  auto out = RunModel(b, {F({6}, {0, 2, -3, -2.5, 1.34, 0.5})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].ToInts(), (std::vector<int64_t>{153, 255, 0, 26, 221, 179}));
  EXPECT_NEAR((*out)[1].DoubleAt(0), 0.0196078438, 1e-9);
  EXPECT_EQ((*out)[2].IntAt(0), 153);
}

TEST(QuantKernelsTest, MatMulIntegerAndConvIntegerAsDocumented) {
  ModelBuilder b;
  b.Input("a", {4, 3}, kUint8).Input("b", {3, 2}, kUint8).Output("y", {4, 2}, kInt32);
  b.Weight("azp", U8({}, {12}));
  b.Node("MatMulInteger", {"a", "b", "azp"}, {"y"});
  auto out = RunModel(
      b, {U8({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}), U8({3, 2}, {1, 4, 2, 5, 3, 6})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].ToInts(), (std::vector<int64_t>{-38, -83, -44, -98, -50, -113, -56, -128}));

  ModelBuilder c;
  c.Input("x", {1, 1, 3, 3}, kUint8).Output("y", {1, 1, 2, 2}, kInt32);
  c.Weight("w", U8({1, 1, 2, 2}, {1, 1, 1, 1})).Weight("xzp", U8({}, {1}));
  c.Node("ConvInteger", {"x", "w", "xzp"}, {"y"});
  auto conv = RunModel(c, {U8({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10})});
  ASSERT_TRUE(conv.ok()) << conv.status().message();
  EXPECT_EQ((*conv)[0].ToInts(), (std::vector<int64_t>{12, 16, 24, 28}));
}

TEST(QuantKernelsTest, QLinearMatMulAsDocumented) {
  ModelBuilder b;
  b.Input("a", {2, 4}, kUint8).Input("b", {4, 3}, kUint8).Output("y", {2, 3}, kUint8);
  b.Weight("as", F({}, {0.0066})).Weight("azp", U8({}, {113}));
  b.Weight("bs", F({}, {0.00705})).Weight("bzp", U8({}, {114}));
  b.Weight("ys", F({}, {0.0107})).Weight("yzp", U8({}, {118}));
  b.Node("QLinearMatMul", {"a", "as", "azp", "b", "bs", "bzp", "ys", "yzp"}, {"y"});
  auto out = RunModel(b, {U8({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29}),
                          U8({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].ToInts(), (std::vector<int64_t>{168, 115, 255, 1, 66, 151}));
}

// Per output channel weight scales and zero points, an int32 bias, padding: equal to the same
// convolution done in float on the dequantized operands and quantized after, up to one step of
// rounding where the two orders of operations round a tie differently.
TEST(QuantKernelsTest, QLinearConvIsTheDequantizedConvolutionQuantized) {
  const std::vector<int64_t> xv = {3,  200, 17, 90,  255, 0, 128, 64, 33,  71, 150,
                                   12, 99,  5,  180, 44,  9, 250, 60, 120, 77, 140,
                                   30, 210, 19, 88,  160, 1, 240, 55, 101, 66};
  ModelBuilder q;
  q.Input("x", {1, 2, 4, 4}, kUint8).Output("y", {1, 3, 4, 4}, kUint8);
  std::vector<int64_t> wv(3 * 2 * 3 * 3);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<int64_t>((i * 37 + 11) % 256);
  q.Weight("w", U8({3, 2, 3, 3}, wv));
  q.Weight("xs", F({}, {0.02})).Weight("xzp", U8({}, {128}));
  q.Weight("ws", F({3}, {0.001, 0.002, 0.0015})).Weight("wzp", U8({3}, {120, 128, 135}));
  q.Weight("ys", F({}, {0.05})).Weight("yzp", U8({}, {100}));
  q.Weight("bias", HostTensor::FromInts(kInt32, {3}, {500, -1200, 0}));
  testing::SetInts(
      q.Node("QLinearConv", {"x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "bias"}, {"y"}),
      "pads", {1, 1, 1, 1});
  auto out = RunModel(q, {U8({1, 2, 4, 4}, xv)});
  ASSERT_TRUE(out.ok()) << out.status().message();

  ModelBuilder f;
  f.Input("x", {1, 2, 4, 4}, kUint8).Output("y", {1, 3, 4, 4}, kUint8);
  f.Weight("w", U8({3, 2, 3, 3}, wv));
  f.Weight("xs", F({}, {0.02})).Weight("xzp", U8({}, {128}));
  f.Weight("ws", F({3}, {0.001, 0.002, 0.0015})).Weight("wzp", U8({3}, {120, 128, 135}));
  f.Weight("ys", F({}, {0.05})).Weight("yzp", U8({}, {100}));
  f.Weight("bf", F({3}, {500 * 0.02 * 0.001, -1200 * 0.02 * 0.002, 0}));
  f.Node("DequantizeLinear", {"x", "xs", "xzp"}, {"xf"});
  testing::SetInt(f.Node("DequantizeLinear", {"w", "ws", "wzp"}, {"wf"}), "axis", 0);
  testing::SetInts(f.Node("Conv", {"xf", "wf", "bf"}, {"yf"}), "pads", {1, 1, 1, 1});
  f.Node("QuantizeLinear", {"yf", "ys", "yzp"}, {"y"});
  auto want = RunModel(f, {U8({1, 2, 4, 4}, xv)});
  ASSERT_TRUE(want.ok()) << want.status().message();
  const std::vector<int64_t> a = (*out)[0].ToInts(), e = (*want)[0].ToInts();
  ASSERT_EQ(a.size(), e.size());
  int differ = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_LE(std::abs(a[i] - e[i]), 1) << i;
    differ += a[i] != e[i];
  }
  EXPECT_LE(differ, 2);
  // Not every output saturates: the comparison says something.
  EXPECT_GT(std::count_if(a.begin(), a.end(), [](int64_t v) { return v > 0 && v < 255; }), 20);
}

}  // namespace
}  // namespace verisub::runtime
