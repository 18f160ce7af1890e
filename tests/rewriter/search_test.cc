// Search: cost goes down, results are sound and deterministic, limits and stop reasons.
#include "rewriter/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "base/process_stats.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "rewriter/optimize.h"
#include "rewriter/rule_source.h"
#include "rewriter/verify_outputs.h"
#include "runtime/canonicalize.h"
#include "runtime/cost/analytic_cost.h"
#include "runtime/graph_hash.h"
#include "runtime/onnx_export.h"
#include "specs/ops/conv2d.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

using testing::CountOp;
using testing::GraphBuilder;

constexpr const char* kConv1 = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";

// An inception-like block: 1x1 and 3x3 convolutions of one input, each followed by relu, their
// outputs concatenated; a transpose pair on a side branch.
runtime::Graph InceptionBlock() {
  GraphBuilder b;
  int x = b.Input("x", {1, 8, 8, 8});
  int w1 = b.Weight("w1", {8, 8, 1, 1}, 1);
  int w3 = b.Weight("w3", {8, 8, 3, 3}, 2);
  int r1 = b.Op("relu", {b.Op(kConv1, {x, w1})});
  int r3 = b.Op("relu", {b.Op(kConv1, {x, w3})});
  b.Output(b.Op("concat[axis=1]", {r1, r3}));
  int m = b.Input("m", {6, 5});
  b.Output(b.Op("transpose[perm=[1,0]]", {b.Op("transpose[perm=[1,0]]", {m})}));
  return b.Finish();
}

OptimizeOptions Defaults() {
  OptimizeOptions o;
  o.search.time_limit_s = 0;       // deterministic tests
  o.check_after_each_pass = true;  // the checker between passes
  return o;
}

// The library leaves process state alone: it used to reset the kernel's resident-set high-water
// mark (/proc/self/clear_refs) at the start of every search, erasing the embedding process's own
// peak. A peak reached before the search must still be there after it, and in the report.
TEST(SearchTest, LeavesTheProcessPeakMemoryAlone) {
  {
    constexpr size_t kBytes = size_t{128} << 20;
    auto block = std::make_unique<char[]>(kBytes);
    std::memset(block.get(), 1, kBytes);
    ASSERT_EQ(block[kBytes / 2], 1);
  }  // freed: the resident set drops, the peak does not
  const int64_t peak_before = base::PeakRssBytes();
  ASSERT_GE(peak_before, int64_t{128} << 20);
  auto rules = testing::HandwrittenRules();
  runtime::Graph out;
  OptimizeReport report;
  ASSERT_TRUE(Optimize(InceptionBlock(), *rules, Defaults(), &out, &report).ok());
  EXPECT_GE(report.search.peak_rss_bytes, peak_before);
  EXPECT_GE(base::PeakRssBytes(), peak_before);
}

TEST(SearchTest, OptimizesAndStaysEquivalent) {
  auto rules = testing::HandwrittenRules();
  runtime::Graph g = InceptionBlock();
  runtime::Graph out;
  OptimizeReport report;
  Status st = Optimize(g, *rules, Defaults(), &out, &report);
  ASSERT_TRUE(st.ok()) << st.message();
  const SearchReport& s = report.search;
  EXPECT_LT(s.cost_after_us, s.cost_before_us);
  EXPECT_EQ(CountOp(out, "relu"), 0);
  EXPECT_EQ(CountOp(out, "transpose"), 0);
  // Enlarge the 1x1 kernel, merge the convolutions, drop concat(split(...)).
  EXPECT_EQ(CountOp(out, "conv2d"), 1);
  EXPECT_EQ(CountOp(out, "concat"), 0);
  EXPECT_EQ(CountOp(out, "split"), 0);
  EXPECT_GT(s.rewrite_steps, 0);
  EXPECT_FALSE(s.rules_applied.empty());
  EXPECT_EQ(s.stop, StopReason::kQueueEmpty);
  EXPECT_GT(s.graphs_explored, 1);
  VerifyReport vr;
  Status v = CompareOutputs(g, out, {}, &vr);
  EXPECT_TRUE(v.ok()) << v.message();
  EXPECT_EQ(vr.outputs_compared, 2);
}

// A best graph that saves less than min_gain of the input's cost is not taken: the input is the
// result, unchanged, and no rewrite is reported; at a min_gain below the saving it is taken.
TEST(SearchTest, AGainBelowMinGainLeavesTheInput) {
  auto rules = testing::HandwrittenRules();
  runtime::Graph g = InceptionBlock();
  runtime::Graph out;
  OptimizeReport report;
  ASSERT_TRUE(Optimize(g, *rules, Defaults(), &out, &report).ok());
  const double gain = 1 - report.search.cost_after_us / report.search.cost_before_us;
  ASSERT_GT(gain, 0.02);
  OptimizeOptions o = Defaults();
  o.search.min_gain = gain + 0.01;
  ASSERT_TRUE(Optimize(g, *rules, o, &out, &report).ok());
  EXPECT_EQ(report.search.rewrite_steps, 0);
  EXPECT_TRUE(report.search.rules_applied.empty());
  EXPECT_DOUBLE_EQ(report.search.cost_after_us, report.search.cost_before_us);
  EXPECT_EQ(CountOp(out, "conv2d"), 2);
  o.search.min_gain = gain / 2;
  ASSERT_TRUE(Optimize(g, *rules, o, &out, &report).ok());
  EXPECT_GT(report.search.rewrite_steps, 0);
  EXPECT_EQ(CountOp(out, "conv2d"), 1);
}

TEST(SearchTest, Deterministic) {
  auto rules = testing::HandwrittenRules();
  runtime::Graph g = InceptionBlock();
  runtime::Graph a, b;
  OptimizeReport ra, rb;
  ASSERT_TRUE(Optimize(g, *rules, Defaults(), &a, &ra).ok());
  ASSERT_TRUE(Optimize(g, *rules, Defaults(), &b, &rb).ok());
  EXPECT_EQ(runtime::StructuralHash(a), runtime::StructuralHash(b));
  EXPECT_EQ(ra.search.cost_after_us, rb.search.cost_after_us);
  EXPECT_EQ(ra.search.graphs_explored, rb.search.graphs_explored);
  EXPECT_EQ(ra.search.graphs_generated, rb.search.graphs_generated);
  ASSERT_EQ(ra.search.rules_applied.size(), rb.search.rules_applied.size());
  for (size_t i = 0; i < ra.search.rules_applied.size(); ++i) {
    EXPECT_EQ(ra.search.rules_applied[i].id, rb.search.rules_applied[i].id);
    EXPECT_EQ(ra.search.rules_applied[i].count, rb.search.rules_applied[i].count);
  }
}

// A rule stated as an expansion fires only read right to left: with RuleSetOptions::reverse off
// the graph stays as it is. The reading is deterministic like the rest of the search.
TEST(SearchTest, ARuleStatedAsAnExpansionFiresOnlyReversed) {
  auto text = ParseRulesText(
      "(relu (concat[axis=1] ?a ?b)) => (concat[axis=1] (relu ?a) (relu ?b))\n", "t");
  ASSERT_TRUE(text.ok());
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int y = b.Input("y", {1, 6, 8, 8});
  b.Output(b.Op("concat[axis=1]", {b.Op("relu", {x}), b.Op("relu", {y})}));
  runtime::Graph g = b.Finish();
  for (bool reverse : {false, true}) {
    RuleSetOptions options;
    options.proved_only = false;
    options.reverse = reverse;
    auto rules = RuleSet::Compile(*text, options);
    ASSERT_TRUE(rules.ok());
    runtime::Graph out, again;
    OptimizeReport report, report_again;
    ASSERT_TRUE(Optimize(g, **rules, Defaults(), &out, &report).ok());
    ASSERT_TRUE(Optimize(g, **rules, Defaults(), &again, &report_again).ok());
    EXPECT_EQ(runtime::StructuralHash(out), runtime::StructuralHash(again));
    EXPECT_EQ(CountOp(out, "relu"), reverse ? 1 : 2) << "reverse " << reverse;
    EXPECT_EQ(report.search.rewrite_steps, reverse ? 1 : 0);
    if (reverse) {
      ASSERT_EQ(report.search.rules_applied.size(), 1u);
      EXPECT_EQ(report.search.rules_applied[0].text,
                "(concat[axis=1] (relu ?a) (relu ?b)) => (relu (concat[axis=1] ?a ?b))");
      VerifyReport vr;
      Status v = CompareOutputs(g, out, {}, &vr);
      EXPECT_TRUE(v.ok()) << v.message();
    }
  }
}

TEST(SearchTest, ZeroBudgetReturnsTheInput) {
  auto rules = testing::HandwrittenRules();
  runtime::Graph g = InceptionBlock();
  OptimizeOptions o = Defaults();
  o.search.budget = 0;
  runtime::Graph out;
  OptimizeReport report;
  ASSERT_TRUE(Optimize(g, *rules, o, &out, &report).ok());
  EXPECT_EQ(report.search.stop, StopReason::kBudget);
  EXPECT_EQ(report.search.graphs_explored, 0);
  EXPECT_EQ(report.search.cost_after_us, report.search.cost_before_us);
  // The input, with its convolutions' epilogues absorbed as every optimized graph has them.
  runtime::Graph want = g;
  runtime::FuseConvEpilogues(&want);
  EXPECT_EQ(runtime::StructuralHash(out), runtime::StructuralHash(want));
}

TEST(SearchTest, BudgetStopsTheSearch) {
  auto rules = testing::HandwrittenRules();
  OptimizeOptions o = Defaults();
  o.search.budget = 1;
  runtime::Graph out;
  OptimizeReport report;
  ASSERT_TRUE(Optimize(InceptionBlock(), *rules, o, &out, &report).ok());
  EXPECT_EQ(report.search.stop, StopReason::kBudget);
  EXPECT_EQ(report.search.graphs_explored, 1);
}

// Patience: with no cheaper graph found for that many expansions and none cheaper waiting, the
// search stops before its budget, and the result is as cheap as the full search's when the full
// search finds nothing more; patience 0 explores the whole budget.
TEST(SearchTest, PatienceStopsASearchThatFindsNothingCheaper) {
  auto rules = testing::HandwrittenRules();
  OptimizeOptions o = Defaults();
  o.search.budget = 1000;
  o.search.patience = 3;
  runtime::Graph out;
  OptimizeReport patient;
  ASSERT_TRUE(Optimize(InceptionBlock(), *rules, o, &out, &patient).ok());
  EXPECT_EQ(patient.search.stop, StopReason::kNoImprovement);
  EXPECT_LT(patient.search.graphs_explored, 1000);
  o.search.patience = 0;
  OptimizeReport full;
  ASSERT_TRUE(Optimize(InceptionBlock(), *rules, o, &out, &full).ok());
  EXPECT_NE(full.search.stop, StopReason::kNoImprovement);
  EXPECT_GT(full.search.graphs_explored, patient.search.graphs_explored);
  EXPECT_LE(full.search.cost_after_us, patient.search.cost_after_us);
  EXPECT_STREQ(StopReasonName(StopReason::kNoImprovement), "no_improvement");
}

// Out of patience, a search also stops when the queue's best candidate promises no gain that
// would count (a quarter of min_gain): under whole-graph prices (here a scorer that finds every
// graph alike) the queue's per-node estimates promise gains no built graph delivers, and before
// this a search went on to its budget (DenseNet-121: 100 expansions, 2.5 s, for nothing).
TEST(SearchTest, PatienceIgnoresPromisesTooSmallToCount) {
  auto rules = testing::HandwrittenRules();
  std::map<double, SearchReport> reports;
  for (double min_gain : {0.5, 0.001}) {
    OptimizeOptions o = Defaults();
    o.search.budget = 1000;
    o.search.patience = 2;
    o.search.min_gain = min_gain;
    o.search.graph_cost = [](const runtime::Graph&) -> StatusOr<double> { return 100.0; };
    runtime::Graph out;
    OptimizeReport report;
    ASSERT_TRUE(Optimize(InceptionBlock(), *rules, o, &out, &report).ok());
    EXPECT_EQ(report.search.rewrite_steps, 0);
    reports[min_gain] = report.search;
  }
  // Promised gains of a node or two in a scorer's 100 stay under a quarter of 50%...
  EXPECT_EQ(reports[0.5].stop, StopReason::kNoImprovement);
  EXPECT_EQ(reports[0.5].graphs_explored, 2);
  // ...not under a quarter of 0.1%: the search goes on while they wait.
  EXPECT_GT(reports[0.001].graphs_explored, reports[0.5].graphs_explored);
}

// Candidates wait in the queue unbuilt; when the budget stops the search, the cheapest one that
// beats the best built graph is still built and returned, as an eager search would have.
TEST(SearchTest, CheapestWaitingCandidateIsReturnedWhenTheBudgetStops) {
  auto rules = testing::HandwrittenRules();
  OptimizeOptions o = Defaults();
  o.search.budget = 1;
  runtime::Graph g = InceptionBlock();
  runtime::Graph out;
  OptimizeReport report;
  ASSERT_TRUE(Optimize(g, *rules, o, &out, &report).ok());
  EXPECT_EQ(report.search.graphs_explored, 1);
  EXPECT_LT(report.search.cost_after_us, report.search.cost_before_us);
  EXPECT_EQ(report.search.rewrite_steps, 1);
  VerifyReport vr;
  EXPECT_TRUE(CompareOutputs(g, out, {}, &vr).ok());
}

TEST(SearchTest, TimeLimitIsReported) {
  auto rules = testing::HandwrittenRules();
  OptimizeOptions o = Defaults();
  o.search.time_limit_s = 1e-12;  // already exceeded at the first match
  runtime::Graph out;
  OptimizeReport report;
  ASSERT_TRUE(Optimize(InceptionBlock(), *rules, o, &out, &report).ok());
  EXPECT_EQ(report.search.stop, StopReason::kTimeLimit);
  EXPECT_TRUE(runtime::CheckGraph(out).ok());
}

TEST(SearchTest, BoundedQueueDropsCostliestAndStaysSound) {
  auto rules = testing::HandwrittenRules();
  OptimizeOptions o = Defaults();
  o.search.max_queue = 1;
  runtime::Graph g = InceptionBlock();
  runtime::Graph out;
  OptimizeReport report;
  ASSERT_TRUE(Optimize(g, *rules, o, &out, &report).ok());
  EXPECT_GT(report.search.dropped_queue_full, 0);
  EXPECT_LE(report.search.cost_after_us, report.search.cost_before_us);
  VerifyReport vr;
  EXPECT_TRUE(CompareOutputs(g, out, {}, &vr).ok());
}

TEST(SearchTest, AlphaOneExploresNoMoreThanDefaultAlpha) {
  auto rules = testing::HandwrittenRules();
  OptimizeOptions strict = Defaults();
  strict.search.alpha = 1.0;
  runtime::Graph a, b;
  OptimizeReport ra, rb;
  ASSERT_TRUE(Optimize(InceptionBlock(), *rules, strict, &a, &ra).ok());
  ASSERT_TRUE(Optimize(InceptionBlock(), *rules, Defaults(), &b, &rb).ok());
  EXPECT_LE(ra.search.graphs_explored, rb.search.graphs_explored);
  EXPECT_GT(ra.search.pruned_by_alpha, 0);
}

TEST(SearchTest, CycleGraphOptimizesWithoutCycles) {
  auto rules = testing::HandwrittenRules();
  GraphBuilder b;
  int a = b.Input("a", {4, 4});
  int w = b.Weight("w", {4, 4}, 1);
  int r = b.Op("relu", {b.Op("matmul[activation=none]", {a, w})});
  b.Output(b.Op("matmul[activation=none]", {a, r}));
  runtime::Graph g = b.Finish();
  runtime::Graph out;
  OptimizeReport report;
  // Merging the matmuls costs more; a wide alpha lets the search try (and reject) it.
  OptimizeOptions options = Defaults();
  options.search.alpha = 10;
  ASSERT_TRUE(Optimize(g, *rules, options, &out, &report).ok());
  EXPECT_GT(report.search.rejected[static_cast<int>(RejectReason::kCycle)], 0);
  EXPECT_TRUE(runtime::CheckGraph(out).ok());
  EXPECT_EQ(CountOp(out, "matmul"), 2);
  VerifyReport vr;
  EXPECT_TRUE(CompareOutputs(g, out, {}, &vr).ok());
}

TEST(SearchTest, BadOptionsAreErrorsNotCrashes) {
  auto rules = testing::HandwrittenRules();
  runtime::Graph out;
  OptimizeReport report;
  OptimizeOptions o = Defaults();
  o.search.alpha = 0.5;
  EXPECT_EQ(Optimize(InceptionBlock(), *rules, o, &out, &report).code(),
            StatusCode::kInvalidArgument);
  o = Defaults();
  o.device = "tpu";
  EXPECT_FALSE(Optimize(InceptionBlock(), *rules, o, &out, &report).ok());
  runtime::Graph broken = InceptionBlock();
  broken.mutable_outputs().push_back(12345);
  EXPECT_FALSE(Optimize(broken, *rules, Defaults(), &out, &report).ok());
}

}  // namespace
}  // namespace verisub::rewriter

namespace verisub::rewriter {
namespace {

// A cost model whose engine runs a relu inside the convolution that produces it (as oneDNN's
// post-ops do): such a relu costs nothing; every other node costs 1 (the concat 3).
class FusingModel : public runtime::CostModel {
 public:
  explicit FusingModel(bool fuses) : fuses_(fuses) {}
  std::string Name() const override { return "fusing-test-model"; }
  StatusOr<double> OpTimeUs(const runtime::OpCostQuery& q) const override {
    return q.op == specs::OpKind::kConcat ? 3.0 : 1.0;
  }
  bool PricesFusion() const override { return fuses_; }
  std::vector<char> AbsorbedNodes(const runtime::Graph& g) const override {
    if (!fuses_) return {};
    std::vector<char> absorbed(g.num_nodes(), 0);
    const std::vector<int> producer = g.Producers();
    const std::vector<int> uses = g.UseCounts();
    for (int i = 0; i < g.num_nodes(); ++i) {
      const runtime::Node& n = g.node(i);
      if (n.op != specs::OpKind::kRelu) continue;
      const int p = producer[n.inputs[0]];
      absorbed[i] = p >= 0 && g.node(p).op == specs::OpKind::kConv2d && uses[n.inputs[0]] == 1;
    }
    return absorbed;
  }

 private:
  bool fuses_;
};

// Issue 14: two convolutions of one input merged by the search are written as one Conv (its
// kernels concatenated into one weight at finalize) and a Split, and the relus after them stay
// apart (the convolution's reader is the split); the ONNX checker passes and outputs are equal.
TEST(SearchTest, MergedConvolutionsExportAsOneConvAndASplit) {
  auto parsed = ParseRulesText(std::string("(") + kConv1 + " ?a ?b) ; (" + kConv1 +
                                   " ?a ?c) => (split.0[axis=1] (" + kConv1 +
                                   " ?a (concat[axis=0] ?b ?c))) ; (split.1[axis=1] (" + kConv1 +
                                   " ?a (concat[axis=0] ?b ?c)))\n",
                               "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  RuleSetOptions ro;
  ro.proved_only = false;
  ro.reverse = false;
  auto rules = RuleSet::Compile(std::move(parsed).value(), ro);
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  GraphBuilder b;
  int x = b.Input("x", {1, 16, 8, 8});
  b.Output(b.Op("relu", {b.Op(kConv1, {x, b.Weight("w1", {16, 16, 1, 1}, 1)})}));
  b.Output(b.Op("relu", {b.Op(kConv1, {x, b.Weight("w2", {8, 16, 1, 1}, 2)})}));
  runtime::Graph g = b.Finish();
  // Every kernel launch costs the same; a split is a view, half of that.
  class LaunchModel : public runtime::CostModel {
   public:
    std::string Name() const override { return "launch-test-model"; }
    StatusOr<double> OpTimeUs(const runtime::OpCostQuery& q) const override {
      return q.op == specs::OpKind::kSplit ? 0.5 : 1.0;
    }
  } model;
  OptimizeOptions o = Defaults();
  o.cost_model = &model;
  runtime::Graph out;
  OptimizeReport report;
  ASSERT_TRUE(Optimize(g, **rules, o, &out, &report).ok());
  EXPECT_EQ(report.search.cost_before_us, 4.0);
  EXPECT_EQ(report.search.cost_after_us, 3.5);
  onnx::ModelProto written;
  ASSERT_TRUE(runtime::ExportOnnxModel(out, &written).ok());
  EXPECT_NO_THROW(onnx::checker::check_model(written));
  std::map<std::string, int> ops;
  for (const auto& n : written.graph().node()) ++ops[n.op_type()];
  EXPECT_EQ(ops, (std::map<std::string, int>{{"Conv", 1}, {"Split", 1}, {"Relu", 2}}));
  std::map<std::string, std::vector<int64_t>> weights;
  for (const auto& t : written.graph().initializer())
    weights[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
  const auto& conv = *std::find_if(written.graph().node().begin(), written.graph().node().end(),
                                   [](const auto& n) { return n.op_type() == "Conv"; });
  EXPECT_EQ(weights[conv.input(1)], (std::vector<int64_t>{24, 16, 1, 1}));  // one weight
  VerifyReport vr;
  Status same = CompareOutputs(g, out, {}, &vr);
  EXPECT_TRUE(same.ok()) << same.message();
}

// Issue 15: relu(concat(a, b)) saves a relu launch when nodes are priced one by one, but undoes
// two conv+relu fusions on an engine that fuses: a search on such costs must not apply it, while
// the same search on independent costs does (the twin that shows the rule matches).
TEST(SearchTest, FusionAwareCostsKeepReluFusedIntoItsConvolution) {
  auto parsed = ParseRulesText(
      "(concat[axis=1] (relu ?a) (relu ?b)) => (relu (concat[axis=1] ?a ?b))\n", "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  RuleSetOptions ro;
  ro.proved_only = false;
  auto rules = RuleSet::Compile(std::move(parsed).value(), ro);
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  GraphBuilder b;
  int x = b.Input("x", {1, 8, 8, 8});
  int r1 = b.Op("relu", {b.Op(kConv1, {x, b.Weight("w1", {8, 8, 1, 1}, 1)})});
  int r3 = b.Op("relu", {b.Op(kConv1, {x, b.Weight("w3", {8, 8, 3, 3}, 2)})});
  b.Output(b.Op("concat[axis=1]", {r1, r3}));
  runtime::Graph g = b.Finish();
  for (bool fuses : {false, true}) {
    FusingModel model(fuses);
    OptimizeOptions o = Defaults();
    o.cost_model = &model;
    runtime::Graph out;
    OptimizeReport report;
    ASSERT_TRUE(Optimize(g, **rules, o, &out, &report).ok());
    // Relus left standalone or fused into a convolution afterwards (the fuse-epilogues pass).
    int relus = CountOp(out, "relu");
    for (const auto& n : out.nodes())
      if (n->op == specs::OpKind::kConv2d &&
          n->params[specs::ops::kConvActivation] == static_cast<int64_t>(specs::Activation::kRelu))
        ++relus;
    EXPECT_EQ(relus, fuses ? 2 : 1) << "fuses " << fuses;
    // Whole-graph prices: conv, conv, concat (relus fused) = 5; independent: 2 + 2 + 3 = 7 -> 6.
    EXPECT_EQ(report.search.cost_before_us, fuses ? 5.0 : 7.0);
    EXPECT_EQ(report.search.cost_after_us, fuses ? 5.0 : 6.0);
  }
}

// SearchOptions::graph_cost (the joint layout search's scorer) prices every graph: a constant
// scorer finds nothing cheaper, a node count finds smaller graphs, and the report's costs are
// the scorer's.
TEST(SearchTest, AGraphScorerPricesEveryBuiltGraph) {
  auto rules = testing::HandwrittenRules();
  runtime::Graph g = InceptionBlock();
  for (bool by_nodes : {false, true}) {
    OptimizeOptions o = Defaults();
    int calls = 0;
    o.search.graph_cost = [&](const runtime::Graph& graph) -> StatusOr<double> {
      ++calls;
      return by_nodes ? static_cast<double>(graph.num_nodes()) : 1.0;
    };
    runtime::Graph out;
    OptimizeReport report;
    ASSERT_TRUE(Optimize(g, *rules, o, &out, &report).ok());
    EXPECT_GT(calls, 1);
    if (by_nodes) {
      EXPECT_EQ(report.search.cost_before_us, g.num_nodes());
      EXPECT_LT(report.search.cost_after_us, report.search.cost_before_us);
    } else {
      EXPECT_EQ(report.search.cost_after_us, 1.0);
      EXPECT_EQ(report.search.rewrite_steps, 0);
    }
  }
  // A scorer that fails on the input fails the search, naming the cause.
  OptimizeOptions o = Defaults();
  o.search.graph_cost = [](const runtime::Graph&) -> StatusOr<double> {
    return InvalidArgument("no score");
  };
  runtime::Graph out;
  OptimizeReport report;
  Status st = Optimize(g, *rules, o, &out, &report);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no score"), std::string::npos);
}

}  // namespace
}  // namespace verisub::rewriter
