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
#include "runtime/graph_text.h"
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
// compares outputs with the original. Returns the rewrites the result took; the result in *out.
int ExpectOptimizedEquivalent(const runtime::Graph& g, const RuleSet& rules,
                              runtime::Graph* result = nullptr) {
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
  if (result) *result = std::move(out);
  return report.search.rewrite_steps;
}

// An Inception block's parallel 1x1 convolutions of one input, each with its bias and ReLU as
// the importer writes them: under the default (V100) costs the shipped rules fuse each into the
// three-input conv2d_bias and merge them, kernels and biases concatenated, into one convolution
// whose output the concat then needs whole (the split and concat cancel), as TASO merges
// Inception's branches, and the outputs stay the same.
TEST(ModelsTest, ParallelBiasedConvolutionsMergeWithTheirBiases) {
  auto shipped = testing::ShippedRules();
  ASSERT_NE(shipped, nullptr);
  testing::GraphBuilder b;
  const int x = b.Input("x", {1, 64, 14, 14});
  std::vector<int> branches;
  uint64_t seed = 1;
  for (int64_t out : {32, 48, 16}) {
    const std::string n = std::to_string(out);
    const int conv = b.Op("conv2d[padding=valid]", {x, b.Weight("w" + n, {out, 64, 1, 1}, seed++)});
    const int bias = b.Op("bias_add[axis=1]", {conv, b.Weight("b" + n, {out}, seed++)});
    branches.push_back(b.Op("relu", {bias}));
  }
  b.Output(
      b.Op("concat[axis=1]", {b.Op("concat[axis=1]", {branches[0], branches[1]}), branches[2]}));
  runtime::Graph g = b.Finish();
  runtime::Graph out;
  EXPECT_GT(ExpectOptimizedEquivalent(g, *shipped, &out), 0);
  EXPECT_EQ(testing::CountOp(out, "conv2d_bias") + testing::CountOp(out, "conv2d"), 1)
      << runtime::PrintGraphText(out);
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
