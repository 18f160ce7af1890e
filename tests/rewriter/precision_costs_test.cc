// Precision as a generalized layout: the DP picks bfloat16 where a (synthetic) cost table makes
// it cheaper, every such assignment is valid in formats, the emulated execution rounds what the
// assignment stores in bfloat16, and the accuracy budget reverts values until it holds.
#include "rewriter/precision_costs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "rewriter/layout_costs.h"
#include "rewriter/verify_outputs.h"
#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "tests/rewriter/layout_test_problems.h"
#include "tests/runtime/test_models.h"

namespace verisub::rewriter {
namespace {

using testing::ExpectValidAssignment;

class PrecisionTest : public ::testing::Test {
 protected:
  PrecisionTest()
      : device_(*runtime::DevicePreset("cpu-2core")),
        model_(device_),
        float32_(&model_, device_),
        bf16_(&float32_, PrecisionFactors()) {
    auto g = runtime::ImportOnnxFile("data/models/small_resnet.onnx");
    EXPECT_TRUE(g.ok()) << g.status().message();
    if (g.ok()) graph_ = std::move(*g);
    space_.precisions = {Precision::kBf16};
  }

  int Reduced(const LayoutAssignment& a) const {
    int n = 0;
    for (Precision p : a.value_precisions) n += p != Precision::kF32;
    return n;
  }

  runtime::DeviceDescription device_;
  runtime::AnalyticCostModel model_;
  AnalyticLayoutCosts float32_;
  ReducedPrecisionCosts bf16_;
  runtime::Graph graph_;
  LayoutSpaceOptions space_;
};

TEST_F(PrecisionTest, DpPicksTheCheaperPrecisionAndStaysValid) {
  LayoutDpReport plain_report, report;
  auto f32 = AssignLayouts(graph_, float32_, LayoutDpOptions(), &plain_report, space_);
  ASSERT_TRUE(f32.ok()) << f32.status().message();
  EXPECT_EQ(Reduced(*f32), 0) << "a float32 source offers no reduced precision";
  auto a = AssignLayouts(graph_, bf16_, LayoutDpOptions(), &report, space_);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_GT(Reduced(*a), 0);
  EXPECT_LT(a->cost_us, f32->cost_us);
  ExpectValidAssignment("small_resnet bf16", graph_, bf16_, *a);
  // Graph inputs are stored float32 and outputs delivered float32 (converted when stored bf16).
  for (int v : graph_.inputs()) EXPECT_EQ(a->value_precisions[v], Precision::kF32);

  // Casts dearer than anything bfloat16 saves: the DP keeps float32.
  PrecisionFactors dear;
  dear.cast_launch_us = 1e9;
  ReducedPrecisionCosts costly(&float32_, dear);
  auto none = AssignLayouts(graph_, costly, LayoutDpOptions(), nullptr, space_);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(Reduced(*none), 0);
  EXPECT_NEAR(none->cost_us, f32->cost_us, 1e-9 * f32->cost_us);
}

TEST_F(PrecisionTest, EmulationRoundsWhatIsStoredReduced) {
  std::mt19937_64 rng(3);
  auto in = RandomInputs(graph_, &rng);
  ASSERT_TRUE(in.ok());
  auto ref = runtime::Execute(graph_, *in);
  ASSERT_TRUE(ref.ok());
  auto f32 = AssignLayouts(graph_, float32_, LayoutDpOptions(), nullptr, space_);
  ASSERT_TRUE(f32.ok());
  auto same = ExecuteInPrecisions(graph_, *f32, *in);
  ASSERT_TRUE(same.ok()) << same.status().message();
  ASSERT_EQ(same->size(), ref->size());
  for (size_t k = 0; k < ref->size(); ++k) EXPECT_EQ((*same)[k].ToDoubles(), (*ref)[k].ToDoubles());

  auto a = AssignLayouts(graph_, bf16_, LayoutDpOptions(), nullptr, space_);
  ASSERT_TRUE(a.ok());
  auto reduced = ExecuteInPrecisions(graph_, *a, *in);
  ASSERT_TRUE(reduced.ok());
  double diff = 0;
  for (size_t k = 0; k < ref->size(); ++k) {
    auto x = (*reduced)[k].ToDoubles(), y = (*ref)[k].ToDoubles();
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) diff = std::max(diff, std::abs(x[i] - y[i]));
  }
  EXPECT_GT(diff, 0) << "bfloat16 storage changed nothing";
  EXPECT_LT(diff, 0.5) << "bfloat16 storage is not that coarse";

  LayoutAssignment wrong = *a;
  wrong.value_precisions.pop_back();
  EXPECT_FALSE(ExecuteInPrecisions(graph_, wrong, *in).ok());
}

TEST_F(PrecisionTest, BudgetRevertsUntilItHolds) {
  PrecisionBudget loose;
  loose.max_error = 1.0;
  PrecisionReport r;
  auto a = AssignLayoutsWithinBudget(graph_, bf16_, LayoutDpOptions(), space_, loose, &r);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(r.rounds, 1);
  EXPECT_GT(r.reduced_values, 0);
  EXPECT_EQ(r.reduced_values, Reduced(*a));
  EXPECT_LE(r.error, loose.max_error);
  EXPECT_GT(r.error, 0);
  EXPECT_LT(r.cost_us, r.float32_cost_us);
  EXPECT_DOUBLE_EQ(r.cost_us, a->cost_us);

  // Between the two: some values reverted, the rest within the budget.
  PrecisionBudget middle;
  middle.max_error = r.error / 4;
  PrecisionReport m;
  auto b = AssignLayoutsWithinBudget(graph_, bf16_, LayoutDpOptions(), space_, middle, &m);
  ASSERT_TRUE(b.ok());
  EXPECT_GT(m.rounds, 1);
  EXPECT_GT(m.reverted_values, 0);
  EXPECT_LE(m.error, middle.max_error);
  EXPECT_GE(m.cost_us, r.cost_us);
  EXPECT_LE(m.cost_us, m.float32_cost_us);

  // No error allowed: float32 throughout, at the float32 optimum.
  PrecisionBudget exact;
  exact.max_error = 0;
  PrecisionReport e;
  auto c = AssignLayoutsWithinBudget(graph_, bf16_, LayoutDpOptions(), space_, exact, &e);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(Reduced(*c), 0);
  EXPECT_GT(e.reverted_values, 0);
  EXPECT_DOUBLE_EQ(c->cost_us, e.float32_cost_us);
}

// With a runner (a backend running each assignment), the budget is checked on its outputs: the
// float32 assignment's are the reference, each reduced one is run there, never emulated. A runner
// whose reduced outputs are off by more than the budget makes the budget revert values, as an
// emulated error would.
TEST_F(PrecisionTest, BudgetCheckedOnTheRunnersOutputs) {
  int runs = 0, float32_runs = 0;
  double scale = 1.0;  // the runner's reduced outputs: the emulated ones, scaled
  AssignmentRunner run = [&](const LayoutAssignment& a,
                             const std::vector<runtime::HostTensor>& inputs)
      -> StatusOr<std::vector<runtime::HostTensor>> {
    ++runs;
    if (Reduced(a) == 0) {
      ++float32_runs;
      return runtime::Execute(graph_, inputs);
    }
    auto out = ExecuteInPrecisions(graph_, a, inputs);
    if (!out.ok()) return out;
    for (runtime::HostTensor& t : *out) {
      std::vector<double> v = t.ToDoubles();
      for (double& x : v) x *= scale;
      t = runtime::HostTensor::FromDoubles(t.elem_type, t.dims, v);
    }
    return out;
  };
  PrecisionBudget budget;
  budget.max_error = 0.05;
  PrecisionReport r;
  auto a = AssignLayoutsWithinBudget(graph_, bf16_, LayoutDpOptions(), space_, budget, &r, run);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_TRUE(r.measured_on_backend);
  EXPECT_EQ(float32_runs, 1);
  EXPECT_EQ(runs, 1 + r.rounds);
  EXPECT_GT(r.reduced_values, 0);
  // The same budget on outputs 10% off: the runner's error decides, values are reverted.
  scale = 1.1;
  runs = float32_runs = 0;
  PrecisionReport off;
  auto b = AssignLayoutsWithinBudget(graph_, bf16_, LayoutDpOptions(), space_, budget, &off, run);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_GT(off.rounds, 1);
  EXPECT_GT(off.reverted_values, 0);
  EXPECT_EQ(Reduced(*b), 0) << "every reduced assignment is 10% off: float32 in the end";
  PrecisionReport emulated;
  ASSERT_TRUE(
      AssignLayoutsWithinBudget(graph_, bf16_, LayoutDpOptions(), space_, budget, &emulated).ok());
  EXPECT_FALSE(emulated.measured_on_backend);
}

// A convolution's activation made into indices (relu, times 3, a Cast to int64) beside another
// convolution reading it: under a loose budget the values the indices are made of stay float32
// (the activation, its product and the convolution's output, where the walk back stops), while
// values before the convolution go bfloat16; a runner whose reduced run fails leaves float32
// throughout and says why, instead of failing the session.
TEST_F(PrecisionTest, IndicesAreMadeOfFloat32ValuesAndAFailedReducedRunKeepsFloat32) {
  runtime::testing::ModelBuilder b;
  b.Input("x", {1, 16, 12, 12})
      .Output("y", {1, 16, 12, 12})
      .Output("z", {1, 16, 12, 12}, runtime::kInt64);
  b.RandomWeight("w0", {16, 16, 3, 3}, 1).RandomWeight("w1", {16, 16, 3, 3}, 2);
  b.RandomWeight("w2", {16, 16, 3, 3}, 3);
  b.Weight("three", runtime::HostTensor::FromDoubles(runtime::kFloat, {1}, {3}));
  auto conv = [&](const char* w, const char* in, const char* out) {
    runtime::testing::SetInts(b.Node("Conv", {in, w}, {out}, out), "pads", {1, 1, 1, 1});
  };
  conv("w0", "x", "c0");
  b.Node("Relu", {"c0"}, {"r0"}, "relu0");
  conv("w1", "r0", "c1");
  b.Node("Relu", {"c1"}, {"r1"}, "relu1");
  conv("w2", "r1", "y");
  b.Node("Mul", {"r1", "three"}, {"m"}, "times3");
  runtime::testing::SetInt(b.Node("Cast", {"m"}, {"z"}, "to_index"), "to", runtime::kInt64);
  auto g = runtime::ImportOnnxBytes(b.Bytes(), "indices");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto value = [&](const std::string& name) {
    for (int v = 0; v < g->num_values(); ++v)
      if (g->value(v).name == name) return v;
    ADD_FAILURE() << "no value " << name;
    return 0;
  };
  PrecisionBudget loose;
  loose.max_error = 1.0;
  PrecisionReport r;
  auto a = AssignLayoutsWithinBudget(*g, bf16_, LayoutDpOptions(), space_, loose, &r);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_GT(Reduced(*a), 0);
  EXPECT_EQ(r.exact_values, 3);
  for (const char* name : {"c1", "r1", "m"})
    EXPECT_EQ(a->value_precisions[value(name)], Precision::kF32) << name;
  EXPECT_TRUE(r.refused.empty()) << r.refused;

  AssignmentRunner failing = [&](const LayoutAssignment& assignment,
                                 const std::vector<runtime::HostTensor>& inputs)
      -> StatusOr<std::vector<runtime::HostTensor>> {
    if (Reduced(assignment) > 0) return InvalidArgument("index 1000 out of range");
    return runtime::Execute(*g, inputs);
  };
  PrecisionReport f;
  auto kept = AssignLayoutsWithinBudget(*g, bf16_, LayoutDpOptions(), space_, loose, &f, failing);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(Reduced(*kept), 0);
  EXPECT_NE(f.refused.find("index 1000 out of range"), std::string::npos) << f.refused;
  EXPECT_DOUBLE_EQ(kept->cost_us, f.float32_cost_us);
}

TEST(PrecisionFactorsTest, ParsesAndRefuses) {
  auto f = ParsePrecisionFactors("compute=0.4,cast_gbps=20");
  ASSERT_TRUE(f.ok());
  EXPECT_DOUBLE_EQ(f->compute_factor, 0.4);
  EXPECT_DOUBLE_EQ(f->memory_factor, PrecisionFactors().memory_factor);
  EXPECT_DOUBLE_EQ(f->cast_gbps, 20);
  EXPECT_TRUE(ParsePrecisionFactors("").ok());
  for (const char* bad :
       {"speed=2", "compute", "compute=", "compute=0", "memory=-1", "memory=1x"}) {
    auto r = ParsePrecisionFactors(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace verisub::rewriter
