// The search's memory estimate: a budget that cannot fit is refused before the search starts,
// naming the budget and the largest one that fits; verisub-opt's --max-memory-mb sets it.
#include "rewriter/search_memory.h"

#include <gtest/gtest.h>

#include "rewriter/optimize.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

runtime::Graph ReluChain(int n) {
  testing::GraphBuilder b;
  int v = b.Input("x", {2, 3});
  for (int i = 0; i < n; ++i) v = b.Op("relu", {v});
  b.Output(v);
  return b.Finish();
}

TEST(SearchMemoryTest, GrowsWithTheGraphTheBudgetAndTheQueue) {
  SearchOptions o;
  SearchMemoryEstimate small = EstimateSearchMemory(ReluChain(10), o);
  SearchMemoryEstimate large = EstimateSearchMemory(ReluChain(1000), o);
  EXPECT_GT(large.bytes_per_graph, small.bytes_per_graph);
  EXPECT_EQ(small.graphs, o.budget + 1);
  SearchOptions more = o;
  more.budget = 10 * o.budget;
  more.max_queue = 10 * o.max_queue;
  EXPECT_GT(EstimateSearchMemory(ReluChain(10), more).total_bytes, small.total_bytes);
  more.budget = 1000000000;
  more.max_queue = 1000000000;
  EXPECT_GT(EstimateSearchMemory(ReluChain(1000), more).total_bytes, int64_t{1} << 40);
}

TEST(SearchMemoryTest, ABudgetOverTheLimitIsRefusedWithWhatFits) {
  SearchOptions o;
  o.budget = 1000000;
  Status st = CheckSearchMemory(ReluChain(200), o, int64_t{16} << 20);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("search: a budget of 1000000 graphs"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("a --budget of at most"), std::string::npos) << st.message();
  EXPECT_TRUE(CheckSearchMemory(ReluChain(200), o, 0).ok());  // no bound
  o.budget = 100;
  EXPECT_TRUE(CheckSearchMemory(ReluChain(200), o, int64_t{16} << 20).ok());
}

TEST(SearchMemoryTest, OptimizeRefusesBeforeSearching) {
  auto rules = testing::Rules({"(relu (relu ?a)) => (relu ?a)"});
  OptimizeOptions o;
  o.search.time_limit_s = 0;
  o.search.budget = 100000000;
  o.search.max_memory_bytes = int64_t{8} << 20;
  runtime::Graph out;
  OptimizeReport report;
  Status st = Optimize(ReluChain(50), *rules, o, &out, &report);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("search:"), std::string::npos) << st.message();
  EXPECT_EQ(report.search.graphs_explored, 0);
  o.search.budget = 100;
  EXPECT_TRUE(Optimize(ReluChain(50), *rules, o, &out, &report).ok());
}

}  // namespace
}  // namespace verisub::rewriter
