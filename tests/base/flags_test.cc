// The command-line parser: typed, checked values; one clear error per bad argument; help from
// the table.
#include "base/flags.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace verisub::base {
namespace {

struct Values {
  bool quiet = false;
  int budget = 1000;
  int threads = 0;
  int64_t big = 0;
  uint64_t seed = 1;
  double alpha = 1.05;
  std::string name, out, device = "v100";
  std::vector<std::string> shapes, rest;
};

class FlagsTest : public ::testing::Test {
 protected:
  FlagsTest() : flags_("prog", "MODEL [flags]", "Exit codes: 0 ok.") {
    flags_.Positional("MODEL", &v_.name, "the model")
        .Bool("--quiet", &v_.quiet, "say less")
        .Int("--budget", &v_.budget, 0, 1000000, "graphs to expand")
        .Threads("--threads", &v_.threads, 0, "worker threads")
        .Int64("--big", &v_.big, -5, int64_t{1} << 40, "a large count")
        .Uint64("--seed", &v_.seed, "random seed")
        .Double("--alpha", &v_.alpha, 1.0, 10.0, "cost slack")
        .Path("--output", &v_.out, "where to write")
        .Alias("-o", "--output")
        .Enum("--device", &v_.device, {"v100", "h100"}, "device")
        .Repeated("--shape", &v_.shapes, "NAME=DIMS", "an input shape");
  }
  Status Parse(std::vector<std::string> args) { return flags_.Parse(args); }

  Values v_;
  Flags flags_;
};

TEST_F(FlagsTest, ParsesEveryTypeInBothSpellings) {
  Status st = Parse({"m.onnx", "--quiet", "--budget", "7", "--threads=2", "--big", "-5",
                     "--seed=18446744073709551615", "--alpha", "2.5", "-o", "out.onnx",
                     "--device=h100", "--shape", "x=1,2", "--shape=y=3"});
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(v_.name, "m.onnx");
  EXPECT_TRUE(v_.quiet);
  EXPECT_EQ(v_.budget, 7);
  EXPECT_EQ(v_.threads, 2);
  EXPECT_EQ(v_.big, -5);
  EXPECT_EQ(v_.seed, 18446744073709551615ull);
  EXPECT_EQ(v_.alpha, 2.5);
  EXPECT_EQ(v_.out, "out.onnx");
  EXPECT_EQ(v_.device, "h100");
  EXPECT_EQ(v_.shapes, (std::vector<std::string>{"x=1,2", "y=3"}));
  EXPECT_TRUE(flags_.IsSet("--output"));
  EXPECT_FALSE(flags_.IsSet("--shape") && !flags_.IsSet("--budget"));
}

TEST_F(FlagsTest, DefaultsStayWhenAFlagIsAbsent) {
  ASSERT_TRUE(Parse({"m.onnx"}).ok());
  EXPECT_EQ(v_.budget, 1000);
  EXPECT_EQ(v_.seed, 1u);
  EXPECT_EQ(v_.device, "v100");
  EXPECT_FALSE(flags_.IsSet("--budget"));
}

// Each bad value is refused with a message naming the flag; none is half-applied.
TEST_F(FlagsTest, BadValuesNameTheFlag) {
  const std::vector<std::vector<std::string>> bad = {
      {"m", "--budget", "x"},
      {"m", "--budget", "12abc"},
      {"m", "--budget", "-1"},
      {"m", "--budget", "1000001"},
      {"m", "--budget", "99999999999999999999999"},
      {"m", "--budget", ""},
      {"m", "--budget", " 5"},
      {"m", "--seed", "-1"},
      {"m", "--seed", "18446744073709551616"},
      {"m", "--seed", "1e3"},
      {"m", "--alpha", "0.5"},
      {"m", "--alpha", "nan"},
      {"m", "--alpha", "inf"},
      {"m", "--alpha", "2x"},
      {"m", "--device", "bogus"},
      {"m", "--output", ""},
      {"m", "--big", "1099511627777"},
  };
  for (const auto& args : bad) {
    Values before = v_;
    Status st = Parse(args);
    ASSERT_FALSE(st.ok()) << args[1] << " " << args[2];
    EXPECT_NE(st.message().find(args[1]), std::string::npos) << st.message();
    EXPECT_EQ(v_.budget, before.budget);
  }
}

TEST_F(FlagsTest, ThreadCountsAreCheckedAgainstTheMachine) {
  EXPECT_TRUE(Parse({"m", "--threads", std::to_string(MaxThreads())}).ok());
  Status st = Parse({"m", "--threads", "100000"});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("hardware threads"), std::string::npos) << st.message();
  EXPECT_GE(MaxThreads(), 4);
}

TEST_F(FlagsTest, UsageErrors) {
  EXPECT_NE(Parse({"m", "--frobnicate"}).message().find("unknown flag '--frobnicate'"),
            std::string::npos);
  EXPECT_NE(Parse({"m", "--budget"}).message().find("--budget needs a value"), std::string::npos);
  EXPECT_NE(Parse({"m", "extra"}).message().find("unexpected argument 'extra'"), std::string::npos);
  EXPECT_NE(Parse({"m", "--quiet=1"}).message().find("takes no value"), std::string::npos);
}

TEST_F(FlagsTest, MissingRequiredPositional) {
  Status st = Parse({"--quiet"});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("missing MODEL"), std::string::npos);
}

TEST_F(FlagsTest, HelpComesFromTheTable) {
  ASSERT_TRUE(Parse({"--help"}).ok());
  EXPECT_TRUE(flags_.help_requested());
  const std::string help = flags_.Help();
  EXPECT_EQ(help.rfind("usage: prog MODEL [flags]\n", 0), 0u) << help;
  for (const char* s : {"--budget N", "graphs to expand (an integer in [0, 1000000], default 1000)",
                        "-o, --output PATH", "--device v100|h100", "default v100",
                        "(may be repeated)", "-h, --help", "Exit codes: 0 ok."})
    EXPECT_NE(help.find(s), std::string::npos) << s << "\n" << help;
}

TEST(FlagsListTest, PositionalListTakesTheRest) {
  std::vector<std::string> names;
  bool list = false;
  Flags flags("p", "[NAME...]");
  flags.Bool("--list", &list, "list").Positionals("NAME", &names, "names");
  ASSERT_TRUE(flags.Parse({"a", "--list", "b", "-"}).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "-"}));
  EXPECT_TRUE(list);
}

TEST(FlagsPairTest, TakesTwoValues) {
  std::string pass, file;
  Flags flags("p", "[flags]");
  flags.Pair("--dump-after", &pass, &file, "PASS FILE", "dump");
  ASSERT_TRUE(flags.Parse({"--dump-after", "search", "g.txt"}).ok());
  EXPECT_EQ(pass, "search");
  EXPECT_EQ(file, "g.txt");
  ASSERT_TRUE(flags.Parse({"--dump-after=fold", "h.txt"}).ok());
  EXPECT_EQ(pass, "fold");
  EXPECT_EQ(file, "h.txt");
  Status st = flags.Parse({"--dump-after", "search"});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("PASS FILE"), std::string::npos) << st.message();
}

TEST(FlagsDoubleTest, UnboundedAbove) {
  double d = 1;
  Flags flags("p", "[flags]");
  flags.Double("--alpha", &d, 1.0, std::numeric_limits<double>::infinity(), "a");
  ASSERT_TRUE(flags.Parse({"--alpha", "1e300"}).ok());
  EXPECT_EQ(d, 1e300);
  EXPECT_NE(flags.Parse({"--alpha", "0.9"}).message().find("a number >= 1"), std::string::npos);
}

TEST(FlagsMainTest, ExitCodes) {
  int n = 0;
  auto run = [&](std::vector<std::string> args) {
    Flags flags("p", "[flags]");
    flags.Int("--n", &n, 0, 3, "n");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return flags.ParseMain(static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_EQ(run({"p", "--n", "2"}), std::nullopt);
  EXPECT_EQ(n, 2);
  testing::internal::CaptureStdout();
  EXPECT_EQ(run({"p", "--help"}), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("usage: p"), std::string::npos);
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({"p", "--n", "4"}), 2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "p: --n needs an integer in [0, 3], not '4' (see p --help)\n");
}

}  // namespace
}  // namespace verisub::base
