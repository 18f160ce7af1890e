// The reference Resize kernel against values worked out by hand: every interpolation mode, the
// coordinate transformations segmentation and detection exports use, a tf_crop_and_resize roi
// with its extrapolation value, and its errors on contradictory or unsupported attributes.
#include <gtest/gtest.h>

#include <functional>

#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "runtime/onnx_kernels.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::ModelBuilder;

// Resize of x = [1,1,1,n] (values 1..n) to `out` columns, with constant `scales` or `sizes`
// (whichever is not empty) and a roi when given, run by the reference executor.
StatusOr<std::vector<double>> Resize1d(int64_t n, int64_t out, std::vector<double> scales,
                                       std::vector<int64_t> sizes, std::vector<double> roi,
                                       const std::function<void(onnx::NodeProto&)>& attrs,
                                       int opset = 16) {
  ModelBuilder b(opset);
  b.Input("x", {1, 1, 1, n}).Output("y", {1, 1, 1, out});
  std::vector<std::string> in = {"x", "", "", ""};
  if (!roi.empty()) {
    b.Weight("roi", HostTensor::FromDoubles(kFloat, {static_cast<int64_t>(roi.size())}, roi));
    in[1] = "roi";
  }
  if (!scales.empty()) {
    b.Weight("scales",
             HostTensor::FromDoubles(kFloat, {static_cast<int64_t>(scales.size())}, scales));
    in[2] = "scales";
  }
  if (!sizes.empty()) {
    b.Int64Weight("sizes", sizes);
    in[3] = "sizes";
  }
  while (!in.empty() && in.back().empty()) in.pop_back();
  attrs(b.Node("Resize", in, {"y"}, "resize"));
  ImportOptions options;
  options.map_to_spec_ops = false;
  auto g = ImportOnnxBytes(b.Bytes(), "resize", options);
  if (!g.ok()) return g.status();
  std::vector<double> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<double>(i + 1);
  auto y = Execute(*g, {HostTensor::FromDoubles(kFloat, {1, 1, 1, n}, x)});
  if (!y.ok()) return y.status();
  return (*y)[0].ToDoubles();
}

auto Attrs(std::string mode, std::string coordinates, std::string nearest = "") {
  return [=](onnx::NodeProto& n) {
    testing::SetString(n, "mode", mode);
    testing::SetString(n, "coordinate_transformation_mode", coordinates);
    if (!nearest.empty()) testing::SetString(n, "nearest_mode", nearest);
  };
}

void ExpectNear(const StatusOr<std::vector<double>>& got, const std::vector<double>& want) {
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR((*got)[i], want[i], 1e-6) << i;
}

TEST(ResizeKernelTest, LinearWithHalfPixelCentresAndAlignedCorners) {
  // Half-pixel centres (PyTorch's align_corners=False): the edges are clamped.
  ExpectNear(Resize1d(2, 4, {}, {1, 1, 1, 4}, {}, Attrs("linear", "half_pixel")),
             {1, 1.25, 1.75, 2});
  ExpectNear(Resize1d(2, 4, {1, 1, 1, 2}, {}, {}, Attrs("linear", "pytorch_half_pixel")),
             {1, 1.25, 1.75, 2});
  ExpectNear(Resize1d(2, 3, {}, {1, 1, 1, 3}, {}, Attrs("linear", "align_corners")), {1, 1.5, 2});
  ExpectNear(Resize1d(4, 2, {1, 1, 1, 0.5}, {}, {}, Attrs("linear", "asymmetric")), {1, 3});
}

TEST(ResizeKernelTest, NearestRoundsAsItsModeSays) {
  ExpectNear(Resize1d(2, 4, {1, 1, 1, 2}, {}, {}, Attrs("nearest", "asymmetric", "floor")),
             {1, 1, 2, 2});
  // Half-pixel coordinates of a 4 -> 2 downscale fall on ties: 2x + 0.5.
  ExpectNear(
      Resize1d(4, 2, {1, 1, 1, 0.5}, {}, {}, Attrs("nearest", "half_pixel", "round_prefer_floor")),
      {1, 3});
  ExpectNear(
      Resize1d(4, 2, {1, 1, 1, 0.5}, {}, {}, Attrs("nearest", "half_pixel", "round_prefer_ceil")),
      {2, 4});
  ExpectNear(Resize1d(3, 2, {}, {1, 1, 1, 2}, {}, Attrs("nearest", "asymmetric", "ceil")), {1, 3});
}

TEST(ResizeKernelTest, CubicReproducesALineInsideAndHonoursItsCoefficient) {
  // 4 -> 8, asymmetric: output 2 sits on input 1 (value 2), output 3 halfway to input 2: the
  // cubic kernel reproduces a line away from the edges.
  auto y = Resize1d(4, 8, {1, 1, 1, 2}, {}, {}, Attrs("cubic", "asymmetric"));
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_NEAR((*y)[2], 2, 1e-6);
  EXPECT_NEAR((*y)[3], 2.5, 1e-6);
  // At output 1 (input 0.5) the clamped edge bends it: with A = -0.75 the weights are -0.09375,
  // 0.59375, 0.59375, -0.09375 on inputs -1 (read as input 0), 0, 1, 2: values 1, 1, 2, 3.
  EXPECT_NEAR((*y)[1], -0.09375 + 0.59375 + 2 * 0.59375 - 3 * 0.09375, 1e-6);
  // exclude_outside drops the tap past the edge and renormalizes the others.
  auto excluded = Resize1d(4, 8, {1, 1, 1, 2}, {}, {}, [](onnx::NodeProto& n) {
    Attrs("cubic", "asymmetric")(n);
    testing::SetInt(n, "exclude_outside", 1);
  });
  ASSERT_TRUE(excluded.ok());
  EXPECT_NEAR((*excluded)[1], (0.59375 + 2 * 0.59375 - 3 * 0.09375) / (1 + 0.09375), 1e-6);
}

TEST(ResizeKernelTest, CropAndResizeReadsTheRoiAndExtrapolates) {
  // Columns 1.5 + 1.5x of [1,2,3,4]: 2.5, 4, then 4.5 is past the last: the extrapolation value.
  auto y = Resize1d(4, 3, {}, {1, 1, 1, 3}, {0, 0, 0, 0.5, 1, 1, 1, 1.5}, [](onnx::NodeProto& n) {
    Attrs("linear", "tf_crop_and_resize")(n);
    testing::SetFloat(n, "extrapolation_value", 10);
  });
  ExpectNear(y, {2.5, 4, 10});
}

TEST(ResizeKernelTest, RefusesWhatItCannotComputeNamingIt) {
  auto both = Resize1d(2, 4, {1, 1, 1, 2}, {1, 1, 1, 4}, {}, Attrs("linear", "half_pixel"));
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("exactly one of scales and sizes"), std::string::npos)
      << both.status().message();
  auto mode = Resize1d(2, 4, {1, 1, 1, 2}, {}, {}, Attrs("area", "half_pixel"));
  ASSERT_FALSE(mode.ok());
  EXPECT_NE(mode.status().message().find("mode 'area'"), std::string::npos)
      << mode.status().message();
  // Opset 18's antialias (past the importer's opsets: asked of the plan directly).
  onnx::NodeProto node;
  node.set_op_type("Resize");
  testing::SetString(node, "mode", "linear");
  testing::SetInt(node, "antialias", 1);
  const HostTensor scales = HostTensor::FromDoubles(kFloat, {4}, {1, 1, 0.5, 0.5});
  auto antialias = PlanResize(KernelContext(node, 18, {nullptr, nullptr, &scales}), {1, 1, 4, 4});
  ASSERT_FALSE(antialias.ok());
  EXPECT_NE(antialias.status().message().find("antialias"), std::string::npos)
      << antialias.status().message();
  node.mutable_attribute()->RemoveLast();
  EXPECT_TRUE(PlanResize(KernelContext(node, 18, {nullptr, nullptr, &scales}), {1, 1, 4, 4}).ok());
}

// GridSample of a 1x1x2x3 input (values 1..6) at a grid of the given (x, y) pairs (one output
// row), by the reference executor; PyTorch's numbers (data/models/flow_warp checks three modes at
// once): here single reads whose value is known by hand.
StatusOr<std::vector<double>> GridSample1(std::vector<double> xy, const std::string& mode,
                                          const std::string& padding, int64_t align) {
  const int64_t k = static_cast<int64_t>(xy.size()) / 2;
  ModelBuilder b(16);
  b.Input("x", {1, 1, 2, 3}).Output("y", {1, 1, 1, k});
  b.Weight("grid", HostTensor::FromDoubles(kFloat, {1, 1, k, 2}, xy));
  auto& n = b.Node("GridSample", {"x", "grid"}, {"y"});
  testing::SetString(n, "mode", mode);
  testing::SetString(n, "padding_mode", padding);
  testing::SetInt(n, "align_corners", align);
  ImportOptions options;
  options.map_to_spec_ops = false;
  options.fold_constants = false;
  auto g = ImportOnnxBytes(b.Bytes(), "grid_sample", options);
  if (!g.ok()) return g.status();
  auto y = Execute(*g, {HostTensor::FromDoubles(kFloat, {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6})});
  if (!y.ok()) return y.status();
  return (*y)[0].ToDoubles();
}

TEST(GridSampleTest, CornersCentresPaddingAndBadModes) {
  // Aligned corners: (-1,-1) is pixel (0,0), (1,1) pixel (1,2); the centre (0,0) is between
  // rows 0 and 1 at column 1: (2 + 5) / 2.
  auto a = GridSample1({-1, -1, 1, 1, 0, 0}, "bilinear", "zeros", 1);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(*a, (std::vector<double>{1, 6, 3.5}));
  // Unaligned: (-1,-1) is the outer corner, half a pixel outside: a quarter of pixel (0,0) with
  // zeros outside, all of it with the border repeated.
  auto z = GridSample1({-1, -1}, "bilinear", "zeros", 0);
  auto e = GridSample1({-1, -1}, "bilinear", "border", 0);
  ASSERT_TRUE(z.ok() && e.ok());
  EXPECT_DOUBLE_EQ((*z)[0], 0.25);
  EXPECT_DOUBLE_EQ((*e)[0], 1.0);
  // Far outside: 0 with zeros; the nearest border pixel; reflection folds x = 3 (aligned: 2 past
  // the last column's centre at 2, so back at column 0) onto row 1's first pixel.
  auto far = GridSample1({5, 5}, "nearest", "zeros", 1);
  auto border = GridSample1({5, 5}, "nearest", "border", 1);
  auto mirror = GridSample1({3, 1}, "nearest", "reflection", 1);
  ASSERT_TRUE(far.ok() && border.ok() && mirror.ok());
  EXPECT_EQ((*far)[0], 0.0);
  EXPECT_EQ((*border)[0], 6.0);
  EXPECT_EQ((*mirror)[0], 4.0);
  // Bicubic reproduces a pixel centre exactly.
  auto cubic = GridSample1({0, 1}, "bicubic", "border", 1);
  ASSERT_TRUE(cubic.ok());
  EXPECT_NEAR((*cubic)[0], 5.0, 1e-12);
  // A mode the operator does not have is an error naming it, not a guess.
  auto bad = GridSample1({0, 0}, "cubic", "zeros", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown mode 'cubic'"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace verisub::runtime
