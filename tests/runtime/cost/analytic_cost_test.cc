// The analytic cost model: FLOP counts, memory traffic, launch overhead, fusion.
#include "runtime/cost/analytic_cost.h"

#include <gtest/gtest.h>

#include "specs/registry.h"

namespace verisub::runtime {
namespace {

OpCostQuery Query(const std::string& op, std::vector<specs::Shape> in,
                  std::vector<specs::Shape> out) {
  OpCostQuery q;
  const specs::OpSpec* spec = specs::FindOp(op);
  if (spec) {
    q.op = spec->kind;
    q.params = spec->DefaultParams();
  } else {
    q.opaque_type = op;
  }
  q.inputs = std::move(in);
  q.outputs = std::move(out);
  return q;
}

TEST(AnalyticCostTest, ConvAndMatmulFlops) {
  auto conv = EstimateWork(Query("conv2d", {{1, 64, 56, 56}, {128, 64, 3, 3}}, {{1, 128, 56, 56}}));
  ASSERT_TRUE(conv.ok());
  EXPECT_DOUBLE_EQ(conv->flops, 2.0 * 128 * 56 * 56 * 64 * 9);
  EXPECT_DOUBLE_EQ(conv->bytes, 4.0 * (64 * 56 * 56 + 128 * 64 * 9 + 128 * 56 * 56));
  auto mm = EstimateWork(Query("matmul", {{8, 128, 64}, {64, 32}}, {{8, 128, 32}}));
  ASSERT_TRUE(mm.ok());
  EXPECT_DOUBLE_EQ(mm->flops, 2.0 * 8 * 128 * 32 * 64);
}

TEST(AnalyticCostTest, FusedActivationIsCheaperThanASeparateKernel) {
  AnalyticCostModel m(*DevicePreset("v100"));
  OpCostQuery conv = Query("conv2d", {{1, 64, 56, 56}, {64, 64, 3, 3}}, {{1, 64, 56, 56}});
  OpCostQuery fused = conv;
  fused.params[3] = static_cast<int64_t>(specs::Activation::kRelu);
  auto t_conv = m.OpTimeUs(conv), t_fused = m.OpTimeUs(fused);
  auto t_relu = m.OpTimeUs(Query("relu", {{1, 64, 56, 56}}, {{1, 64, 56, 56}}));
  ASSERT_TRUE(t_conv.ok() && t_fused.ok() && t_relu.ok());
  EXPECT_DOUBLE_EQ(*t_fused, *t_conv);
  EXPECT_GT(*t_relu, m.device().launch_overhead_us);
  EXPECT_LT(*t_fused, *t_conv + *t_relu);
}

TEST(AnalyticCostTest, ConstantsAndReshapesAreFree) {
  AnalyticCostModel m(*DevicePreset("cpu-2core"));
  auto ones = m.OpTimeUs(Query("const_ones", {{4, 4}}, {{4, 4}}));
  OpCostQuery reshape = Query("reshape", {{4, 4}}, {{16}});
  auto r = m.OpTimeUs(reshape);
  ASSERT_TRUE(ones.ok() && r.ok());
  EXPECT_EQ(*ones, 0.0);
  EXPECT_EQ(*r, 0.0);
}

TEST(AnalyticCostTest, OpaqueOperatorsAreMemoryBound) {
  AnalyticCostModel m(*DevicePreset("v100"));
  auto small = m.OpTimeUs(Query("Softmax", {{1, 128}}, {{1, 128}}));
  auto big = m.OpTimeUs(Query("Softmax", {{1, 12, 128, 128}}, {{1, 12, 128, 128}}));
  ASSERT_TRUE(small.ok() && big.ok());
  EXPECT_GT(*big, *small);
  EXPECT_NEAR(*small, m.device().launch_overhead_us, 0.01);
}

TEST(AnalyticCostTest, BadQueriesGiveErrors) {
  AnalyticCostModel m(*DevicePreset("v100"));
  auto bad = m.OpTimeUs(Query("conv2d", {{1, 4, 5, 5}}, {{1, 4, 5, 5}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("wrong number of shapes"), std::string::npos);
  EXPECT_FALSE(DevicePreset("tpu").ok());
  EXPECT_EQ(Query("relu", {{2}}, {{2}}).Key(), "relu[] [2] -> [2] @default");
}

}  // namespace
}  // namespace verisub::runtime
