// Reference kernels of ScatterND and Einsum against values worked out by hand, their errors on
// bad operands, and Einsum's forms (implicit output, ellipsis, broadcast, a trace).
#include <gtest/gtest.h>

#include <functional>

#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::ModelBuilder;

HostTensor Floats(std::vector<int64_t> dims, std::vector<double> v) {
  return HostTensor::FromDoubles(kFloat, std::move(dims), v);
}

StatusOr<std::vector<HostTensor>> RunOne(const std::string& op,
                                         const std::vector<std::pair<std::string, HostTensor>>& in,
                                         std::vector<int64_t> out_dims,
                                         const std::function<void(onnx::NodeProto&)>& attrs) {
  return testing::RunOneNode(op, in, std::move(out_dims), attrs);
}

TEST(IndexKernelsTest, ScatterNDWritesSlicesAndReduces) {
  const HostTensor data = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor rows = HostTensor::FromInts(kInt64, {1, 1}, {1});
  const HostTensor update = Floats({1, 3}, {10, 20, 30});
  auto none = RunOne("ScatterND", {{"d", data}, {"i", rows}, {"u", update}}, {2, 3},
                     [](onnx::NodeProto&) {});
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ((*none)[0].ToDoubles(), (std::vector<double>{1, 2, 3, 10, 20, 30}));
  // Element indices, one negative, with reduction add (opset 16).
  const HostTensor cells = HostTensor::FromInts(kInt64, {2, 2}, {0, 2, -1, 0});
  auto add = RunOne("ScatterND", {{"d", data}, {"i", cells}, {"u", Floats({2}, {100, 200})}},
                    {2, 3}, [](onnx::NodeProto& n) { testing::SetString(n, "reduction", "add"); });
  ASSERT_TRUE(add.ok()) << add.status().message();
  EXPECT_EQ((*add)[0].ToDoubles(), (std::vector<double>{1, 2, 103, 204, 5, 6}));
  auto out_of_range = RunOne(
      "ScatterND", {{"d", data}, {"i", HostTensor::FromInts(kInt64, {1, 1}, {2})}, {"u", update}},
      {2, 3}, [](onnx::NodeProto&) {});
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("index out of range"), std::string::npos)
      << out_of_range.status().message();
}

TEST(IndexKernelsTest, EinsumComputesItsEquations) {
  const HostTensor a = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor b = Floats({3, 2}, {1, 0, 0, 1, 1, 1});
  auto eq = [](const char* e) {
    return [e](onnx::NodeProto& n) { testing::SetString(n, "equation", e); };
  };
  // A matrix product, with spaces (MaxViT's exporter writes them).
  auto mm = RunOne("Einsum", {{"a", a}, {"b", b}}, {2, 2}, eq("i k , k j -> i j"));
  ASSERT_TRUE(mm.ok()) << mm.status().message();
  EXPECT_EQ((*mm)[0].ToDoubles(), (std::vector<double>{4, 5, 10, 11}));
  // Implicit output: the letters used once, alphabetically ("ij,jk" gives ik).
  auto implicit = RunOne("Einsum", {{"a", a}, {"b", b}}, {2, 2}, eq("ij,jk"));
  ASSERT_TRUE(implicit.ok()) << implicit.status().message();
  EXPECT_EQ((*implicit)[0].ToDoubles(), (*mm)[0].ToDoubles());
  // A transpose, a sum over everything, the trace of a square matrix.
  auto t = RunOne("Einsum", {{"a", a}}, {3, 2}, eq("ij->ji"));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].ToDoubles(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  auto sum = RunOne("Einsum", {{"a", a}}, {}, eq("ij->"));
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ((*sum)[0].ToDoubles(), (std::vector<double>{21}));
  auto trace = RunOne("Einsum", {{"m", Floats({2, 2}, {1, 2, 3, 4})}}, {}, eq("ii->"));
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ((*trace)[0].ToDoubles(), (std::vector<double>{5}));
  // A batched product with an ellipsis broadcast over the batch.
  const HostTensor x = Floats({2, 1, 2}, {1, 2, 3, 4});
  const HostTensor y = Floats({2, 1}, {10, 100});
  auto batched = RunOne("Einsum", {{"p", x}, {"r", y}}, {2, 1, 1}, eq("...ij,jk->...ik"));
  ASSERT_TRUE(batched.ok()) << batched.status().message();
  EXPECT_EQ((*batched)[0].ToDoubles(), (std::vector<double>{210, 430}));
  auto bad = RunOne("Einsum", {{"a", a}, {"b", a}}, {2, 2}, eq("ik,kj->ij"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("subscript 'k'"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace verisub::runtime
