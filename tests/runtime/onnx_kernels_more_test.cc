// ScatterElements, OneHot, LpNormalization and MeanVarianceNormalization on the reference
// executor, against values worked out by hand (the ONNX documentation's examples where it has
// them).
#include <gtest/gtest.h>

#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::ModelBuilder;

StatusOr<std::vector<double>> RunOne(ModelBuilder& b, const HostTensor& x) {
  ImportOptions options;
  options.map_to_spec_ops = false;
  options.fold_constants = false;
  auto g = ImportOnnxBytes(b.Bytes(), "more", options);
  if (!g.ok()) return g.status();
  auto y = Execute(*g, {x});
  if (!y.ok()) return y.status();
  return (*y)[0].ToDoubles();
}

HostTensor F(std::vector<int64_t> dims, std::vector<double> v) {
  return HostTensor::FromDoubles(kFloat, std::move(dims), std::move(v));
}

StatusOr<std::vector<double>> Scatter(std::vector<int64_t> indices, const std::string& reduction,
                                      int opset = 16) {
  ModelBuilder b(opset);
  b.Input("x", {1, 5}).Output("y", {1, 5});
  b.Weight("i", HostTensor::FromInts(kInt64, {1, 2}, indices));
  b.Weight("u", F({1, 2}, {1.1, 2.1}));
  auto& s = b.Node("ScatterElements", {"x", "i", "u"}, {"y"});
  testing::SetInt(s, "axis", 1);
  if (!reduction.empty()) testing::SetString(s, "reduction", reduction);
  return RunOne(b, F({1, 5}, {1, 2, 3, 4, 5}));
}

TEST(MoreKernelsTest, ScatterElementsWritesAndReducesAlongItsAxis) {
  auto a = Scatter({1, 3}, "");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(*a, (std::vector<double>{1, 1.1f, 3, 2.1f, 5}));
  auto neg = Scatter({1, -3}, "");  // -3 is index 2
  ASSERT_TRUE(neg.ok());
  EXPECT_EQ(*neg, (std::vector<double>{1, 1.1f, 2.1f, 4, 5}));
  auto add = Scatter({1, 1}, "add");
  ASSERT_TRUE(add.ok());
  EXPECT_NEAR((*add)[1], 2 + 1.1 + 2.1, 1e-6);
  auto out = Scatter({1, 5}, "");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("out of range"), std::string::npos);
}

TEST(MoreKernelsTest, OneHotAlongEitherAxis) {
  for (int64_t axis : {-1, 0}) {
    ModelBuilder b;
    b.Input("x", {3}, kInt64).Output("y", {3, 3});
    b.Int64Weight("depth", {3});
    b.Weight("values", F({2}, {0, 5}));
    testing::SetInt(b.Node("OneHot", {"x", "depth", "values"}, {"y"}), "axis", axis);
    auto y = RunOne(b, HostTensor::FromInts(kInt64, {3}, {0, -1, 7}));
    ASSERT_TRUE(y.ok()) << y.status().message();
    // Index 0, index -1 (= 2), index 7 (outside: all off).
    const std::vector<double> last = {5, 0, 0, 0, 0, 5, 0, 0, 0};
    const std::vector<double> first = {5, 0, 0, 0, 0, 0, 0, 5, 0};
    EXPECT_EQ(*y, axis == -1 ? last : first) << axis;
  }
}

TEST(MoreKernelsTest, LpAndMeanVarianceNormalization) {
  for (int64_t p : {1, 2}) {
    ModelBuilder b;
    b.Input("x", {2, 2}).Output("y", {2, 2});
    auto& n = b.Node("LpNormalization", {"x"}, {"y"});
    testing::SetInt(n, "p", p);
    testing::SetInt(n, "axis", -1);
    auto y = RunOne(b, F({2, 2}, {3, 4, 0, 0}));
    ASSERT_TRUE(y.ok()) << y.status().message();
    const std::vector<double> want =
        p == 2 ? std::vector<double>{0.6, 0.8, 0, 0} : std::vector<double>{3.0 / 7, 4.0 / 7, 0, 0};
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR((*y)[i], want[i], 1e-6) << p;
  }
  ModelBuilder m;
  m.Input("x", {1, 2, 1, 2}).Output("y", {1, 2, 1, 2});
  m.Node("MeanVarianceNormalization", {"x"}, {"y"});
  auto y = RunOne(m, F({1, 2, 1, 2}, {1, 3, 10, 10}));
  ASSERT_TRUE(y.ok()) << y.status().message();
  // Per channel over N, H, W: channel 0 has mean 2 and variance 1; channel 1 no variance.
  EXPECT_NEAR((*y)[0], -1, 1e-6);
  EXPECT_NEAR((*y)[1], 1, 1e-6);
  EXPECT_NEAR((*y)[2], 0, 1e-6);
}

// Reshape-1 (opsets 1 to 4, old models of the ONNX model zoo) takes its shape as an attribute.
TEST(MoreKernelsTest, ReshapeOfOpsetFourTakesItsShapeAttribute) {
  testing::ModelBuilder b(4);
  b.Input("x", {2, 3, 4}).Output("y", {6, 4});
  testing::SetInts(b.Node("Reshape", {"x"}, {"y"}), "shape", {-1, 4});
  auto g = ImportOnnxBytes(b.Bytes(), "reshape-1");
  ASSERT_TRUE(g.ok()) << g.status().message();
  const HostTensor x = testing::RandomTensor({2, 3, 4}, 1);
  auto y = Execute(*g, {x});
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ((*y)[0].dims, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ((*y)[0].ToDoubles(), x.ToDoubles());
}

}  // namespace
}  // namespace verisub::runtime
