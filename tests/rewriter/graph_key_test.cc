// Incremental graph keys: the key a plan predicts is the key of the graph it builds; rewrites
// that commute, a rewrite and its inverse, and rules making the same change agree; different
// graphs differ.
#include "rewriter/graph_key.h"

#include <gtest/gtest.h>

#include <functional>

#include "rewriter/rule_source.h"
#include "runtime/cost/analytic_cost.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

using testing::GraphBuilder;
using testing::Rules;

constexpr const char* kConv = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";
constexpr const char* kConvRelu =
    "conv2d[stride_h=1,stride_w=1,padding=same,activation=relu,group=1]";

class GraphKeyTest : public ::testing::Test {
 protected:
  GraphKeyTest() : model_(*runtime::DevicePreset("v100")), cost_(&model_) {}

  struct Step {
    runtime::Graph graph;
    GraphKeys keys;
    uint64_t predicted = 0;
  };

  // Applies the `which`-th match of rule `rule` to `g`; the key predicted from the plan.
  Step Apply(const runtime::Graph& g, const GraphKeys& keys, const RuleSet& rules, size_t which,
             int rule = 0) {
    GraphIndex index(g);
    std::vector<Match> matches = FindMatches(g, index, rules, rule);
    EXPECT_LT(which, matches.size());
    RewritePlanner planner(g, index, rules, &cost_);
    const RewritePlan& plan = planner.Plan(matches.at(which));
    EXPECT_EQ(plan.rejected, RejectReason::kNone) << plan.detail;
    Step s;
    s.predicted = keys.KeyAfter(g, index, plan);
    ApplyResult res = BuildRewrite(g, index, matches.at(which), plan);
    EXPECT_EQ(res.rejected, RejectReason::kNone) << res.detail;
    s.graph = std::move(res.graph);
    s.keys = keys.ForChild(g, plan, s.graph);
    return s;
  }

  runtime::AnalyticCostModel model_;
  CostEvaluator cost_;
};

// Two convolutions, each followed by a relu: two independent fusions.
runtime::Graph TwoBranches() {
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int w1 = b.Weight("w1", {4, 4, 3, 3}, 1);
  int w2 = b.Weight("w2", {4, 4, 3, 3}, 2);
  b.Output(b.Op("relu", {b.Op(kConv, {x, w1})}));
  b.Output(b.Op("relu", {b.Op(kConv, {x, w2})}));
  return b.Finish();
}

TEST_F(GraphKeyTest, PredictedKeyIsTheBuiltGraphsKey) {
  auto rules = Rules({std::string("(relu (") + kConv + " ?a ?b)) => (" + kConvRelu + " ?a ?b)"});
  runtime::Graph g = TwoBranches();
  GraphKeys keys = GraphKeys::ForInput(g);
  Step s = Apply(g, keys, *rules, 0);
  EXPECT_EQ(s.predicted, s.keys.key());
  EXPECT_NE(s.keys.key(), keys.key());
}

TEST_F(GraphKeyTest, CommutingRewritesGiveOneKey) {
  auto rules = Rules({std::string("(relu (") + kConv + " ?a ?b)) => (" + kConvRelu + " ?a ?b)"});
  runtime::Graph g = TwoBranches();
  GraphKeys keys = GraphKeys::ForInput(g);
  Step a = Apply(g, keys, *rules, 0);
  Step ab = Apply(a.graph, a.keys, *rules, 0);
  Step b = Apply(g, keys, *rules, 1);
  Step ba = Apply(b.graph, b.keys, *rules, 0);
  EXPECT_NE(a.keys.key(), b.keys.key());  // different graphs
  EXPECT_EQ(ab.predicted, ab.keys.key());
  EXPECT_EQ(ab.keys.key(), ba.keys.key());
}

TEST_F(GraphKeyTest, ARewriteAndItsInverseReturnToTheKey) {
  // x*I introduced next to an add, then removed again.
  auto rules = Rules({"(ewadd ?a ?b) => (ewadd ?b (matmul[activation=none] ?a (const_imatmul ?b)))",
                      "(matmul[activation=none] ?a (const_imatmul ?b)) => ?a"});
  GraphBuilder b;
  int x = b.Input("x", {4, 4});
  int y = b.Input("y", {4, 4});
  b.Output(b.Op("relu", {b.Op("ewadd", {x, y})}));
  runtime::Graph g = b.Finish();
  GraphKeys keys = GraphKeys::ForInput(g);
  Step there = Apply(g, keys, *rules, 0);
  EXPECT_NE(there.keys.key(), keys.key());
  Step back = Apply(there.graph, there.keys, *rules, 0, /*rule=*/1);
  EXPECT_EQ(back.predicted, back.keys.key());
  EXPECT_EQ(back.keys.key(), keys.key());
}

TEST_F(GraphKeyTest, RecreatingWhatARewriteRemovesChangesNothing) {
  // Enlarging a 3x3 kernel to 3x3 is the identity: the rewrite builds the same convolution.
  auto rules = Rules({std::string("(") + kConv + " ?a ?b) => (" + kConv +
                      " ?a (enlarge[kernel_h=3,kernel_w=3] ?b))"});
  runtime::Graph g = TwoBranches();
  GraphKeys keys = GraphKeys::ForInput(g);
  Step s = Apply(g, keys, *rules, 0);
  EXPECT_EQ(s.predicted, keys.key());
  EXPECT_EQ(s.keys.key(), keys.key());
}

TEST_F(GraphKeyTest, OperandOrderOfCommutativeOperatorsDoesNotMatter) {
  auto rules = Rules({"(ewadd ?a ?b) => (ewadd ?b ?a)"});
  GraphBuilder b;
  b.Output(b.Op("ewadd", {b.Input("x", {2, 3}), b.Input("y", {2, 3})}));
  runtime::Graph g = b.Finish();
  GraphKeys keys = GraphKeys::ForInput(g);
  Step s = Apply(g, keys, *rules, 0);
  EXPECT_EQ(s.keys.key(), keys.key());
}

// Every match of the hand-written rules and of the shipped database on a mixed graph, two
// rewrites deep: the key a plan predicts is the key of the graph it builds.
TEST_F(GraphKeyTest, PredictionsHoldForEveryMatch) {
  auto shipped = testing::ShippedRules();
  ASSERT_NE(shipped, nullptr);
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int w1 = b.Weight("w1", {4, 4, 1, 1}, 1);
  int w3 = b.Weight("w3", {4, 4, 3, 3}, 2);
  int r1 = b.Op("relu", {b.Op(kConv, {x, w1})});
  int r3 = b.Op("relu", {b.Op(kConv, {x, w3})});
  b.Output(b.Op("concat[axis=1]", {r1, r3}));
  int m = b.Input("m", {6, 6});
  int v = b.Weight("v", {6, 6}, 3);
  int t = b.Op("transpose[perm=[1,0]]", {b.Op("transpose[perm=[1,0]]", {m})});
  b.Output(b.Op(
      "ewadd", {b.Op("matmul[activation=none]", {t, v}), b.Op("matmul[activation=none]", {m, v})}));
  runtime::Graph g = b.Finish();
  GraphKeys keys = GraphKeys::ForInput(g);
  int checked = 0;
  std::shared_ptr<const RuleSet> rules;
  std::function<void(const runtime::Graph&, const GraphKeys&, int)> visit =
      [&](const runtime::Graph& cur, const GraphKeys& cur_keys, int depth) {
        GraphIndex index(cur);
        RewritePlanner planner(cur, index, *rules, &cost_);
        for (const Match& match : FindAllMatches(cur, index, *rules)) {
          const RewritePlan& plan = planner.Plan(match);
          if (plan.rejected != RejectReason::kNone) continue;
          uint64_t predicted = cur_keys.KeyAfter(cur, index, plan);
          ApplyResult res = BuildRewrite(cur, index, match, plan);
          if (res.rejected != RejectReason::kNone) continue;
          GraphKeys built = cur_keys.ForChild(cur, plan, res.graph);
          EXPECT_EQ(predicted, built.key()) << rules->rule(match.rule).Text();
          ++checked;
          if (depth < 1) visit(res.graph, built, depth + 1);
        }
      };
  for (auto set : {testing::HandwrittenRules(), shipped}) {
    ASSERT_NE(set, nullptr);
    rules = set;
    checked = 0;
    visit(g, keys, 0);
    EXPECT_GT(checked, 20);
  }
}

}  // namespace
}  // namespace verisub::rewriter
