// End-to-end soundness on committed models: every data/models/*.onnx (PyTorch exports), when
// present, optimized with the hand-written rules computes the same outputs as the original.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "rewriter/optimize.h"
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

TEST(ModelsTest, CommittedModelsStayEquivalent) {
  std::vector<std::string> models = CommittedModels();
  if (models.empty()) GTEST_SKIP() << "no data/models/*.onnx in this tree";
  auto rules = testing::HandwrittenRules();
  ASSERT_NE(rules, nullptr);
  OptimizeOptions options;
  options.search.time_limit_s = 0;
  options.search.budget = 100;
  for (const std::string& path : models) {
    SCOPED_TRACE(path);
    auto g = runtime::ImportOnnxFile(path);
    ASSERT_TRUE(g.ok()) << g.status().message();
    runtime::Graph out;
    OptimizeReport report;
    Status st = Optimize(*g, *rules, options, &out, &report);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_LE(report.search.cost_after_us, report.search.cost_before_us);
    VerifyReport vr;
    Status v = CompareOutputs(*g, out, {}, &vr);
    EXPECT_TRUE(v.ok()) << v.message();
  }
}

}  // namespace
}  // namespace verisub::rewriter
