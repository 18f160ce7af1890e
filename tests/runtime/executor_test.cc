// Reference executor: input validation, errors naming the node, and spec kernels agreeing with
// the ONNX kernels of the operators they were mapped from.
#include "runtime/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "runtime/onnx_import.h"
#include "runtime/onnx_kernels.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::ModelBuilder;

Graph ReluModel() {
  ModelBuilder b;
  b.Input("x", {2, 3}).Output("y", {2, 3});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  auto g = ImportOnnxBytes(b.Bytes(), "relu");
  EXPECT_TRUE(g.ok()) << g.status().message();
  return *g;
}

TEST(ExecutorTest, ComputesRelu) {
  Graph g = ReluModel();
  auto out = Execute(g, {HostTensor::FromDoubles(kFloat, {2, 3}, {-1, 2, -3, 4, 0, -0.5})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{0, 2, 0, 4, 0, 0}));
}

TEST(ExecutorTest, RejectsWrongInputs) {
  Graph g = ReluModel();
  EXPECT_NE(Execute(g, {}).status().message().find("1 inputs"), std::string::npos);
  auto shape = Execute(g, {HostTensor::FromDoubles(kFloat, {3, 2}, std::vector<double>(6, 0))});
  EXPECT_NE(shape.status().message().find("expects shape [2,3]"), std::string::npos)
      << shape.status().message();
  auto type = Execute(g, {HostTensor::FromInts(kInt64, {2, 3}, std::vector<int64_t>(6, 0))});
  EXPECT_NE(type.status().message().find("element type float"), std::string::npos)
      << type.status().message();
}

TEST(ExecutorTest, KernelErrorsNameTheNode) {
  ModelBuilder b;
  b.Input("x", {4}).Input("i", {1}, kInt64).Output("y", {1});
  testing::SetInt(b.Node("Gather", {"x", "i"}, {"y"}, "pick"), "axis", 0);
  auto g = ImportOnnxBytes(b.Bytes(), "gather");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto out = Execute(*g, {HostTensor::FromDoubles(kFloat, {4}, {1, 2, 3, 4}),
                          HostTensor::FromInts(kInt64, {1}, {7})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("'pick'"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("index 7 out of range [-4, 3]"), std::string::npos)
      << out.status().message();
}

// Gather copies a whole slice per index (an embedding's rows): along a middle axis, with a
// negative index and a repeated one, for float, double and integer data alike.
TEST(ExecutorTest, GatherPicksWholeSlicesAlongAnAxis) {
  for (int32_t type : {kFloat, kDouble, kInt64}) {
    ModelBuilder b;
    b.Input("x", {2, 3, 2}, type).Input("i", {2, 2}, kInt64).Output("y", {2, 2, 2, 2}, type);
    testing::SetInt(b.Node("Gather", {"x", "i"}, {"y"}, "pick"), "axis", 1);
    auto g = ImportOnnxBytes(b.Bytes(), "gather_slices");
    ASSERT_TRUE(g.ok()) << g.status().message();
    // x[a][b][c] = 100a + 10b + c; indices [[2, -3], [1, 1]].
    auto out =
        Execute(*g, {HostTensor::FromDoubles(type, {2, 3, 2},
                                             {0, 1, 10, 11, 20, 21, 100, 101, 110, 111, 120, 121}),
                     HostTensor::FromInts(kInt64, {2, 2}, {2, -3, 1, 1})});
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{2, 2, 2, 2}));
    EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{20, 21, 0, 1, 10, 11, 10, 11, 120, 121,
                                                          100, 101, 110, 111, 110, 111}))
        << type;
  }
}

// Every permutation of tensors of rank 1 to 4 (axes of size 1, of 0, long runs that merge, sizes
// past a 32x32 tile), in every element storage: the element at each input index lands at the
// permuted index.
TEST(ExecutorTest, TransposeMovesEveryElementToItsPermutedIndex) {
  const std::vector<std::vector<int64_t>> shapes = {
      {5}, {3, 37}, {1, 40}, {33, 1, 35}, {2, 3, 4, 5}, {1, 12, 9, 64}, {2, 0, 3}, {4, 1, 1, 3}};
  for (const std::vector<int64_t>& dims : shapes) {
    const size_t r = dims.size();
    const int64_t n = CountElements(dims);
    std::vector<int64_t> perm(r);
    for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(i);
    do {
      for (int32_t type : {kFloat, kDouble, kInt64}) {
        std::vector<int64_t> values(n);
        for (int64_t i = 0; i < n; ++i) values[i] = 3 * i + 1;
        const HostTensor x =
            type == kInt64 ? HostTensor::FromInts(type, dims, values)
                           : HostTensor::FromDoubles(
                                 type, dims, std::vector<double>(values.begin(), values.end()));
        const HostTensor y = TransposeTensor(x, perm);
        std::vector<int64_t> od(r);
        for (size_t i = 0; i < r; ++i) od[i] = dims[perm[i]];
        ASSERT_EQ(y.dims, od);
        const std::vector<double> got = y.ToDoubles();
        ASSERT_EQ(static_cast<int64_t>(got.size()), n);
        // Output index o reads input index i with i[perm[k]] = o[k].
        const std::vector<int64_t> in_strides = RowMajorStrides(dims);
        std::vector<int64_t> o(r, 0);
        for (int64_t f = 0; f < n; ++f) {
          int64_t at = 0;
          for (size_t k = 0; k < r; ++k) at += o[k] * in_strides[perm[k]];
          ASSERT_EQ(got[f], static_cast<double>(values[at]))
              << "shape " << DimsToString(dims) << " perm " << DimsToString(perm) << " type "
              << type << " element " << f;
          for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
            if (++o[d] < od[d]) break;
            o[d] = 0;
          }
        }
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

// Float Add, Sub, Mul and Div over operands broadcast every way (ranks that differ, axes of size
// 1 on either side, a scalar, nothing to broadcast, zero elements) equal the double-precision
// result rounded to float, element by element.
TEST(ExecutorTest, FloatArithmeticBroadcastsLikeDoublesRounded) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{2, 3, 4}, {2, 3, 4}},
      {{2, 3, 4}, {4}},
      {{4}, {2, 3, 4}},
      {{2, 1, 4}, {1, 3, 1}},
      {{5, 7}, {}},
      {{}, {5, 7}},
      {{3, 1}, {1, 70}},
      {{2, 3, 1, 5}, {3, 4, 1}},
      {{1, 12, 1, 9}, {1, 1, 1, 9}},
      {{0, 3}, {3}},
      {{6, 1, 1}, {6, 2, 35}}};
  const std::vector<std::pair<std::string, double (*)(double, double)>> ops = {
      {"Add", [](double u, double v) { return u + v; }},
      {"Sub", [](double u, double v) { return u - v; }},
      {"Mul", [](double u, double v) { return u * v; }},
      {"Div", [](double u, double v) { return u / v; }}};
  for (const auto& [da, db] : shapes) {
    const HostTensor a = testing::RandomTensor(da, 7), b = testing::RandomTensor(db, 8);
    auto dims = BroadcastDims(da, db);
    ASSERT_TRUE(dims.ok());
    const std::vector<int64_t> ia = BroadcastIndex(*dims, da), ib = BroadcastIndex(*dims, db);
    for (const auto& [op, f] : ops) {
      auto out = testing::RunOneNode(op, {{"a", a}, {"b", b}}, *dims, [](onnx::NodeProto&) {});
      ASSERT_TRUE(out.ok()) << op << ": " << out.status().message();
      ASSERT_EQ((*out)[0].dims, *dims);
      const std::vector<float>& y = (*out)[0].f32;
      ASSERT_EQ(static_cast<int64_t>(y.size()), CountElements(*dims));
      for (size_t i = 0; i < y.size(); ++i) {
        const float want =
            static_cast<float>(f(a.f32[ia.empty() ? 0 : ia[i]], b.f32[ib.empty() ? 0 : ib[i]]));
        ASSERT_EQ(y[i], want) << op << " " << DimsToString(da) << " by " << DimsToString(db)
                              << " element " << i;
      }
    }
  }
}

TEST(ExecutorTest, HasKernelDistinguishesUnknownOperators) {
  Node spec;
  spec.op = specs::OpKind::kRelu;
  EXPECT_TRUE(HasKernel(spec));
  Node softmax;
  softmax.op_type = "Softmax";
  EXPECT_TRUE(HasKernel(softmax));
  Node custom;
  custom.op_type = "Softmax";
  custom.domain = "com.example";
  EXPECT_FALSE(HasKernel(custom));
  Node unknown;
  unknown.op_type = "StringNormalizer";
  EXPECT_FALSE(HasKernel(unknown));
}

TEST(ExecutorTest, Float16ResultsAreRounded) {
  ModelBuilder b;
  b.Input("x", {3}, kFloat16).Output("y", {3}, kFloat16);
  b.Node("Exp", {"x"}, {"y"}, "exp");
  auto g = ImportOnnxBytes(b.Bytes(), "half");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto out = Execute(*g, {HostTensor::FromDoubles(kFloat16, {3}, {0.0, 1.0, 2.0})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  std::vector<double> v = (*out)[0].ToDoubles();
  EXPECT_EQ(v[0], 1.0);
  EXPECT_EQ(v[1], RoundToFloat16(std::exp(1.0)));
  EXPECT_NE(v[1], std::exp(1.0));
}

}  // namespace
}  // namespace verisub::runtime
