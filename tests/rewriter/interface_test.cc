// A model's input and output names and order are its interface: rewriting never changes them,
// not when a rewrite replaces an output's producer (it renamed `logits` to `verisub_rw_v4`), not
// when an output becomes a graph input or two outputs become one value.
#include "rewriter/interface.h"

#include <gtest/gtest.h>

#include "onnx/onnx_pb.h"
#include "rewriter/optimize.h"
#include "rewriter/verify_outputs.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

using testing::GraphBuilder;
using testing::Rules;

// Optimizes `g` with `rules` and checks the interface and the values against the original.
runtime::Graph OptimizeKeepingInterface(const runtime::Graph& g, const RuleSet& rules) {
  OptimizeOptions options;
  options.search.time_limit_s = 0;
  runtime::Graph out;
  OptimizeReport report;
  Status st = Optimize(g, rules, options, &out, &report);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_GT(report.search.rewrite_steps, 0) << "the rule must fire for the test to mean anything";
  const GraphInterface before = InterfaceOf(g), after = InterfaceOf(out);
  EXPECT_EQ(before.inputs, after.inputs);
  EXPECT_EQ(before.outputs, after.outputs);
  VerifyReport vr;
  Status same = CompareOutputs(g, out, {}, &vr);
  EXPECT_TRUE(same.ok()) << same.message();
  return out;
}

// Names the graph's outputs as a user's model does.
void NameOutputs(runtime::Graph* g, const std::vector<std::string>& names) {
  for (size_t k = 0; k < names.size(); ++k) g->mutable_value(g->outputs()[k]).name = names[k];
}

TEST(InterfaceTest, OutputKeepsItsNameWhenARewriteReplacesItsProducer) {
  auto rules = Rules({"(relu (relu ?a)) => (relu ?a)"});
  GraphBuilder b;
  int x = b.Input("x", {2, 3});
  b.Output(b.Op("relu", {b.Op("relu", {b.Op("tanh", {x})})}));
  runtime::Graph g = b.Finish();
  NameOutputs(&g, {"logits"});
  runtime::Graph out = OptimizeKeepingInterface(g, *rules);
  EXPECT_EQ(out.value(out.outputs()[0]).name, "logits");
  EXPECT_EQ(testing::CountOp(out, "relu"), 1);
}

TEST(InterfaceTest, OutputThatBecomesAGraphInputKeepsItsNameThroughAnIdentity) {
  auto rules = Rules({"(transpose[perm=[1,0]] (transpose[perm=[1,0]] ?a)) => ?a"});
  GraphBuilder b;
  int x = b.Input("x", {2, 3});
  b.Output(b.Op("transpose[perm=[1,0]]", {b.Op("transpose[perm=[1,0]]", {x})}));
  runtime::Graph g = b.Finish();
  NameOutputs(&g, {"probs"});
  runtime::Graph out = OptimizeKeepingInterface(g, *rules);
  EXPECT_EQ(out.value(out.outputs()[0]).name, "probs");
  EXPECT_EQ(testing::CountOp(out, "onnx:Identity"), 1);
  // And the exported model still says so.
  onnx::ModelProto model;
  ASSERT_TRUE(runtime::ExportOnnxModel(out, &model).ok());
  ASSERT_EQ(model.graph().output_size(), 1);
  EXPECT_EQ(model.graph().output(0).name(), "probs");
  EXPECT_EQ(model.graph().input(0).name(), "x");
}

TEST(InterfaceTest, TwoOutputsMergedIntoOneValueKeepBothNamesInOrder) {
  auto rules = Rules({"(transpose[perm=[1,0]] (transpose[perm=[1,0]] ?a)) => ?a"});
  GraphBuilder b;
  int r = b.Op("relu", {b.Input("x", {2, 3})});
  b.Output(r);
  b.Output(b.Op("transpose[perm=[1,0]]", {b.Op("transpose[perm=[1,0]]", {r})}));  // becomes r
  runtime::Graph g = b.Finish();
  NameOutputs(&g, {"first", "second"});
  runtime::Graph out = OptimizeKeepingInterface(g, *rules);
  EXPECT_EQ(out.value(out.outputs()[0]).name, "first");
  EXPECT_EQ(out.value(out.outputs()[1]).name, "second");
  EXPECT_NE(out.outputs()[0], out.outputs()[1]);
}

TEST(InterfaceTest, RestoreRenamesAGeneratedValueBack) {
  GraphBuilder b;
  b.Output(b.Op("relu", {b.Input("x", {2, 2})}));
  runtime::Graph g = b.Finish();
  GraphInterface want = InterfaceOf(g);
  g.mutable_value(g.outputs()[0]).name = "verisub_rw_v4";
  ASSERT_TRUE(RestoreInterface(want, &g).ok());
  EXPECT_EQ(InterfaceOf(g).outputs, want.outputs);
  want.inputs = {"y"};
  EXPECT_EQ(RestoreInterface(want, &g).code(), StatusCode::kInternal);
}

TEST(InterfaceTest, CompareOutputsReportsARenamedOutputAsADifference) {
  GraphBuilder b;
  b.Output(b.Op("relu", {b.Input("x", {2, 2})}));
  runtime::Graph g = b.Finish();
  runtime::Graph renamed = g;
  renamed.mutable_value(renamed.outputs()[0]).name = "verisub_rw_v4";
  VerifyReport vr;
  Status st = CompareOutputs(g, renamed, {}, &vr);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(vr.outcome, VerifyOutcome::kDifferent);
  EXPECT_NE(st.message().find("verisub_rw_v4"), std::string::npos) << st.message();
}

TEST(InterfaceTest, CompareOutputsThatCannotRunIsNotADifference) {
  GraphBuilder b;
  b.Output(b.Op("relu", {b.Input("x", {1 << 16, 1 << 16})}));  // 32 GiB as doubles
  runtime::Graph g = b.Finish();
  VerifyReport vr;
  Status st = CompareOutputs(g, g, {}, &vr);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(vr.outcome, VerifyOutcome::kCouldNotRun);
  EXPECT_NE(st.message().find("memory budget"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace verisub::rewriter
