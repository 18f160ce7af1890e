// Applying matches: golden results, cycle rejection (TASO Fig. 6), shape checks, constant
// folding of weight-only target nodes, opaque nodes kept.
#include "rewriter/apply.h"

#include <gtest/gtest.h>

#include <map>

#include "rewriter/verify_outputs.h"
#include "runtime/cost/analytic_cost.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

using testing::CountOp;
using testing::GraphBuilder;
using testing::Rules;

const std::string kMergeMatmul =
    "(matmul[activation=none] ?a ?b) ; (matmul[activation=none] ?a ?c) => "
    "(split.0[axis=1] (matmul[activation=none] ?a (concat[axis=1] ?b ?c))) ; "
    "(split.1[axis=1] (matmul[activation=none] ?a (concat[axis=1] ?b ?c)))";
constexpr const char* kConv1 = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";

class ApplyTest : public ::testing::Test {
 protected:
  ApplyTest() : model_(*runtime::DevicePreset("v100")), cost_(&model_) {}

  // Applies every match of the rule set's rules in turn to `g`.
  std::vector<ApplyResult> ApplyAll(const runtime::Graph& g, const RuleSet& rules) {
    GraphIndex index(g);
    std::vector<ApplyResult> out;
    for (const Match& m : FindAllMatches(g, index, rules))
      out.push_back(ApplyMatch(g, index, rules, m, &cost_));
    return out;
  }

  void ExpectSameOutputs(const runtime::Graph& a, runtime::Graph b) {
    ASSERT_TRUE(FinalizeGraph(&b).ok());
    ASSERT_TRUE(runtime::CheckGraph(b).ok());
    VerifyReport vr;
    Status st = CompareOutputs(a, b, {}, &vr);
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_GT(vr.elements_compared, 0);
  }

  runtime::AnalyticCostModel model_;
  CostEvaluator cost_;
};

TEST_F(ApplyTest, ConvReluFusion) {
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int w = b.Weight("w", {4, 4, 3, 3}, 1);
  b.Output(b.Op("relu", {b.Op(kConv1, {x, w})}));
  runtime::Graph g = b.Finish();
  auto rules =
      Rules({std::string("(relu (") + kConv1 +
             " ?a ?b)) => "
             "(conv2d[stride_h=1,stride_w=1,padding=same,activation=relu,group=1] ?a ?b)"});
  auto res = ApplyAll(g, *rules);
  ASSERT_EQ(res.size(), 1u);
  ASSERT_EQ(res[0].rejected, RejectReason::kNone) << res[0].detail;
  EXPECT_EQ(res[0].graph.num_nodes(), 1);
  EXPECT_EQ(CountOp(res[0].graph, "relu"), 0);
  EXPECT_LT(res[0].cost_delta, 0);  // the separate relu kernel is gone
  EXPECT_EQ(g.num_nodes(), 2);      // the input graph is untouched
  ExpectSameOutputs(g, res[0].graph);
}

// TASO Fig. 6: merging the two matmuls of A x relu(A x B) would make the second matmul's input
// depend on the merged matmul's own output.
TEST_F(ApplyTest, CycleIsRejected) {
  GraphBuilder b;
  int a = b.Input("a", {4, 4});
  int w = b.Weight("w", {4, 4}, 1);
  int r = b.Op("relu", {b.Op("matmul[activation=none]", {a, w})});
  b.Output(b.Op("matmul[activation=none]", {a, r}));
  auto res = ApplyAll(b.Finish(), *Rules({kMergeMatmul}));
  ASSERT_EQ(res.size(), 2u);  // both orders match
  for (const ApplyResult& r2 : res) EXPECT_EQ(r2.rejected, RejectReason::kCycle);
}

TEST_F(ApplyTest, CycleTwinIndependentMatmulsMerge) {
  GraphBuilder b;
  int a = b.Input("a", {4, 4});
  int w = b.Weight("w", {4, 4}, 1);
  int v = b.Input("v", {4, 4});
  b.Output(b.Op("relu", {b.Op("matmul[activation=none]", {a, w})}));
  b.Output(b.Op("matmul[activation=none]", {a, v}));
  runtime::Graph g = b.Finish();
  auto res = ApplyAll(g, *Rules({kMergeMatmul}));
  ASSERT_EQ(res.size(), 2u);
  for (const ApplyResult& r : res) {
    ASSERT_EQ(r.rejected, RejectReason::kNone) << r.detail;
    EXPECT_EQ(CountOp(r.graph, "matmul"), 1);
    EXPECT_EQ(CountOp(r.graph, "split"), 1);
    EXPECT_EQ(CountOp(r.graph, "concat"), 1);  // v is an input: nothing to fold
    ExpectSameOutputs(g, r.graph);
  }
}

TEST_F(ApplyTest, MergedConvKernelsAreFolded) {
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int w1 = b.Weight("w1", {3, 4, 3, 3}, 1);
  int w2 = b.Weight("w2", {5, 4, 3, 3}, 2);
  b.Output(b.Op("relu", {b.Op(kConv1, {x, w1})}));
  b.Output(b.Op("tanh", {b.Op(kConv1, {x, w2})}));
  runtime::Graph g = b.Finish();
  std::string c = kConv1;
  auto rules = Rules({"(" + c + " ?a ?b) ; (" + c + " ?a ?c) => (split.0[axis=1] (" + c +
                      " ?a (concat[axis=0] ?b ?c))) ; (split.1[axis=1] (" + c +
                      " ?a (concat[axis=0] ?b ?c)))"});
  auto res = ApplyAll(g, *rules);
  ASSERT_EQ(res.size(), 2u);
  const ApplyResult& r = res[0];
  ASSERT_EQ(r.rejected, RejectReason::kNone) << r.detail;
  EXPECT_EQ(r.weight_only_nodes, 1);  // the kernel concat: free, folded at the end
  EXPECT_EQ(CountOp(r.graph, "concat"), 1);
  runtime::Graph final_graph = r.graph;
  ASSERT_TRUE(FinalizeGraph(&final_graph).ok());
  EXPECT_EQ(CountOp(final_graph, "concat"), 0);
  EXPECT_EQ(CountOp(final_graph, "conv2d"), 1);
  CostEvaluator cost(&model_);
  EXPECT_EQ(*cost.GraphCost(r.graph), *cost.GraphCost(final_graph));
  EXPECT_EQ(CountOp(r.graph, "conv2d"), 1);
  EXPECT_EQ(CountOp(r.graph, "split"), 1);
  ExpectSameOutputs(g, r.graph);
}

// For a model written for another engine (ApplyOptions::keep_weights_constant), no rewrite may
// leave a matmul or convolution reading a computed weight where it read a constant: moving a
// transpose through x * W makes W's transpose the left operand and x's the right (a computed
// weight), while the same rewrite of two activations' product changes nothing of the kind.
TEST_F(ApplyTest, ConstantWeightsStayConstantWhenAsked) {
  auto rules =
      Rules({"(transpose[perm=[1,0]] (matmul[activation=none] ?a ?b)) => "
             "(matmul[activation=none] (transpose[perm=[1,0]] ?b) "
             "(transpose[perm=[1,0]] ?a))"});
  auto apply = [&](const runtime::Graph& g, bool keep) {
    GraphIndex index(g);
    std::vector<Match> matches = FindAllMatches(g, index, *rules);
    EXPECT_EQ(matches.size(), 1u);
    ApplyOptions options;
    options.keep_weights_constant = keep;
    return ApplyMatch(g, index, *rules, matches.at(0), &cost_, options);
  };
  GraphBuilder layer;
  int x = layer.Input("x", {2, 3});
  layer.Output(layer.Op("transpose[perm=[1,0]]",
                        {layer.Op("matmul[activation=none]", {x, layer.Weight("w", {3, 4}, 1)})}));
  const runtime::Graph linear = layer.Finish();
  EXPECT_EQ(apply(linear, false).rejected, RejectReason::kNone);
  const ApplyResult kept = apply(linear, true);
  EXPECT_EQ(kept.rejected, RejectReason::kComputedWeight);
  EXPECT_NE(kept.detail.find("computed weight"), std::string::npos) << kept.detail;

  GraphBuilder attention;
  int q = attention.Input("q", {2, 3});
  int k = attention.Input("k", {3, 4});
  attention.Output(
      attention.Op("transpose[perm=[1,0]]", {attention.Op("matmul[activation=none]", {q, k})}));
  const runtime::Graph product = attention.Finish();
  const ApplyResult same = apply(product, true);
  ASSERT_EQ(same.rejected, RejectReason::kNone) << same.detail;
  ExpectSameOutputs(product, same.graph);
}

TEST_F(ApplyTest, ShapeChangeIsRejected) {
  auto rules = Rules({"(transpose[perm=[1,0]] ?a) => ?a"});  // test-only, shape-changing
  GraphBuilder b;
  b.Output(b.Op("transpose[perm=[1,0]]", {b.Input("x", {2, 3})}));
  auto res = ApplyAll(b.Finish(), *rules);
  ASSERT_EQ(res.size(), 1u);
  EXPECT_EQ(res[0].rejected, RejectReason::kShapeMismatch);

  GraphBuilder square;
  square.Output(square.Op("transpose[perm=[1,0]]", {square.Input("x", {3, 3})}));
  auto ok = ApplyAll(square.Finish(), *rules);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].rejected, RejectReason::kNone);
}

TEST_F(ApplyTest, TargetTypeErrorIsRejected) {
  auto rules = Rules({"(ewadd ?a ?b) => (matmul[activation=none] ?a ?b)"});  // test-only
  GraphBuilder b;
  b.Output(b.Op("ewadd", {b.Input("x", {2, 3}), b.Input("y", {2, 3})}));
  auto res = ApplyAll(b.Finish(), *rules);
  ASSERT_EQ(res.size(), 2u);  // ewadd is commutative: both operand orders match
  for (const ApplyResult& r : res) EXPECT_EQ(r.rejected, RejectReason::kTypeError);
}

TEST_F(ApplyTest, SplitOfConcatCancels) {
  auto rules =
      Rules({"(split.0[axis=0] (concat[axis=0] ?a ?b)) ; "
             "(split.1[axis=0] (concat[axis=0] ?a ?b)) => ?a ; ?b"});
  GraphBuilder b;
  int x = b.Input("x", {2, 3});
  int y = b.Input("y", {4, 3});
  auto s = b.Ops("split[axis=0]", {b.Op("concat[axis=0]", {x, y})});
  b.Output(b.Op("relu", {s[0]}));
  b.Output(b.Op("tanh", {s[1]}));
  runtime::Graph g = b.Finish();
  auto res = ApplyAll(g, *rules);
  ASSERT_EQ(res.size(), 1u);
  ASSERT_EQ(res[0].rejected, RejectReason::kNone) << res[0].detail;
  EXPECT_EQ(res[0].graph.num_nodes(), 2);
  ExpectSameOutputs(g, res[0].graph);
}

TEST_F(ApplyTest, SplitOfConcatTwinConcatUsedOutside) {
  auto rules =
      Rules({"(split.0[axis=0] (concat[axis=0] ?a ?b)) ; "
             "(split.1[axis=0] (concat[axis=0] ?a ?b)) => ?a ; ?b"});
  GraphBuilder b;
  int c = b.Op("concat[axis=0]", {b.Input("x", {2, 3}), b.Input("y", {4, 3})});
  auto s = b.Ops("split[axis=0]", {c});
  b.Output(s[0]);
  b.Output(s[1]);
  b.Output(b.Op("relu", {c}));
  EXPECT_TRUE(ApplyAll(b.Finish(), *rules).empty());
}

TEST_F(ApplyTest, OpaqueNodesAreKeptVerbatim) {
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int w = b.Weight("w", {4, 4, 3, 3}, 1);
  int neg = b.Opaque("Neg", x);
  b.Output(b.Opaque("Abs", b.Op("relu", {b.Op(kConv1, {neg, w})})));
  runtime::Graph g = b.Finish();
  auto rules =
      Rules({std::string("(relu (") + kConv1 +
             " ?a ?b)) => "
             "(conv2d[stride_h=1,stride_w=1,padding=same,activation=relu,group=1] ?a ?b)"});
  auto res = ApplyAll(g, *rules);
  ASSERT_EQ(res.size(), 1u);
  ASSERT_EQ(res[0].rejected, RejectReason::kNone) << res[0].detail;
  std::vector<const onnx::NodeProto*> before, after;
  for (const auto& n : g.nodes())
    if (n->opaque()) before.push_back(n->onnx.get());
  for (const auto& n : res[0].graph.nodes())
    if (n->opaque()) after.push_back(n->onnx.get());
  EXPECT_EQ(before, after);
  EXPECT_EQ(res[0].graph.node(0).onnx.get(), g.node(0).onnx.get());
  EXPECT_EQ(res[0].graph.node_ptr(0), g.node_ptr(0));  // shared, not copied
  ExpectSameOutputs(g, res[0].graph);
}

// Prices as the analytic V100 model, counts the instances it prices per output shape, and knows
// each price as a bound without pricing (the tightest bound a model can give).
class CountingModel : public runtime::CostModel {
 public:
  std::string Name() const override { return "counting"; }
  StatusOr<double> OpTimeUs(const runtime::OpCostQuery& q) const override {
    ++priced[q.outputs.empty() ? "" : q.outputs[0].ToString()];
    return inner.OpTimeUs(q);
  }
  double LowerBoundUs(const runtime::OpCostQuery& q) const override { return *inner.OpTimeUs(q); }
  runtime::AnalyticCostModel inner{*runtime::DevicePreset("v100")};
  mutable std::map<std::string, int> priced;
};

// Under a limit, a plan whose new nodes' lower bounds alone put it over is rejected without
// pricing them (a measured model would have timed each); within the limit, or without one, the
// new nodes are priced and the cost change is the same exact one.
TEST_F(ApplyTest, PlansOverTheirLimitOnBoundsPriceNothingNew) {
  GraphBuilder b;
  int a = b.Input("a", {64, 256});
  b.Output(b.Op("matmul[activation=none]", {a, b.Weight("w1", {256, 512}, 1)}));
  b.Output(b.Op("matmul[activation=none]", {a, b.Weight("w2", {256, 512}, 2)}));
  runtime::Graph g = b.Finish();
  auto rules = Rules({kMergeMatmul});
  GraphIndex index(g);
  std::vector<Match> matches = FindAllMatches(g, index, *rules);
  ASSERT_FALSE(matches.empty());
  const std::string merged = "[64,1024]";

  CountingModel unlimited_model;
  CostEvaluator unlimited_cost(&unlimited_model);
  RewritePlanner unlimited(g, index, *rules, &unlimited_cost);
  const RewritePlan& exact = unlimited.Plan(matches[0]);
  ASSERT_EQ(exact.rejected, RejectReason::kNone) << exact.detail;
  EXPECT_EQ(unlimited_model.priced[merged], 1);
  const double delta = exact.cost_delta;

  CountingModel model;
  CostEvaluator cost(&model);
  RewritePlanner planner(g, index, *rules, &cost);
  const RewritePlan& over = planner.Plan(matches[0], delta - 1);
  EXPECT_EQ(over.rejected, RejectReason::kCostLimit);
  EXPECT_EQ(model.priced[merged], 0);  // rejected on the bound
  const RewritePlan& within = planner.Plan(matches[0], delta + 1);
  ASSERT_EQ(within.rejected, RejectReason::kNone) << within.detail;
  EXPECT_EQ(model.priced[merged], 1);
  EXPECT_DOUBLE_EQ(within.cost_delta, delta);
  const RewritePlan& again = planner.Plan(matches[0], delta - 1);  // priced before: exact
  EXPECT_EQ(again.rejected, RejectReason::kCostLimit);
  EXPECT_DOUBLE_EQ(again.cost_delta, delta);
  EXPECT_EQ(model.priced[merged], 1);
}

}  // namespace
}  // namespace verisub::rewriter
