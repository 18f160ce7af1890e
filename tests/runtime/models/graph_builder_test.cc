// GraphBuilder: fresh names, seeded weights, shared scalars and the model header.
#include "runtime/models/graph_builder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "runtime/models/model_io.h"
#include "runtime/models/models.h"

namespace verisub::runtime::models {
namespace {

std::vector<float> Floats(const onnx::TensorProto& t) {
  std::vector<float> v(t.raw_data().size() / sizeof(float));
  std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
  return v;
}

TEST(GraphBuilderTest, NamesAreFreshPerHint) {
  GraphBuilder b("g", 1);
  const std::string x = b.AddInput("x", {1, 4});
  const std::string r0 = b.AddNode("Relu", {x});
  const std::string r1 = b.AddNode("Relu", {r0});
  const std::string t0 = b.AddNode("Tanh", {r1});
  EXPECT_EQ(r0, "relu_0");
  EXPECT_EQ(r1, "relu_1");
  EXPECT_EQ(t0, "tanh_0");
  b.AddOutput(t0, {1, 4});
  const onnx::ModelProto m = std::move(b).Finish();
  ASSERT_EQ(m.graph().node_size(), 3);
  EXPECT_EQ(m.graph().node(2).input(0), r1);
  EXPECT_EQ(m.opset_import(0).version(), kOpsetVersion);
  EXPECT_EQ(m.opset_import(0).domain(), "");
  EXPECT_EQ(m.ir_version(), 8);
  EXPECT_TRUE(ValidateModel(m).ok()) << ValidateModel(m).ToString();
}

TEST(GraphBuilderTest, UniformWeightsStayInRangeAndFollowTheSeed) {
  auto draw = [](uint64_t seed) {
    GraphBuilder b("g", seed);
    b.AddUniformWeight("w", {64, 32}, -0.5f, 0.25f);
    return std::move(b).Finish();
  };
  const onnx::ModelProto a = draw(7);
  const onnx::TensorProto& w = a.graph().initializer(0);
  EXPECT_EQ(w.data_type(), onnx::TensorProto::FLOAT);
  ASSERT_EQ(w.dims_size(), 2);
  const std::vector<float> values = Floats(w);
  ASSERT_EQ(values.size(), 64u * 32u);
  float lo = 1, hi = -1;
  std::set<float> distinct;
  for (float v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    distinct.insert(v);
  }
  EXPECT_GE(lo, -0.5f);
  EXPECT_LT(hi, 0.25f);
  EXPECT_LT(lo, -0.45f);  // the whole range is used
  EXPECT_GT(hi, 0.2f);
  EXPECT_GT(distinct.size(), values.size() * 9 / 10);
  EXPECT_EQ(draw(7).graph().initializer(0).raw_data(), w.raw_data());
  EXPECT_NE(draw(8).graph().initializer(0).raw_data(), w.raw_data());
}

TEST(GraphBuilderTest, SharedScalarsAreCreatedOncePerValue) {
  GraphBuilder b("g", 1);
  const std::string zero = b.SharedScalar(0.0f);
  const std::string six = b.SharedScalar(6.0f);
  EXPECT_EQ(b.SharedScalar(0.0f), zero);
  EXPECT_NE(six, zero);
  EXPECT_NE(b.SharedScalar(-0.0f), zero);  // a different bit pattern is a different constant
  const onnx::ModelProto m = std::move(b).Finish();
  ASSERT_EQ(m.graph().initializer_size(), 3);
  EXPECT_EQ(m.graph().initializer(1).dims_size(), 0);  // 0-d scalar
  EXPECT_EQ(Floats(m.graph().initializer(1)), std::vector<float>{6.0f});
}

TEST(GraphBuilderTest, Int64InitializerHoldsValues) {
  GraphBuilder b("g", 1);
  b.AddInt64s("shape", {1, 128, 12, 64});
  const onnx::ModelProto m = std::move(b).Finish();
  const onnx::TensorProto& t = m.graph().initializer(0);
  EXPECT_EQ(t.data_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(std::vector<int64_t>(t.int64_data().begin(), t.int64_data().end()),
            (std::vector<int64_t>{1, 128, 12, 64}));
}

}  // namespace
}  // namespace verisub::runtime::models
