// verisub-models on the command line: an output directory must exist (it created the whole tree
// before; issue 17 asks every program to refuse, as the others do), and every name is checked
// before anything is written.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;

int RunModelsCli(const std::string& args) {
  std::string cmd = std::string(VERISUB_MODELS_CLI) + " " + args + " > /dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

fs::path FreshDir(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(ModelsCliTest, MissingOutputDirectoryIsRefusedAndNotCreated) {
  fs::path dir = FreshDir("models_cli_missing");
  fs::path missing = dir / "no" / "such";
  EXPECT_EQ(RunModelsCli("--out " + missing.string() + " nasrnn"), 2);
  EXPECT_FALSE(fs::exists(dir / "no"));
  fs::remove_all(dir);
}

TEST(ModelsCliTest, AnUnknownNameIsRefusedBeforeAnythingIsWritten) {
  fs::path dir = FreshDir("models_cli_unknown");
  EXPECT_EQ(RunModelsCli("--out " + dir.string() + " nasrnn no_such_model"), 2);
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(ModelsCliTest, WritesIntoAnExistingDirectory) {
  fs::path dir = FreshDir("models_cli_writes");
  EXPECT_EQ(RunModelsCli("--out " + dir.string() + " nasrnn"), 0);
  EXPECT_TRUE(fs::exists(dir / "nasrnn.onnx"));
  fs::remove_all(dir);
}

}  // namespace
