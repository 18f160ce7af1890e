// The differential fuzzing loop of `make fuzz` (diff_fuzz/diff_fuzz.h) on a small count: the
// shipped rules keep random graphs equivalent, the results do not depend on the thread count,
// and an unsound rule is caught with a replayable model and seed.
#include "tests/rewriter/diff_fuzz/diff_fuzz.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "rewriter/interface.h"
#include "rewriter/rule_source.h"
#include "runtime/onnx_import.h"
#include "tests/rewriter/random_graphs.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter::testing {
namespace {

DiffFuzzOptions SmallRun(int64_t graphs, int threads) {
  DiffFuzzOptions o;
  o.graphs = graphs;
  o.threads = threads;
  o.settings = DefaultAndAggressiveSettings(/*aggressive_budget=*/100);
  o.round = 16;
  return o;
}

TEST(DiffFuzzTest, ShippedRulesKeepRandomGraphsEquivalent) {
  auto rules = ShippedRules();
  ASSERT_NE(rules, nullptr);
  DiffFuzzReport report;
  int progress_calls = 0;
  ASSERT_TRUE(RunDiffFuzz(*rules, SmallRun(48, 2), &report, [&](const DiffFuzzReport&) {
                ++progress_calls;
              }).ok());
  EXPECT_EQ(report.seeds, 48);
  EXPECT_EQ(progress_calls, 3);  // one per round of 16
  EXPECT_EQ(report.optimized, 2 * report.graphs);
  EXPECT_EQ(report.compared, 2 * report.graphs);
  EXPECT_GT(report.rewritten, 5);  // the rules do fire, so the comparison means something
  EXPECT_FALSE(report.rule_uses.empty());
  for (const DiffFuzzFailure& f : report.failures)
    ADD_FAILURE() << "seed " << f.seed << " (" << f.setting << "): " << f.why;
}

TEST(DiffFuzzTest, ResultsDoNotDependOnTheThreadCount) {
  auto rules = ShippedRules();
  ASSERT_NE(rules, nullptr);
  DiffFuzzReport one, two;
  ASSERT_TRUE(RunDiffFuzz(*rules, SmallRun(24, 1), &one).ok());
  ASSERT_TRUE(RunDiffFuzz(*rules, SmallRun(24, 2), &two).ok());
  EXPECT_EQ(one.graphs, two.graphs);
  EXPECT_EQ(one.rewritten, two.rewritten);
  EXPECT_EQ(one.cheaper, two.cheaper);
  EXPECT_EQ(one.rule_uses, two.rule_uses);
  EXPECT_EQ(one.rewritten_by_setting, two.rewritten_by_setting);
}

TEST(DiffFuzzTest, AnUnsoundRuleIsCaughtWithAReplayableModelAndSeed) {
  auto rules = Rules({"(tanh ?a) => ?a"});  // cheaper, and wrong
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "diff_fuzz_failures";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  DiffFuzzOptions options = SmallRun(30, 2);
  options.failures_dir = dir.string();
  DiffFuzzReport report;
  ASSERT_TRUE(RunDiffFuzz(*rules, options, &report).ok());
  ASSERT_FALSE(report.failures.empty());
  EXPECT_LT(report.compared, report.optimized);
  std::set<uint64_t> seeds;
  for (const DiffFuzzFailure& f : report.failures) {
    EXPECT_NE(f.why.find("compare"), std::string::npos) << f.why;
    seeds.insert(f.seed);
    // The written model is the graph of that seed: same interface, and importable.
    ASSERT_EQ(
        f.replay,
        (dir / ("diff_fuzz_seed" + std::to_string(f.seed) + "_" + f.setting + ".onnx")).string());
    auto imported = runtime::ImportOnnxFile(f.replay);
    ASSERT_TRUE(imported.ok()) << imported.status().message();
    runtime::Graph original = RandomGraph(f.seed);
    EXPECT_EQ(InterfaceOf(*imported).outputs, InterfaceOf(original).outputs);
    EXPECT_EQ(InterfaceOf(*imported).inputs, InterfaceOf(original).inputs);
  }
  // The seed alone replays the failure.
  DiffFuzzOptions replay = SmallRun(1, 1);
  replay.first_seed = *seeds.begin();
  DiffFuzzReport again;
  ASSERT_TRUE(RunDiffFuzz(*rules, replay, &again).ok());
  EXPECT_FALSE(again.failures.empty());
  std::filesystem::remove_all(dir);
}

TEST(DiffFuzzTest, BadOptionsAreErrors) {
  auto rules = Rules({"(relu (relu ?a)) => (relu ?a)"});
  DiffFuzzReport report;
  DiffFuzzOptions none = SmallRun(1, 1);
  none.settings.clear();
  EXPECT_FALSE(RunDiffFuzz(*rules, none, &report).ok());
  DiffFuzzOptions threads = SmallRun(1, 100000);
  EXPECT_FALSE(RunDiffFuzz(*rules, threads, &report).ok());
  DiffFuzzOptions missing = SmallRun(1, 1);
  missing.failures_dir = "/nonexistent/verisub/dir";
  EXPECT_FALSE(RunDiffFuzz(*rules, missing, &report).ok());
}

}  // namespace
}  // namespace verisub::rewriter::testing
