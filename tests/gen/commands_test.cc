// verisub-gen's modes as library calls: the operator-set listing, and the candidates mode with
// its exit codes (written, bad config, reference rules missing).
#include "gen/commands.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/file_io.h"
#include "ruledb/rule.h"
#include "specs/registry.h"

namespace verisub::gen {
namespace {

namespace fs = std::filesystem;

constexpr const char* kConfig = R"(
max_ops 2
input x0 [2,3]
input x1 [2,3]
op ewadd
op ewmul
)";

class CommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("verisub_gen_commands_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    command_.config_path = Write("small.cfg", kConfig);
    command_.out_path = (dir_ / "candidates.txt").string();
    command_.threads = 1;
    command_.progress = false;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(base::WriteFileAtomically(path, text).ok());
    return path;
  }

  fs::path dir_;
  CandidatesCommand command_;
};

TEST(ListOpSetTest, ListsEveryOperatorAndTheFingerprint) {
  std::string out, err;
  ASSERT_EQ(ListOpSet(&out, &err), kExitOk) << err;
  EXPECT_TRUE(err.empty());
  for (const specs::OpSpec& op : specs::AllOps())
    EXPECT_NE(out.find("\n" + op.name + " "), std::string::npos) << op.name;
  EXPECT_NE(out.find("op-set fingerprint " + specs::OpSetFingerprintHex() + "\n"),
            std::string::npos)
      << out;
}

TEST_F(CommandsTest, WritesCandidatesThatParse) {
  std::string out, err;
  ASSERT_EQ(WriteCandidatesCommand(command_, &out, &err), kExitOk) << err;
  EXPECT_NE(out.find("candidates written to " + command_.out_path), std::string::npos) << out;
  auto text = base::ReadFile(command_.out_path);
  ASSERT_TRUE(text.ok()) << text.status().message();
  ASSERT_FALSE(text->empty());
  const std::string first = text->substr(0, text->find('\n'));
  EXPECT_TRUE(ruledb::ParseRule(first).ok()) << first;
}

TEST_F(CommandsTest, BadConfigIsAUsageError) {
  command_.config_path = (dir_ / "missing.cfg").string();
  std::string out, err;
  EXPECT_EQ(WriteCandidatesCommand(command_, &out, &err), kExitUsage);
  EXPECT_EQ(err.rfind("verisub-gen: ", 0), 0u) << err;
  EXPECT_FALSE(fs::exists(command_.out_path));
}

TEST_F(CommandsTest, MissingReferenceRulesAreReported) {
  // relu is not in the config's operator set, so this rule cannot be a candidate.
  command_.reference_path = Write("reference.txt", "(relu (relu ?a)) => (relu ?a)\n");
  std::string out, err;
  EXPECT_EQ(WriteCandidatesCommand(command_, &out, &err), kExitMissingRules) << err;
  EXPECT_NE(out.find("missing: (relu (relu ?a)) => (relu ?a)"), std::string::npos) << out;
}

}  // namespace
}  // namespace verisub::gen
