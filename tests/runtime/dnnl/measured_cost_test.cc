// The measured CPU cost model: instances are timed once and answered from the table afterwards,
// larger work costs more, the missing-entry policies hold, the nodes oneDNN fuses into a
// convolution are the ones priced at nothing, and the lower bounds stay below the times.
#include "runtime/dnnl/measured_cost.h"

#include <gtest/gtest.h>

#include "runtime/spec_graph_builder.h"
#include "specs/registry.h"

namespace verisub::runtime {
namespace {

OpCostQuery Conv(int64_t c, int64_t hw) {
  OpCostQuery q;
  q.op = specs::OpKind::kConv2d;
  q.params = specs::GetOp(q.op).DefaultParams();
  EXPECT_TRUE(
      specs::ParseParamValue(*specs::GetOp(q.op).FindParam("padding"), "same", &q.params).ok());
  q.inputs = {specs::Shape({1, c, hw, hw}), specs::Shape({c, c, 3, 3})};
  q.outputs = {specs::Shape({1, c, hw, hw})};
  q.weight_inputs = 2;
  return q;
}

TEST(MeasuredCostTest, MeasuresOnceThenAnswersFromTheTable) {
  MeasuredCpuCostModel model({}, CostTable(ThisMachine(1)));
  auto small = model.OpTimeUs(Conv(8, 14));
  auto large = model.OpTimeUs(Conv(64, 28));  // 256x the arithmetic
  ASSERT_TRUE(small.ok()) << small.status().message();
  ASSERT_TRUE(large.ok()) << large.status().message();
  EXPECT_GT(*small, 0);
  EXPECT_GT(*large, *small);
  auto again = model.OpTimeUs(Conv(8, 14));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *small);
  MeasuredCpuCostModel::Stats s = model.stats();
  EXPECT_EQ(s.measured, 2);
  EXPECT_EQ(s.hits, 1);
  EXPECT_GT(model.SecondsMeasuring(), 0);
  CostTable t = model.table();
  EXPECT_EQ(t.size(), 2);
  EXPECT_EQ(t.Find(Conv(8, 14).Key()), *small);
  EXPECT_NE(Conv(8, 14).Key().find(" w=2 "), std::string::npos);
}

TEST(MeasuredCostTest, MissingEntriesFollowThePolicy) {
  MeasureOptions error;
  error.missing = MissingCost::kError;
  MeasuredCpuCostModel strict(error, CostTable(ThisMachine(1)));
  auto e = strict.OpTimeUs(Conv(8, 14));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("no entry for 'conv2d["), std::string::npos);

  MeasureOptions analytic;
  analytic.missing = MissingCost::kAnalytic;
  CostTable known(ThisMachine(1));
  known.Insert(Conv(8, 14).Key(), 123.0, 5);
  MeasuredCpuCostModel estimating(analytic, known);
  EXPECT_EQ(*estimating.OpTimeUs(Conv(8, 14)), 123.0);  // the table's entry, whatever it says
  auto est = estimating.OpTimeUs(Conv(16, 14));
  ASSERT_TRUE(est.ok());
  EXPECT_GT(*est, 0);
  EXPECT_EQ(estimating.stats().estimated, 1);
  EXPECT_EQ(estimating.table().size(), 1);  // estimates are not stored

  OpCostQuery opaque;
  opaque.opaque_type = "Softmax";
  opaque.inputs = {specs::Shape({1, 10})};
  opaque.outputs = {specs::Shape({1, 10})};
  EXPECT_TRUE(strict.OpTimeUs(opaque).ok());  // estimated: nothing to rebuild it from
  EXPECT_FALSE(strict.Measure(opaque, nullptr).ok());
  EXPECT_FALSE(ParseMissingCost("guess").ok());
}

TEST(MeasuredCostTest, NodesFusedIntoAConvolutionAreAbsorbed) {
  SpecGraphBuilder b;
  int x = b.Input("x", {1, 8, 8, 8});
  auto c = b.Ops("conv2d[padding=same]", {x, b.Weight("w", {8, 8, 3, 3}, 1)});
  ASSERT_TRUE(c.ok());
  auto bias = b.Ops("bias_add[axis=1]", {(*c)[0], b.Weight("b", {8}, 2)});
  ASSERT_TRUE(bias.ok());
  auto relu = b.Ops("relu", {(*bias)[0]});
  ASSERT_TRUE(relu.ok());
  auto sig = b.Ops("sigmoid", {x});  // reads the input: no kernel to join
  ASSERT_TRUE(sig.ok());
  b.Output((*relu)[0]);
  b.Output((*sig)[0]);
  auto g = b.Finish();
  ASSERT_TRUE(g.ok()) << g.status().message();
  MeasuredCpuCostModel model({}, CostTable(ThisMachine(1)));
  EXPECT_TRUE(model.PricesFusion());
  EXPECT_EQ(model.AbsorbedNodes(*g), (std::vector<char>{0, 1, 1, 0}));
}

// A channel split of one image runs as views of its input inside a model (the outputs of
// convolutions merged along output channels): free, where timed alone it would be a copy. Not
// for two images (each piece strided) nor along rows that do not cut the buffer in pieces.
TEST(MeasuredCostTest, ContiguousSplitsAndSlicesAreFree) {
  MeasureOptions error;
  error.missing = MissingCost::kError;  // a free instance is not looked up at all
  MeasuredCpuCostModel strict(error, CostTable(ThisMachine(1)));
  auto split = [](int64_t n, int64_t c0, int64_t c1) {
    OpCostQuery q;
    q.op = specs::OpKind::kSplit;
    q.params = specs::GetOp(q.op).DefaultParams();
    q.params[0] = 1;  // axis
    q.inputs = {specs::Shape({n, c0 + c1, 8, 8})};
    q.outputs = {specs::Shape({n, c0, 8, 8}), specs::Shape({n, c1, 8, 8})};
    return q;
  };
  auto one = strict.OpTimeUs(split(1, 64, 96));
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(*one, 0.0);
  EXPECT_FALSE(strict.OpTimeUs(split(2, 64, 96)).ok());  // not free: asked of the (empty) table
  MeasuredCpuCostModel model({}, CostTable(ThisMachine(1)));
  auto two = model.OpTimeUs(split(2, 64, 96));
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_GT(*two, 0.0);
}

OpCostQuery Matmul(int64_t m, int64_t k, int64_t n) {
  OpCostQuery q;
  q.op = specs::OpKind::kMatmul;
  q.params = specs::GetOp(q.op).DefaultParams();
  q.inputs = {specs::Shape({m, k}), specs::Shape({k, n})};
  q.outputs = {specs::Shape({m, n})};
  q.weight_inputs = 2;
  return q;
}

TEST(MeasuredCostTest, MinFlopsCountsOneTapPerInputChannel) {
  EXPECT_EQ(MinFlops(Matmul(3, 4, 5)), 2.0 * 3 * 5 * 4);
  EXPECT_EQ(MinFlops(Conv(8, 14)), 2.0 * 8 * 14 * 14 * 8);  // the 3x3 window as one tap
  OpCostQuery opaque;
  opaque.opaque_type = "Neg";
  opaque.inputs = opaque.outputs = {specs::Shape({1000})};
  EXPECT_EQ(MinFlops(opaque), 0);
}

// The bound is what a search rejects candidates on without timing them: it must stay below what
// the kernels take, on whatever CPU this runs, one thread or more.
TEST(MeasuredCostTest, LowerBoundsStayBelowTheMeasuredTimes) {
  for (int threads : {1, 2}) {
    MeasureOptions o;
    o.threads = threads;
    MeasuredCpuCostModel model(o, CostTable(ThisMachine(threads)));
    for (const OpCostQuery& q :
         {Matmul(256, 256, 256), Matmul(64, 1024, 512), Conv(64, 28), Conv(128, 14)}) {
      const double bound = model.LowerBoundUs(q);
      auto t = model.OpTimeUs(q);
      ASSERT_TRUE(t.ok()) << t.status().message();
      EXPECT_GT(bound, 0) << q.Key();
      EXPECT_LT(bound, *t) << q.Key() << " at " << threads << " thread(s)";
    }
    OpCostQuery half = Matmul(256, 256, 256);
    half.bytes_per_element = 2;  // estimated, never timed: no bound needed
    EXPECT_EQ(model.LowerBoundUs(half), 0);
  }
  // A product no search should ever time (9604 x 9604 x 9604: seconds on any CPU) is bounded
  // far above a model's milliseconds.
  MeasuredCpuCostModel model({}, CostTable(ThisMachine(1)));
  EXPECT_GT(model.LowerBoundUs(Matmul(9604, 9604, 9604)), 1e6);
  EXPECT_EQ(model.stats().measured, 0);
}

TEST(MeasuredCostTest, MachineHeaderNamesTheEngine) {
  CostTableHeader h = ThisMachine(2);
  EXPECT_EQ(h.engine, "onednn");
  EXPECT_EQ(h.threads, 2);
  EXPECT_FALSE(h.engine_version.empty());
  EXPECT_FALSE(h.isa.empty());
  EXPECT_FALSE(h.cpu_model.empty());
}

}  // namespace
}  // namespace verisub::runtime
