// Generator configs within the documented limits that ran out of memory or ran for minutes
// without a word: refused before the run with the estimate, or stopped by the memory budget
// with the count, quickly.
#include "gen/estimate.h"

#include <gtest/gtest.h>

#include "gen/config.h"
#include "gen/generator.h"
#include "gen/progress.h"

namespace verisub::gen {
namespace {

GenConfig Parse(const std::string& text) {
  auto c = ParseConfig(text, "test.cfg");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : GenConfig();
}

TEST(EstimateTest, A100000x100000InputIsRefusedBeforeTheRunNamingIt) {
  GenConfig c = Parse("max_ops 2\ninput x [100000,100000]\ninput y [100000,100000]\nop ewadd\n");
  auto e = EstimateGeneration(c, 2, kDefaultGenMemoryBudget);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("largest input 'x'"), std::string::npos)
      << e.status().message();
  EXPECT_NE(e.status().message().find("memory budget"), std::string::npos);
  GenOptions options;
  options.progress = false;
  auto run = RunGenerator(c, options);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kFailedPrecondition);
}

TEST(EstimateTest, SmallConfigFitsAndTheBoundGrowsWithMaxOps) {
  GenConfig one = Parse("max_ops 1\ninput x [2,2]\ninput y [2,2]\nop ewadd\nop relu\n");
  GenConfig three = one;
  three.max_ops = 3;
  auto a = EstimateGeneration(one, 1, kDefaultGenMemoryBudget);
  auto b = EstimateGeneration(three, 1, kDefaultGenMemoryBudget);
  ASSERT_TRUE(a.ok() && b.ok());
  // max_ops 1: ewadd on 2 tensors (4 choices) + relu (2): at most 6 graphs.
  EXPECT_DOUBLE_EQ(a->graphs_upper_bound, 6);
  EXPECT_GT(b->graphs_upper_bound, a->graphs_upper_bound);
  EXPECT_GT(a->max_graphs_in_budget, uint64_t{1} << 20);
  EXPECT_NE(a->Summary().find("estimate:"), std::string::npos);
}

TEST(EstimateTest, MaxOps8With41InputsStopsAtTheMemoryBudgetWithAnError) {
  std::string text = "max_ops 8\n";
  for (int i = 0; i < 41; ++i) text += "input x" + std::to_string(i) + " [2,2]\n";
  text += "op ewadd\nop ewmul\nop relu\n";
  GenConfig c = Parse(text);
  GenOptions options;
  options.progress = false;
  options.threads = 1;
  options.memory_budget_bytes = uint64_t{16} << 20;  // a few hundred thousand graphs
  auto run = RunGenerator(c, options);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("memory budget of 16 MiB"), std::string::npos)
      << run.status().message();
  EXPECT_NE(run.status().message().find("max_graphs"), std::string::npos);
}

TEST(EstimateTest, AUserGraphLimitBelowTheBudgetStillStopsQuietly) {
  GenConfig c = Parse(
      "max_ops 3\nmax_graphs 100\ninput x [2,2]\ninput y [2,2]\nop ewadd\n"
      "op relu\n");
  GenOptions options;
  options.progress = false;
  auto run = RunGenerator(c, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_TRUE(run->report.enumeration.stopped_early);
}

// Issue 17: a 4000x4000 matmul (tests/fuzz/corpus/gen_config/regress_slow_matmul.cfg) ran past
// 60 s without a word. The estimate flags it before the run (RunGenerator then warns), and the
// progress line names every phase, so a slow one is seen.
TEST(EstimateTest, A4000x4000MatmulIsFlaggedSlowBeforeTheRun) {
  GenConfig c =
      Parse("max_ops 1\ninput x [4000,4000]\ninput y [4000,4000]\nop matmul activation=none\n");
  auto e = EstimateGeneration(c, 2, kDefaultGenMemoryBudget);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_GT(e->largest_input_elements, kSlowInputElements);
  GenConfig small =
      Parse("max_ops 1\ninput x [40,40]\ninput y [40,40]\nop matmul activation=none\n");
  auto f = EstimateGeneration(small, 2, kDefaultGenMemoryBudget);
  ASSERT_TRUE(f.ok());
  EXPECT_LE(f->largest_input_elements, kSlowInputElements);
}

TEST(EstimateTest, TheProgressLineNamesEveryPhase) {
  ProgressCounters counters;
  const char* phases[] = {"set-up", "enumerate", "test pairs", "done"};
  for (int stage = 0; stage < 4; ++stage) {
    counters.stage = stage;
    std::string line = ProgressLine(counters, 1.5);
    EXPECT_NE(line.find(phases[stage]), std::string::npos) << line;
    EXPECT_NE(line.find("graphs"), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace verisub::gen
