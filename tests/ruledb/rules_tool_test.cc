// verisub-rules: stats, dump, diff and check on files written from the fixture.
#include "ruledb/rules_tool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/ruledb/fixture.h"

namespace verisub::ruledb {
namespace {

class RulesToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/rules_tool_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
    auto rules = testing::LoadFixtureRules();
    ASSERT_TRUE(rules.ok()) << rules.status().message();
    rules_ = *rules;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::vector<Rule>& rules,
                    const DatabaseHeader& h = testing::TestHeader()) {
    std::string path = dir_ + "/" + name;
    EXPECT_TRUE(WriteRuleDatabase(path, h, rules).ok());
    return path;
  }

  int Run(const std::vector<std::string>& args) {
    out_.clear();
    err_.clear();
    return RunRulesTool(args, &out_, &err_);
  }

  std::string dir_, out_, err_;
  std::vector<Rule> rules_;
};

TEST_F(RulesToolTest, Stats) {
  std::string path = Write("a.pb", rules_);
  ASSERT_EQ(Run({"stats", path}), 0) << err_;
  EXPECT_NE(out_.find("rules: " + std::to_string(rules_.size()) + "\nwith input ranks: 0\n"),
            std::string::npos);
  EXPECT_NE(out_.find("by operator (rules using it):\n"), std::string::npos);
  EXPECT_NE(out_.find("  matmul: "), std::string::npos);
  EXPECT_NE(out_.find("  proved: " + std::to_string(rules_.size())), std::string::npos) << out_;
  EXPECT_NE(out_.find("  batchnorm: 1\n"), std::string::npos);
  EXPECT_NE(out_.find("  reshape: 1\n"), std::string::npos);
}

TEST_F(RulesToolTest, DumpPrintsTheTextFileOfEitherForm) {
  std::string path = Write("a.pb", rules_);
  auto text = ReadFile(TextPathFor(path));
  ASSERT_TRUE(text.ok());
  ASSERT_EQ(Run({"dump", path}), 0) << err_;
  EXPECT_EQ(out_, *text);
  ASSERT_EQ(Run({"dump", TextPathFor(path)}), 0) << err_;
  EXPECT_EQ(out_, *text);
}

TEST_F(RulesToolTest, DiffByIdAndItsTwin) {
  std::vector<Rule> changed = rules_;
  Rule removed = changed[5];
  changed.erase(changed.begin() + 5);
  auto extra = ParseRule("(relu (relu ?a)) => (relu ?a)");
  ASSERT_TRUE(extra.ok());
  extra->proof.status = ProofStatus::kProved;
  changed.push_back(*extra);
  std::string a = Write("a.pb", rules_), b = Write("b.pb", changed);
  ASSERT_EQ(Run({"diff", a, b}), 0) << err_;
  EXPECT_EQ(out_, "- " + removed.Id() + " " + removed.ToText() + "\n+ " + extra->Id() + " " +
                      extra->ToText() + "\n1 added, 1 removed, " +
                      std::to_string(rules_.size() - 1) + " unchanged\n");
  ASSERT_EQ(Run({"diff", a, a}), 0);
  EXPECT_EQ(out_, "0 added, 0 removed, " + std::to_string(rules_.size()) + " unchanged\n");
}

TEST_F(RulesToolTest, CheckPassesAGoodFile) {
  ASSERT_EQ(Run({"check", Write("a.pb", rules_)}), 0) << out_ << err_;
  EXPECT_NE(out_.find("(matches this build)"), std::string::npos);
  EXPECT_EQ(out_.substr(out_.size() - 3), "OK\n");
}

TEST_F(RulesToolTest, CheckFailsUnprovedRulesAndOtherOpSets) {
  std::vector<Rule> rules = rules_;
  rules[0].proof = {ProofStatus::kTimeout, {}, 10, "timeout"};
  EXPECT_EQ(Run({"check", Write("a.pb", rules)}), 1);
  EXPECT_NE(out_.find("not proved (timeout): " + Canonicalize(rules[0]).Id()), std::string::npos)
      << out_;
  EXPECT_EQ(out_.substr(out_.size() - 7), "FAILED\n");
  DatabaseHeader h = testing::TestHeader();
  h.op_set_fingerprint = "00000000deadbeef";
  EXPECT_EQ(Run({"check", Write("b.pb", rules_, h)}), 1);
  EXPECT_NE(out_.find("MISMATCH"), std::string::npos);
  EXPECT_NE(err_.find("warning: "), std::string::npos);
}

TEST_F(RulesToolTest, UsageAndUnreadableFiles) {
  EXPECT_EQ(Run({}), 2);
  EXPECT_NE(err_.find("usage: verisub-rules"), std::string::npos);
  EXPECT_EQ(Run({"frob", "x"}), 2);
  EXPECT_EQ(Run({"diff", "x"}), 2);
  EXPECT_EQ(Run({"stats", "x", "--frob"}), 2);
  EXPECT_NE(err_.find("unknown flag '--frob'"), std::string::npos) << err_;
  err_.clear();
  EXPECT_EQ(Run({"--help"}), 0);
  EXPECT_NE(out_.find("usage: verisub-rules"), std::string::npos) << out_;
  EXPECT_EQ(err_, "");
  EXPECT_EQ(Run({"stats", dir_ + "/none.pb"}), 1);
  EXPECT_EQ(err_, dir_ + "/none.pb: cannot open\n");
  std::string garbage = dir_ + "/garbage.pb";
  ASSERT_TRUE(WriteFileAtomically(garbage, "\xff\xff\xff not protobuf").ok());
  EXPECT_EQ(Run({"dump", garbage}), 1);
  EXPECT_NE(err_.find(garbage + ": "), std::string::npos) << err_;
}

}  // namespace
}  // namespace verisub::ruledb
