// The reference ConvTranspose kernel against values worked out by hand: strides, pads,
// output_padding, output_shape (pads then derived), groups with a bias, and its errors.
#include <gtest/gtest.h>

#include <functional>

#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::ModelBuilder;

// ConvTranspose of x [1, C, len(x)/C] with weight `w` of dims `wdims` (and a bias when given),
// output [1, M, out].
StatusOr<std::vector<double>> Run1d(std::vector<double> x, int64_t c, std::vector<double> w,
                                    std::vector<int64_t> wdims, std::vector<double> bias, int64_t m,
                                    int64_t out,
                                    const std::function<void(onnx::NodeProto&)>& attrs) {
  ModelBuilder b(16);
  const int64_t len = static_cast<int64_t>(x.size()) / c;
  b.Input("x", {1, c, len}).Output("y", {1, m, out});
  b.Weight("w", HostTensor::FromDoubles(kFloat, wdims, w));
  std::vector<std::string> in = {"x", "w"};
  if (!bias.empty()) {
    b.Weight("b", HostTensor::FromDoubles(kFloat, {m}, bias));
    in.push_back("b");
  }
  attrs(b.Node("ConvTranspose", in, {"y"}, "deconv"));
  ImportOptions options;
  options.map_to_spec_ops = false;
  auto g = ImportOnnxBytes(b.Bytes(), "conv_transpose", options);
  if (!g.ok()) return g.status();
  auto y = Execute(*g, {HostTensor::FromDoubles(kFloat, {1, c, len}, x)});
  if (!y.ok()) return y.status();
  return (*y)[0].ToDoubles();
}

void Expect(const StatusOr<std::vector<double>>& got, const std::vector<double>& want) {
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, want);
}

TEST(ConvTransposeKernelTest, ScattersThroughTheKernel) {
  // x = [1, 2], w = [1, 1, 1], stride 2: 1 at outputs 0-2, 2 at outputs 2-4.
  auto strided = [](onnx::NodeProto& n) { testing::SetInts(n, "strides", {2}); };
  Expect(Run1d({1, 2}, 1, {1, 1, 1}, {1, 1, 3}, {}, 1, 5, strided), {1, 1, 3, 2, 2});
  Expect(Run1d({1, 2}, 1, {1, 1, 1}, {1, 1, 3}, {}, 1, 3,
               [&](onnx::NodeProto& n) {
                 strided(n);
                 testing::SetInts(n, "pads", {1, 1});
               }),
         {1, 3, 2});
  Expect(Run1d({1, 2}, 1, {1, 1, 1}, {1, 1, 3}, {}, 1, 6,
               [&](onnx::NodeProto& n) {
                 strided(n);
                 testing::SetInts(n, "output_padding", {1});
               }),
         {1, 1, 3, 2, 2, 0});
  // output_shape 4: the one padded column is taken at the start (auto_pad NOTSET).
  Expect(Run1d({1, 2}, 1, {1, 1, 1}, {1, 1, 3}, {}, 1, 4,
               [&](onnx::NodeProto& n) {
                 strided(n);
                 testing::SetInts(n, "output_shape", {4});
               }),
         {1, 3, 2, 2});
  // Dilation 2, stride 1: taps at 0, 2, 4 from each input.
  Expect(Run1d({1, 2}, 1, {1, 10, 100}, {1, 1, 3}, {}, 1, 6,
               [](onnx::NodeProto& n) { testing::SetInts(n, "dilations", {2}); }),
         {1, 2, 10, 20, 100, 200});
}

TEST(ConvTransposeKernelTest, GroupsKeepTheirChannelsAndAddTheBias) {
  // Two groups of one channel each; weight [C=2, M/group=1, 1].
  Expect(Run1d({1, 2}, 2, {3, 4}, {2, 1, 1}, {10, 20}, 2, 1,
               [](onnx::NodeProto& n) { testing::SetInt(n, "group", 2); }),
         {13, 28});
  auto bad = Run1d({1, 2}, 2, {3, 4, 5}, {3, 1, 1}, {}, 3, 1, [](onnx::NodeProto&) {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ConvTranspose"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace verisub::runtime
