// Memory budgets as the user sets them (--max-memory-mb): one tensor, all the weights at import
// (and the model file before it is parsed), and the reference executor's live tensors, each
// refused with the tensor, file or node named; verisub-onnx maps them to exit 1, a bad value to 2.
#include "runtime/memory_budget.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

namespace fs = std::filesystem;

// Two 64 KiB weights (float [128,128]) feeding a 1x128 input through two MatMuls.
std::string TwoWeightModel() {
  testing::ModelBuilder b;
  b.Input("x", {1, 128}).Output("y", {1, 128});
  b.RandomWeight("w1", {128, 128}, 1).RandomWeight("w2", {128, 128}, 2);
  b.Node("MatMul", {"x", "w1"}, {"h"}, "mm1");
  b.Node("MatMul", {"h", "w2"}, {"y"}, "mm2");
  return b.Bytes();
}

TEST(MemoryBudgetTest, FromMbSetsATensorAndATotalBound) {
  MemoryBudget none = MemoryBudgetFromMb(0);
  EXPECT_EQ(none.max_tensor_bytes, int64_t{4} << 30);
  EXPECT_EQ(none.max_total_bytes, 0);
  MemoryBudget two = MemoryBudgetFromMb(2);
  EXPECT_EQ(two.max_tensor_bytes, 2 << 20);
  EXPECT_EQ(two.max_total_bytes, 2 << 20);
  EXPECT_GT(MemoryBudgetFromMb(int64_t{1} << 60).max_total_bytes, 0);  // saturates
}

TEST(MemoryBudgetTest, WeightsTogetherOverTheBudgetAreRefusedAtImport) {
  ImportOptions o;
  o.memory.max_total_bytes = 100000;  // each weight (65536 bytes) fits, both do not
  auto g = ImportOnnxBytes(TwoWeightModel(), "two.onnx", o);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("two.onnx"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("the weights need 131072 bytes in all"), std::string::npos)
      << g.status().message();
  o.memory.max_total_bytes = 140000;
  EXPECT_TRUE(ImportOnnxBytes(TwoWeightModel(), "two.onnx", o).ok());
}

TEST(MemoryBudgetTest, AModelFileOverTheBudgetIsRefusedBeforeParsing) {
  fs::path path = fs::temp_directory_path() / "verisub_memory_budget_file.onnx";
  std::ofstream(path, std::ios::binary) << TwoWeightModel();
  ImportOptions o;
  o.memory.max_total_bytes = 50000;
  auto g = ImportOnnxFile(path.string(), o);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("the model file has"), std::string::npos)
      << g.status().message();
  fs::remove(path);
}

TEST(MemoryBudgetTest, TheExecutorsPeakOfLiveTensorsIsCheckedNamingTheNode) {
  auto g = ImportOnnxBytes(TwoWeightModel(), "two.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  // As doubles: weights 2 x 131072, input 1024, each intermediate 1024.
  MemoryBudget tight;
  tight.max_total_bytes = 2 * 131072 + 1024;  // weights and input, no room for an output
  Status st = CheckMemoryBudget(*g, tight, /*executor=*/true);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("at node"), std::string::npos) << st.message();
  auto run = Execute(*g, testing::RandomInputs(*g, 1), tight);
  EXPECT_FALSE(run.ok());
  MemoryBudget enough;
  enough.max_total_bytes = 2 * 131072 + 3 * 1024;  // x, h and y at most alive together
  EXPECT_TRUE(CheckMemoryBudget(*g, enough, /*executor=*/true).ok());
  EXPECT_TRUE(Execute(*g, testing::RandomInputs(*g, 1), enough).ok());
}

#ifdef VERISUB_ONNX_CLI
int RunOnnxCli(const std::string& args) {
  std::string cmd = std::string(VERISUB_ONNX_CLI) + " " + args + " > /dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(MemoryBudgetTest, VerisubOnnxTakesMaxMemoryMb) {
  const std::string model = "data/models/squeezenet1_1.onnx";    // 2.9 MB of weights
  EXPECT_EQ(RunOnnxCli(model + " --max-memory-mb 1"), 1);        // the file does not fit
  EXPECT_EQ(RunOnnxCli(model + " --max-memory-mb 3 --run"), 1);  // the executor does not
  EXPECT_EQ(RunOnnxCli(model + " --max-memory-mb 64 --run"), 0);
  EXPECT_EQ(RunOnnxCli(model + " --max-memory-mb -1"), 2);
  EXPECT_EQ(RunOnnxCli(model + " --max-memory-mb lots"), 2);
}
#endif

}  // namespace
}  // namespace verisub::runtime
