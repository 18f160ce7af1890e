// Rewriter fuzzer: random small graphs of spec operators, optimized with the hand-written rules
// and with the shipped database, must compute the same outputs as before (reference executor)
// and pass the graph checker.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "rewriter/optimize.h"
#include "rewriter/rule_source.h"
#include "rewriter/verify_outputs.h"
#include "tests/rewriter/random_graphs.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

// Optimizes 60 random graphs with `rules`; returns how many got cheaper.
int FuzzWith(const RuleSet& rules) {
  OptimizeOptions options;
  options.search.time_limit_s = 0;
  options.check_after_each_pass = true;  // the checker between passes
  options.search.budget = 40;
  options.search.min_gain = 0;  // every cheaper graph, however little: the rewrites are under test
  int improved = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    runtime::Graph g = seed % 2 ? testing::RandomConvGraph(seed) : testing::RandomMatmulGraph(seed);
    if (g.outputs().empty()) continue;
    runtime::Graph out;
    OptimizeReport report;
    Status st = Optimize(g, rules, options, &out, &report);
    EXPECT_TRUE(st.ok()) << "seed " << seed << ": " << st.message();
    if (!st.ok()) continue;
    EXPECT_TRUE(runtime::CheckGraph(out).ok()) << "seed " << seed;
    EXPECT_LE(report.search.cost_after_us, report.search.cost_before_us) << "seed " << seed;
    improved += report.search.cost_after_us < report.search.cost_before_us;
    VerifyOptions vo;
    vo.seed = seed;
    VerifyReport vr;
    Status v = CompareOutputs(g, out, vo, &vr);
    EXPECT_TRUE(v.ok()) << "seed " << seed << ": " << v.message();
  }
  return improved;
}

TEST(RewriterFuzzTest, RandomGraphsStayEquivalent) {
  auto rules = testing::HandwrittenRules();
  ASSERT_NE(rules, nullptr);
  EXPECT_GT(FuzzWith(*rules), 10);  // the rules do fire on these graphs
}

TEST(RewriterFuzzTest, RandomGraphsStayEquivalentWithTheShippedRules) {
  auto rules = testing::ShippedRules();
  ASSERT_NE(rules, nullptr);
  EXPECT_GT(FuzzWith(*rules), 10);
}

}  // namespace
}  // namespace verisub::rewriter
