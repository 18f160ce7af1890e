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
#include "runtime/graph_text.h"
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
  auto g = runtime::ParseGraphText(declarations + graph_text);
  ASSERT_TRUE(g.ok()) << g.status().message();

  OptimizeOptions options;
  options.search.time_limit_s = 0;
  options.check_after_each_pass = true;  // the checker between passes
  // The search's graph: convolutions absorbing their epilogues afterwards have tests of their own
  // and would make a twin's graph differ for reasons other than its rule.
  options.fuse_epilogues = false;
  runtime::Graph out;
  OptimizeReport report;
  Status st = Optimize(*g, *rules, options, &out, &report);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(Normalize(runtime::PrintGraphText(out)), Normalize(expected))
      << "input:\n"
      << runtime::PrintGraphText(*g);
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

}  // namespace
}  // namespace verisub::rewriter
