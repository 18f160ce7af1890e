// The sub-operators' reference kernels (specs/ops/: neg, recip, log, sqrt, abs, ewmax, ewmin,
// select, reduce_sum, reduce_max, broadcast) against hand-computed results, their shape rules'
// errors, and the modular semantics' view of them that the fingerprints rely on.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "specs/ops/elementwise.h"
#include "tests/specs/test_util.h"

namespace verisub::specs {
namespace {

using testing::ExpectData;
using testing::MakeTensor;
using testing::Out;
using testing::RunOp;

// A [2,3] matrix with distinct values of both signs: rows (1, -2, 3) and (-4, 0.5, 6).
Tensor<double> Matrix() { return MakeTensor({2, 3}, {1, -2, 3, -4, 0.5, 6}); }

TEST(SubopKernelsTest, Unary) {
  ExpectData(Out("neg", {Matrix()}), {2, 3}, {-1, 2, -3, 4, -0.5, -6});
  ExpectData(Out("recip", {Matrix()}), {2, 3}, {1, -0.5, 1.0 / 3, -0.25, 2, 1.0 / 6});
  ExpectData(Out("abs", {Matrix()}), {2, 3}, {1, 2, 3, 4, 0.5, 6});
  const Tensor<double> positive = MakeTensor({3}, {1, 4, 0.25});
  ExpectData(Out("sqrt", {positive}), {3}, {1, 2, 0.5});
  ExpectData(Out("log", {MakeTensor({3}, {1, M_E, 1 / M_E})}), {3}, {0, 1, -1});
}

TEST(SubopKernelsTest, MaxMinAndSelect) {
  const Tensor<double> b = MakeTensor({2, 3}, {0, 0, 5, -5, 1, 6});
  ExpectData(Out("ewmax", {Matrix(), b}), {2, 3}, {1, 0, 5, -4, 1, 6});
  ExpectData(Out("ewmin", {Matrix(), b}), {2, 3}, {0, -2, 3, -5, 0.5, 6});
  const Tensor<double> mask = MakeTensor({2, 3}, {1, 0, 1, 0, 0, 1});
  ExpectData(Out("select", {mask, Matrix(), b}), {2, 3}, {1, 0, 3, -5, 1, 6});
  // Any other mask value blends: the spec's b + m (a - b).
  ExpectData(Out("select", {MakeTensor({1}, {0.25}), MakeTensor({1}, {8}), MakeTensor({1}, {4})}),
             {1}, {5});
}

TEST(SubopKernelsTest, ReductionsKeepTheAxisAsOne) {
  ExpectData(Out("reduce_sum[axis=1]", {Matrix()}), {2, 1}, {2, 2.5});
  ExpectData(Out("reduce_sum[axis=0]", {Matrix()}), {1, 3}, {-3, -1.5, 9});
  ExpectData(Out("reduce_max[axis=1]", {Matrix()}), {2, 1}, {3, 6});
  ExpectData(Out("reduce_max[axis=0]", {Matrix()}), {1, 3}, {1, 0.5, 6});
  // The middle axis of a [2,2,2] tensor (values 0..7): pairs two apart.
  Tensor<double> cube = MakeTensor({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  ExpectData(Out("reduce_sum[axis=1]", {cube}), {2, 1, 2}, {2, 4, 10, 12});
  ExpectData(Out("reduce_max[axis=2]", {cube}), {2, 2, 1}, {1, 3, 5, 7});
}

TEST(SubopKernelsTest, BroadcastRepeatsAnAxisOfOne) {
  ExpectData(Out("broadcast[axis=1,extent=4]", {MakeTensor({2, 1}, {7, -1})}), {2, 4},
             {7, 7, 7, 7, -1, -1, -1, -1});
  ExpectData(Out("broadcast[axis=0,extent=2]", {MakeTensor({1, 3}, {1, 2, 3})}), {2, 3},
             {1, 2, 3, 1, 2, 3});
  ExpectData(Out("broadcast[axis=1,extent=2]", {MakeTensor({2, 1, 2}, {1, 2, 3, 4})}), {2, 2, 2},
             {1, 2, 1, 2, 3, 4, 3, 4});
}

TEST(SubopKernelsTest, ShapeRulesSayWhatIsWrong) {
  auto wide = RunOp("broadcast[axis=1,extent=4]", {Matrix()});
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.status().message().find("not 1"), std::string::npos) << wide.status().message();
  auto axis = RunOp("reduce_sum[axis=3]", {Matrix()});
  ASSERT_FALSE(axis.ok());
  EXPECT_NE(axis.status().message().find("'axis'=3"), std::string::npos) << axis.status().message();
  auto mask = RunOp("select", {MakeTensor({3}, {1, 0, 1}), Matrix(), Matrix()});
  ASSERT_FALSE(mask.ok());
  EXPECT_NE(mask.status().message().find("the mask"), std::string::npos) << mask.status().message();
}

// The fingerprints see the identities the sub-operator rules need: recip is the field inverse
// (multiplicative, an involution), |x| = max(x, -x) is even and min(a, b) = -max(-a, -b).
TEST(SubopKernelsTest, ModularSemanticsKeepsTheIdentitiesTheRulesNeed) {
  const ModIntSemantics m;
  std::mt19937_64 rng(7);
  auto recip = [&](uint32_t x) { return m.Activate(Activation::kRecip, x); };
  for (int i = 0; i < 100; ++i) {
    const uint32_t a = m.FromInt(static_cast<int64_t>(rng() >> 2));
    const uint32_t b = m.FromInt(static_cast<int64_t>(rng() >> 2));
    EXPECT_EQ(recip(m.Mul(a, b)), m.Mul(recip(a), recip(b)));
    EXPECT_EQ(recip(recip(a)), a);
    EXPECT_EQ(m.Mul(recip(a), a), a == 0 ? 0u : 1u);
    // Softmax's normalisation stays the fixed polynomial (the operator-level fingerprints).
    EXPECT_NE(m.Reciprocal(a), recip(a));
    EXPECT_EQ(m.Max(a, m.Neg(a)), m.Max(m.Neg(a), a));
    // log and sqrt are maps of their own.
    EXPECT_NE(m.Activate(Activation::kLog, a), m.Activate(Activation::kSqrt, a));
    EXPECT_NE(m.Activate(Activation::kLog, a), m.Activate(Activation::kExp, a));
  }
  EXPECT_EQ(ops::UnaryActivation(OpKind::kRecip), Activation::kRecip);
  EXPECT_EQ(ops::UnaryActivation(OpKind::kLog), Activation::kLog);
  EXPECT_EQ(ops::UnaryActivation(OpKind::kNeg), std::nullopt);
}

}  // namespace
}  // namespace verisub::specs
