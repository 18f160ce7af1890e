// End-to-end soundness: the committed PyTorch exports (data/models/*.onnx) and every benchmark
// model (runtime/models, with small images and a small BERT so the reference executor stays
// quick), optimized with the shipped rules database at default settings, compute the same
// outputs as the originals in the reference executor.
#include "runtime/models/models.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "rewriter/optimize.h"
#include "rewriter/rule_source.h"
#include "rewriter/verify_outputs.h"
#include "runtime/onnx_import.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> CommittedModels() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("data/models", ec))
    if (e.path().extension() == ".onnx") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Optimizes `g` with default settings (no time limit, so the result is deterministic) and
// compares outputs with the original. Returns the rewrites the result took.
int ExpectOptimizedEquivalent(const runtime::Graph& g, const RuleSet& rules) {
  OptimizeOptions options;
  options.search.time_limit_s = 0;
  options.check_after_each_pass = true;  // the checker between passes
  runtime::Graph out;
  OptimizeReport report;
  Status st = Optimize(g, rules, options, &out, &report);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return 0;
  EXPECT_LE(report.search.cost_after_us, report.search.cost_before_us);
  VerifyReport vr;
  Status v = CompareOutputs(g, out, {}, &vr);
  EXPECT_TRUE(v.ok()) << v.message();
  EXPECT_GT(vr.elements_compared, 0);
  return report.search.rewrite_steps;
}

TEST(ModelsTest, CommittedModelsStayEquivalent) {
  std::vector<std::string> models = CommittedModels();
  if (models.empty()) GTEST_SKIP() << "no data/models/*.onnx in this tree";
  auto shipped = testing::ShippedRules();
  auto handwritten = testing::HandwrittenRules();
  ASSERT_NE(shipped, nullptr);
  ASSERT_NE(handwritten, nullptr);
  for (const std::string& path : models) {
    SCOPED_TRACE(path);
    auto g = runtime::ImportOnnxFile(path);
    ASSERT_TRUE(g.ok()) << g.status().message();
    ExpectOptimizedEquivalent(*g, *shipped);
    ExpectOptimizedEquivalent(*g, *handwritten);
  }
}

TEST(ModelsTest, BenchmarkModelsStayEquivalentWithTheShippedRules) {
  auto shipped = testing::ShippedRules();
  ASSERT_NE(shipped, nullptr);
  runtime::models::BuildOptions options;
  options.image_size = 96;  // every layer and connection of the full-size networks
  int built = 0, rewrites = 0;
  for (const runtime::models::ModelEntry& m : runtime::models::ListModels()) {
    if (m.name.rfind("bert", 0) == 0) continue;  // below, with a small configuration
    SCOPED_TRACE(std::string(m.name));
    auto g = runtime::ImportOnnxModel(m.build(options), std::string(m.name));
    ASSERT_TRUE(g.ok()) << g.status().message();
    rewrites += ExpectOptimizedEquivalent(*g, *shipped);
    ++built;
  }
  EXPECT_GE(built, 7);
  runtime::models::BertConfig bert;
  bert.layers = 2;
  bert.hidden = 64;
  bert.heads = 4;
  bert.sequence = 16;
  bert.intermediate = 256;
  auto g = runtime::ImportOnnxModel(runtime::models::BuildBert(bert, options), "bert");
  ASSERT_TRUE(g.ok()) << g.status().message();
  rewrites += ExpectOptimizedEquivalent(*g, *shipped);
  EXPECT_GT(rewrites, 0);  // the comparison had rewritten graphs to check
}

}  // namespace
}  // namespace verisub::rewriter
