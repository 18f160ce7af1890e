// The command line: --verify writes exactly the proved rules; bad usage is exit code 2.
#include "verify/cli.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "verify/candidates.h"

namespace verisub::verify {
namespace {

int RunVerifyCli(std::vector<std::string> args) {
  args.insert(args.begin(), "verisub-verify");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return RunCli(static_cast<int>(argv.size()), argv.data());
}

TEST(CliTest, VerifyWritesOnlyProvedRules) {
  auto dir = std::filesystem::temp_directory_path() / "verisub_cli_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string in = (dir / "candidates.txt").string(), out = (dir / "proved.txt").string();
  std::filesystem::create_directories(dir / "smt2");
  {
    std::ofstream f(in);
    f << "# two true, one false\n"
      << "(transpose[perm=[1,0]] (transpose[perm=[1,0]] ?a)) => ?a\n"
      << "(relu (ewadd ?a ?b)) => (ewadd (relu ?a) (relu ?b))\n"
      << "(ewadd ?a ?b) => (ewadd ?b ?a)\n";
  }
  ASSERT_EQ(RunVerifyCli({"--verify", in, "--out", out, "--threads", "1", "--smt2-dir",
                          (dir / "smt2").string()}),
            0);
  auto proved = ReadCandidates(out);
  ASSERT_TRUE(proved.ok()) << proved.status().message();
  ASSERT_EQ(proved->size(), 2u);
  EXPECT_EQ((*proved)[0].ToText(), "(transpose[perm=[1,0]] (transpose[perm=[1,0]] ?a)) => ?a");
  EXPECT_EQ((*proved)[1].ToText(), "(ewadd ?a ?b) => (ewadd ?b ?a)");
  EXPECT_TRUE(std::filesystem::exists(dir / "smt2" / "rule-00001.smt2"));
}

TEST(CliTest, AnOutputThatCannotBeWrittenIsReportedBeforeTheProofs) {
  auto dir = std::filesystem::temp_directory_path() / "verisub_cli_out_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string in = (dir / "candidates.txt").string();
  {
    std::ofstream f(in);
    f << "(ewadd ?a ?b) => (ewadd ?b ?a)\n";
  }
  std::string out = (dir / "missing" / "proved.txt").string();
  EXPECT_EQ(RunVerifyCli({"--verify", in, "--out", out, "--threads", "1"}), 2);
  EXPECT_FALSE(std::filesystem::exists(out));
  // A directory where the file should be: the atomic write fails, nothing is left behind.
  std::filesystem::create_directories(dir / "taken.txt");
  EXPECT_EQ(RunVerifyCli({"--verify", in, "--out", (dir / "taken.txt").string(), "--threads", "1"}),
            2);
  EXPECT_TRUE(std::filesystem::is_directory(dir / "taken.txt"));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);  // the candidates only: no temporary file left
}

TEST(CliTest, BadUsageIsExitCodeTwo) {
  EXPECT_EQ(RunVerifyCli({}), 2);
  EXPECT_EQ(RunVerifyCli({"--frobnicate"}), 2);
  EXPECT_EQ(RunVerifyCli({"--verify"}), 2);
  EXPECT_EQ(RunVerifyCli({"--verify", "/nonexistent/c.txt"}), 2);
  EXPECT_EQ(RunVerifyCli({"--verify", "x.txt", "--timeout-ms", "soon"}), 2);
  EXPECT_EQ(RunVerifyCli({"--verify", "x.txt", "--validate-axioms"}), 2);
  EXPECT_EQ(RunVerifyCli({"--validate-axioms", "--axioms", "no_such_axiom"}), 2);
}

// Issue 17: each of these ran (a segfault in TBB's teardown after printing, bad_alloc, an
// unbounded run); each is now refused as bad usage before any work.
TEST(CliTest, AbsurdLimitsAreUsageErrors) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunVerifyCli({"--validate-axioms", "--axioms", "matmul_assoc", "--threads", "100000"}),
            2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("--threads"), std::string::npos);
  EXPECT_EQ(RunVerifyCli({"--validate-axioms", "--max-dim", "1000"}), 2);
  EXPECT_EQ(RunVerifyCli({"--validate-axioms", "--max-cases", "0"}), 2);
  EXPECT_EQ(RunVerifyCli({"--validate-axioms", "--max-cases", "-3"}), 2);
  EXPECT_EQ(RunVerifyCli({"--verify", "x.txt", "--rlimit", "99999999999999999999"}), 2);
}

TEST(CliTest, HelpExitsZero) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(RunVerifyCli({"--help"}), 0);
  const std::string help = testing::internal::GetCapturedStdout();
  EXPECT_NE(help.find("usage: verisub-verify"), std::string::npos) << help;
  EXPECT_NE(help.find("--max-dim N"), std::string::npos) << help;
}

TEST(CliTest, ValidateOfValidAxiomsExitsZero) {
  EXPECT_EQ(RunVerifyCli({"--validate-axioms", "--axioms", "matmul_assoc,split0_concat",
                          "--max-dim", "2", "--threads", "1"}),
            0);
  // The --flag=value spelling and a case cap.
  EXPECT_EQ(RunVerifyCli({"--validate-axioms", "--axioms=matmul_assoc", "--max-dim=2",
                          "--max-cases=3", "--threads=1"}),
            0);
}

TEST(CliTest, MissingDumpDirectoryIsRefusedNotCreated) {
  // Was: --smt2-dir /nonexistent/dir created the whole tree.
  auto dir = std::filesystem::temp_directory_path() / "verisub_cli_smt2_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string in = (dir / "c.txt").string();
  std::ofstream(in) << "(ewadd ?a ?b) => (ewadd ?b ?a)\n";
  EXPECT_EQ(RunVerifyCli(
                {"--verify", in, "--threads", "1", "--smt2-dir", (dir / "no" / "such").string()}),
            2);
  EXPECT_FALSE(std::filesystem::exists(dir / "no"));
  EXPECT_EQ(
      RunVerifyCli({"--verify", in, "--threads", "1", "--out", (dir / "no" / "out.txt").string()}),
      2);
  EXPECT_FALSE(std::filesystem::exists(dir / "no"));
}

TEST(CliTest, MissingExtraAxiomsOrADirectoryOfCandidatesIsAnError) {
  auto dir = std::filesystem::temp_directory_path() / "verisub_cli_silent_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string in = (dir / "c.txt").string();
  std::ofstream(in) << "(ewadd ?a ?b) => (ewadd ?b ?a)\n";
  // Was: ignored, and "0 candidates".
  EXPECT_EQ(RunVerifyCli({"--verify", in, "--threads", "1", "--extra-axioms", "/nonexistent"}), 2);
  EXPECT_EQ(RunVerifyCli({"--validate-axioms", "--axioms", "matmul_assoc", "--max-dim", "1",
                          "--extra-axioms", "/nonexistent"}),
            2);
  EXPECT_EQ(RunVerifyCli({"--verify", dir.string(), "--threads", "1"}), 2);
  auto read = ReadCandidates(dir.string());
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("is a directory"), std::string::npos)
      << read.status().message();
}

}  // namespace
}  // namespace verisub::verify
