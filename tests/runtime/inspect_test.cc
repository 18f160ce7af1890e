// verisub-onnx's library call: the summary, the reference run and the export; errors keep what
// was reported before them.
#include "runtime/inspect.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "base/file_io.h"
#include "runtime/graph_hash.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

namespace fs = std::filesystem;

class InspectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("verisub_inspect_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = (dir_ / "cnn.onnx").string();
    ASSERT_TRUE(base::WriteFileAtomically(model_, testing::SmallCnnBytes()).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string model_;
};

TEST_F(InspectTest, SummarizesRunsAndExports) {
  InspectOptions options;
  options.model_path = model_;
  options.run = true;
  options.output_path = (dir_ / "out.onnx").string();
  std::string report;
  Status st = InspectModel(options, &report);
  ASSERT_TRUE(st.ok()) << st.message();
  auto g = ImportOnnxFile(model_);
  ASSERT_TRUE(g.ok()) << g.status().message();
  char hash[40];
  std::snprintf(hash, sizeof hash, "hash: %016llx\n",
                static_cast<unsigned long long>(StructuralHash(*g)));
  EXPECT_NE(report.find("nodes: " + std::to_string(g->num_nodes()) + "\n"), std::string::npos)
      << report;
  EXPECT_NE(report.find(hash), std::string::npos) << report;
  EXPECT_NE(report.find("run_seconds: "), std::string::npos) << report;
  EXPECT_NE(report.find(" sum="), std::string::npos) << report;
  EXPECT_NE(report.find("wrote: " + options.output_path), std::string::npos) << report;
  auto back = ImportOnnxFile(options.output_path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(StructuralHash(*back), StructuralHash(*g));
}

TEST_F(InspectTest, ErrorsKeepTheReportSoFar) {
  InspectOptions options;
  options.model_path = (dir_ / "missing.onnx").string();
  std::string report;
  EXPECT_FALSE(InspectModel(options, &report).ok());
  EXPECT_TRUE(report.empty());

  options.model_path = model_;
  options.output_path = (dir_ / "no_such_dir" / "out.onnx").string();
  Status st = InspectModel(options, &report);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(report.find("hash: "), std::string::npos) << report;
  EXPECT_EQ(report.find("wrote: "), std::string::npos) << report;
}

}  // namespace
}  // namespace verisub::runtime
