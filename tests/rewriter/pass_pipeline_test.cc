// The pass pipeline: passes run in order, a broken invariant is "failed after <pass>", the
// graph is dumped as text after the named pass, and Optimize's passes are the documented ones.
#include "rewriter/pass_pipeline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rewriter/optimize.h"
#include "runtime/graph_text.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

runtime::Graph Small() {
  auto g = runtime::ParseGraphText("input x [2,3]\noutput (relu (relu x))\n");
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? std::move(g).value() : runtime::Graph();
}

GraphPass Record(const std::string& name, std::vector<std::string>* order) {
  return {name, [name, order](runtime::Graph*) {
            order->push_back(name);
            return Status::Ok();
          }};
}

// Points a node at a value that does not exist: CheckGraph refuses the graph.
GraphPass Breaker() {
  return {"breaker", [](runtime::Graph* g) {
            g->mutable_outputs().push_back(g->num_values() + 7);
            return Status::Ok();
          }};
}

TEST(PassPipelineTest, RunsPassesInOrder) {
  std::vector<std::string> order;
  runtime::Graph g = Small();
  ASSERT_TRUE(RunPassPipeline({Record("a", &order), Record("b", &order)}, {}, &g, nullptr).ok());
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b"}));
}

TEST(PassPipelineTest, BrokenInvariantNamesThePass) {
  std::vector<std::string> order;
  runtime::Graph g = Small();
  PassPipelineOptions checked;
  checked.check_after_each_pass = true;
  Status st = RunPassPipeline({Breaker(), Record("after", &order)}, checked, &g, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("failed after breaker: ", 0), 0u) << st.message();
  EXPECT_TRUE(order.empty());  // the pipeline stops at the broken graph
  // Unchecked, the break is found after the last pass (the checker always runs there).
  g = Small();
  st = RunPassPipeline({Breaker(), Record("after", &order)}, {}, &g, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("failed after after: ", 0), 0u) << st.message();
}

TEST(PassPipelineTest, APassErrorIsReturnedAsItIs) {
  runtime::Graph g = Small();
  GraphPass failing{"failing", [](runtime::Graph*) { return InvalidArgument("no kernel"); }};
  Status st = RunPassPipeline({failing}, {}, &g, nullptr);
  EXPECT_EQ(st.message(), "no kernel");
}

TEST(PassPipelineTest, DumpsAfterTheNamedPass) {
  runtime::Graph g = Small();
  GraphPass drop_relu{"drop-relu", [](runtime::Graph* graph) {
                        auto smaller = runtime::ParseGraphText("input x [2,3]\noutput (relu x)\n");
                        if (!smaller.ok()) return smaller.status();
                        *graph = std::move(smaller).value();
                        return Status::Ok();
                      }};
  std::vector<std::string> order;
  PassPipelineOptions options;
  options.dump_after = "drop-relu";
  std::string dump;
  ASSERT_TRUE(RunPassPipeline({Record("first", &order), drop_relu}, options, &g, &dump).ok());
  EXPECT_EQ(dump, "output (relu x)\n");
  options.dump_after = "first";
  g = Small();
  ASSERT_TRUE(RunPassPipeline({Record("first", &order), drop_relu}, options, &g, &dump).ok());
  EXPECT_EQ(dump, "output (relu (relu x))\n");
  options.dump_after = "nonesuch";
  Status st = RunPassPipeline({Record("first", &order), drop_relu}, options, &g, &dump);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("passes: first, drop-relu"), std::string::npos) << st.message();
}

TEST(PassPipelineTest, OptimizeRunsTheDocumentedPasses) {
  EXPECT_EQ(OptimizePassNames(),
            (std::vector<std::string>{"import-fixes", "constant-folding", "search", "finalize",
                                      "fuse-epilogues"}));
  auto rules = testing::Rules({"(relu (relu ?a)) => (relu ?a)"});
  ASSERT_NE(rules, nullptr);
  OptimizeOptions options;
  options.search.time_limit_s = 0;
  options.check_after_each_pass = true;
  options.dump_after = "constant-folding";
  runtime::Graph out;
  OptimizeReport report;
  ASSERT_TRUE(Optimize(Small(), *rules, options, &out, &report).ok());
  EXPECT_EQ(report.dump_text, "output (relu (relu x))\n");  // before the search
  EXPECT_EQ(runtime::PrintGraphText(out), "output (relu x)\n");
  options.dump_after = "search";
  ASSERT_TRUE(Optimize(Small(), *rules, options, &out, &report).ok());
  EXPECT_EQ(report.dump_text, "output (relu x)\n");
}

}  // namespace
}  // namespace verisub::rewriter
