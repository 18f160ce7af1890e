// Golden tests: each tests/rewriter/golden/*.txt holds rules, a small graph and the graph the
// search must return, in text (graph_text.h). Every case that fires has a twin where it must not.
// The result must also compute what the input computes (reference executor).
//
//   # what the case shows
//   rule (relu (conv2d[...] ?a ?b)) => (conv2d[...,activation=relu,...] ?a ?b)
//   input x [1,4,8,8]
//   weight w [4,4,3,3]
//   output (relu (conv2d[...] x w))
//   expect
//   output (conv2d[...,activation=relu,...] x w)
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rewriter/optimize.h"
#include "rewriter/verify_outputs.h"
#include "tests/rewriter/graph_text.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

constexpr const char* kGoldenDir = "tests/rewriter/golden";

std::vector<std::string> GoldenFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(kGoldenDir, ec))
    if (e.path().extension() == ".txt") files.push_back(e.path().stem().string());
  std::sort(files.begin(), files.end());
  return files;
}

// Trims every line and drops blank lines and comments.
std::string Normalize(const std::string& text) {
  std::stringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    size_t a = line.find_first_not_of(" \t"), b = line.find_last_not_of(" \t");
    if (a == std::string::npos || line[a] == '#') continue;
    out += line.substr(a, b - a + 1) + "\n";
  }
  return out;
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, SearchReturnsTheExpectedGraph) {
  std::ifstream in(std::string(kGoldenDir) + "/" + GetParam() + ".txt");
  ASSERT_TRUE(in) << GetParam();
  std::vector<std::string> rule_lines;
  std::string declarations, graph_text, expected;
  bool in_expect = false;
  std::string line;
  while (std::getline(in, line)) {
    if (line == "expect") {
      in_expect = true;
    } else if (in_expect) {
      expected += line + "\n";
    } else if (line.rfind("rule ", 0) == 0) {
      rule_lines.push_back(line.substr(5));
    } else if (line.rfind("input ", 0) == 0 || line.rfind("weight ", 0) == 0) {
      declarations += line + "\n";
    } else {
      graph_text += line + "\n";
    }
  }
  ASSERT_TRUE(in_expect) << "no 'expect' line";
  ASSERT_FALSE(rule_lines.empty()) << "no 'rule' line";
  auto rules = testing::Rules(rule_lines);
  ASSERT_NE(rules, nullptr);
  auto g = testing::ParseGraphText(declarations + graph_text);
  ASSERT_TRUE(g.ok()) << g.status().message();

  OptimizeOptions options;
  options.search.time_limit_s = 0;
  runtime::Graph out;
  OptimizeReport report;
  Status st = Optimize(*g, *rules, options, &out, &report);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(Normalize(testing::PrintGraphText(out)), Normalize(expected))
      << "input:\n"
      << testing::PrintGraphText(*g);
  VerifyReport vr;
  Status same = CompareOutputs(*g, out, {}, &vr);
  EXPECT_TRUE(same.ok()) << same.message();
}

INSTANTIATE_TEST_SUITE_P(Files, GoldenTest, ::testing::ValuesIn(GoldenFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// The printer and the parser agree: printing a parsed graph and parsing it again gives the
// same text.
TEST(GraphTextTest, PrintParseRoundTrip) {
  auto g = testing::ParseGraphText(
      "input x [2,3]\n"
      "input y [4,3]\n"
      "let c = (concat[axis=0] x y)\n"
      "output (relu (split.0[axis=0] c))\n"
      "output (split.1[axis=0] c)\n"
      "output (onnx-Neg c)\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::string text = testing::PrintGraphText(*g);
  EXPECT_EQ(text,
            "let t0 = (concat[axis=0] x y)\n"
            "output (relu (split.0[axis=0] t0))\n"
            "output (split.1[axis=0] t0)\n"
            "output (onnx-Neg t0)\n");
  auto again = testing::ParseGraphText("input x [2,3]\ninput y [4,3]\n" + text);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(testing::PrintGraphText(*again), text);
  EXPECT_EQ(again->num_nodes(), 4);  // concat, one split for both outputs, relu, Neg
}

TEST(GraphTextTest, BadTextIsAnError) {
  EXPECT_FALSE(testing::ParseGraphText("output (relu nowhere)\n").ok());
  EXPECT_FALSE(testing::ParseGraphText("input x [2,3]\noutput (frobnicate x)\n").ok());
  EXPECT_FALSE(testing::ParseGraphText("input x [2,3]\noutput (relu x\n").ok());
  EXPECT_FALSE(testing::ParseGraphText("wibble x\n").ok());
}

// Found by fuzzing (tests/fuzz/corpus/graph_text/regress_*): std::stoll threw on a bad
// dimension, a huge weight was allocated, a wrong arity reached the shape rules.
TEST(GraphTextTest, FuzzFindingsAreErrorsNotExceptions) {
  EXPECT_FALSE(testing::ParseGraphText("input y [abc]\noutput (relu y)\n").ok());
  EXPECT_FALSE(testing::ParseGraphText("output (relu folded-2x99999999999999999999)\n").ok());
  EXPECT_FALSE(
      testing::ParseGraphText("weight w [99999999999,99999999999]\noutput (relu w)\n").ok());
  EXPECT_FALSE(testing::ParseGraphText("input x [2,3]\noutput (relu x x)\n").ok());
  EXPECT_FALSE(testing::ParseGraphText("input x [2,3]\noutput (relu[axis=1] x)\n").ok());
}

}  // namespace
}  // namespace verisub::rewriter
