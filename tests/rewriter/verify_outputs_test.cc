// verisub-run --check's comparison: tolerance by each output's scale, per-element figures beside
// it, NaN/infinity on one side only and shape mismatches always failing.
#include "rewriter/verify_outputs.h"

#include <gtest/gtest.h>

#include <cmath>

namespace verisub::rewriter {
namespace {

using runtime::HostTensor;
using runtime::kFloat;

std::vector<HostTensor> One(std::vector<int64_t> dims, const std::vector<double>& v) {
  return {HostTensor::FromDoubles(kFloat, std::move(dims), v)};
}

TEST(CompareWithReferenceTest, ErrorOnACancelledLogitIsMeasuredByTheOutputsScale) {
  // Logits of 1e6 and one near 0: an error of 1 on the small one is 1 per element of max(|ref|,1)
  // but 1e-6 of the output's scale (what float32 rounding of large sums gives).
  auto want = One({1, 3}, {1e6, -2e5, 0.5});
  auto got = One({1, 3}, {1e6, -2e5, 1.5});
  OutputAgreement a = CompareWithReference(got, want);
  EXPECT_DOUBLE_EQ(a.max_abs, 1.0);
  EXPECT_DOUBLE_EQ(a.max_rel, 1.0);
  EXPECT_NEAR(a.max_scaled, 1e-6, 1e-12);
  EXPECT_TRUE(a.Within(1e-4));
}

TEST(CompareWithReferenceTest, AnErrorOfTheOutputsOrderFails) {
  auto want = One({4}, {1e6, 2e6, -3e6, 0});
  auto got = One({4}, {1e6, 2e6, -3e6, 1e3});  // 1e3 off: 3.3e-4 of the scale
  OutputAgreement a = CompareWithReference(got, want);
  EXPECT_NEAR(a.max_scaled, 1e3 / 3e6, 1e-12);
  EXPECT_FALSE(a.Within(1e-4));
}

TEST(CompareWithReferenceTest, SmallOutputsUseAnAbsoluteToleranceOfOne) {
  // Below magnitude 1 the scale is 1: 5e-5 absolute passes, 2e-4 does not.
  auto want = One({2}, {1e-3, -1e-3});
  EXPECT_TRUE(CompareWithReference(One({2}, {1e-3 + 5e-5, -1e-3}), want).Within(1e-4));
  EXPECT_FALSE(CompareWithReference(One({2}, {1e-3 + 2e-4, -1e-3}), want).Within(1e-4));
}

TEST(CompareWithReferenceTest, EachOutputHasItsOwnScale) {
  // A large first output does not excuse an error in a small second one.
  std::vector<HostTensor> want = {HostTensor::FromDoubles(kFloat, {1}, {1e8}),
                                  HostTensor::FromDoubles(kFloat, {1}, {0.25})};
  std::vector<HostTensor> got = {HostTensor::FromDoubles(kFloat, {1}, {1e8}),
                                 HostTensor::FromDoubles(kFloat, {1}, {0.5})};
  OutputAgreement a = CompareWithReference(got, want);
  EXPECT_DOUBLE_EQ(a.max_scaled, 0.25);
  EXPECT_FALSE(a.Within(1e-4));
}

TEST(CompareWithReferenceTest, NonFiniteOnOneSideOnlyFails) {
  auto want = One({2}, {NAN, 1});
  EXPECT_FALSE(CompareWithReference(One({2}, {NAN, 1}), want).nonfinite_mismatch);
  EXPECT_TRUE(CompareWithReference(One({2}, {NAN, 1}), want).Within(1e-4));
  OutputAgreement a = CompareWithReference(One({2}, {0, 1}), want);
  EXPECT_TRUE(a.nonfinite_mismatch);
  EXPECT_FALSE(a.Within(1e-4));
  // A NaN where the reference is finite, and an infinity of the wrong sign.
  EXPECT_FALSE(CompareWithReference(One({2}, {1, NAN}), One({2}, {1, 1})).Within(1e-4));
  EXPECT_FALSE(CompareWithReference(One({1}, {-INFINITY}), One({1}, {INFINITY})).Within(1e-4));
}

TEST(CompareWithReferenceTest, ShapesOrCountsThatDifferFail) {
  auto want = One({2}, {1, 2});
  EXPECT_FALSE(CompareWithReference(One({1, 2}, {1, 2}), want).Within(1e-4));
  std::vector<HostTensor> two = {want[0], want[0]};
  EXPECT_FALSE(CompareWithReference(two, want).shapes_match);
}

}  // namespace
}  // namespace verisub::rewriter
