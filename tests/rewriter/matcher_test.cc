// Matching: operator, parameters, wiring, outside uses, opaque nodes, multi-output patterns.
// Every "matches" case has a "must not match" twin.
#include "rewriter/matcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/graph_hash.h"
#include "runtime/models/models.h"
#include "runtime/onnx_import.h"
#include "tests/rewriter/random_graphs.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

using testing::GraphBuilder;
using testing::Rules;

constexpr const char* kConv1 = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";
const std::string kFuseRelu =
    std::string("(relu (") + kConv1 +
    " ?a ?b)) => (conv2d[stride_h=1,stride_w=1,padding=same,activation=relu,group=1] ?a ?b)";
const std::string kMergeMatmul =
    "(matmul[activation=none] ?a ?b) ; (matmul[activation=none] ?a ?c) => "
    "(split.0[axis=1] (matmul[activation=none] ?a (concat[axis=1] ?b ?c))) ; "
    "(split.1[axis=1] (matmul[activation=none] ?a (concat[axis=1] ?b ?c)))";

std::vector<Match> MatchesOf(const runtime::Graph& g, const RuleSet& rules) {
  GraphIndex index(g);
  return FindAllMatches(g, index, rules);
}

TEST(MatcherTest, ConvReluMatches) {
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int w = b.Weight("w", {4, 4, 3, 3}, 1);
  b.Output(b.Op("relu", {b.Op(kConv1, {x, w})}));
  runtime::Graph g = b.Finish();
  auto rules = Rules({kFuseRelu});
  uint64_t before = runtime::StructuralHash(g);
  auto m = MatchesOf(g, *rules);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].input_vals, (std::vector<int>{x, w}));
  EXPECT_EQ(runtime::StructuralHash(g), before);  // matching never edits
}

TEST(MatcherTest, ConvReluTwinParamsDiffer) {
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int w = b.Weight("w", {4, 4, 3, 3}, 1);
  b.Output(b.Op("relu", {b.Op("conv2d[stride_h=2,stride_w=2,padding=same,activation=none,group=1]",
                              {x, w})}));
  EXPECT_TRUE(MatchesOf(b.Finish(), *Rules({kFuseRelu})).empty());
}

TEST(MatcherTest, ConvReluTwinIntermediateUsedOutside) {
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int w = b.Weight("w", {4, 4, 3, 3}, 1);
  int c = b.Op(kConv1, {x, w});
  b.Output(b.Op("relu", {c}));
  b.Output(b.Op("sigmoid", {c}));  // the conv output is needed unfused
  EXPECT_TRUE(MatchesOf(b.Finish(), *Rules({kFuseRelu})).empty());
}

TEST(MatcherTest, ConvReluTwinIntermediateIsGraphOutput) {
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int w = b.Weight("w", {4, 4, 3, 3}, 1);
  int c = b.Op(kConv1, {x, w});
  b.Output(b.Op("relu", {c}));
  b.Output(c);
  EXPECT_TRUE(MatchesOf(b.Finish(), *Rules({kFuseRelu})).empty());
}

TEST(MatcherTest, ConvReluTwinOpaqueInTheWay) {
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int w = b.Weight("w", {4, 4, 3, 3}, 1);
  b.Output(b.Op("relu", {b.Opaque("Neg", b.Op(kConv1, {x, w}))}));
  EXPECT_TRUE(MatchesOf(b.Finish(), *Rules({kFuseRelu})).empty());
}

TEST(MatcherTest, OpaqueMayFeedAndConsumeAMatch) {
  GraphBuilder b;
  int x = b.Input("x", {1, 4, 8, 8});
  int w = b.Weight("w", {4, 4, 3, 3}, 1);
  int neg = b.Opaque("Neg", x);
  b.Output(b.Opaque("Neg", b.Op("relu", {b.Op(kConv1, {neg, w})})));
  auto m = MatchesOf(b.Finish(), *Rules({kFuseRelu}));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].input_vals[0], neg);
}

TEST(MatcherTest, MultiOutputMatmulMergeMatchesBothOrders) {
  GraphBuilder b;
  int a = b.Input("a", {4, 8});
  int w1 = b.Weight("w1", {8, 6}, 1);
  int w2 = b.Weight("w2", {8, 5}, 2);
  b.Output(b.Op("matmul[activation=none]", {a, w1}));
  b.Output(b.Op("matmul[activation=none]", {a, w2}));
  auto m = MatchesOf(b.Finish(), *Rules({kMergeMatmul}));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].input_vals, (std::vector<int>{a, w1, w2}));
  EXPECT_EQ(m[1].input_vals, (std::vector<int>{a, w2, w1}));
}

TEST(MatcherTest, MultiOutputTwinNoSharedInput) {
  GraphBuilder b;
  int a = b.Input("a", {4, 8});
  int a2 = b.Input("a2", {4, 8});
  int w1 = b.Weight("w1", {8, 6}, 1);
  int w2 = b.Weight("w2", {8, 5}, 2);
  b.Output(b.Op("matmul[activation=none]", {a, w1}));
  b.Output(b.Op("matmul[activation=none]", {a2, w2}));
  EXPECT_TRUE(MatchesOf(b.Finish(), *Rules({kMergeMatmul})).empty());
}

TEST(MatcherTest, SameInputTwiceMatchesAndTwinDoesNot) {
  auto rules = Rules({"(ewmul ?a ?a) => (ewmul ?a ?a)"});
  GraphBuilder b;
  int x = b.Input("x", {2, 3});
  int y = b.Input("y", {2, 3});
  b.Output(b.Op("ewmul", {x, x}));
  b.Output(b.Op("ewmul", {x, y}));
  auto m = MatchesOf(b.Finish(), *rules);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].input_vals, (std::vector<int>{x}));
}

TEST(MatcherTest, CommutativeOperandsMatchEitherOrder) {
  auto rules = Rules({"(ewadd (relu ?a) ?b) => (ewadd ?b (relu ?a))"});
  GraphBuilder b;
  int x = b.Input("x", {2, 3});
  int y = b.Input("y", {2, 3});
  b.Output(b.Op("ewadd", {y, b.Op("relu", {x})}));
  auto m = MatchesOf(b.Finish(), *rules);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].input_vals, (std::vector<int>{x, y}));
}

TEST(MatcherTest, NonCommutativeTwinNeedsTheWrittenOrder) {
  auto rules =
      Rules({"(matmul[activation=none] (relu ?a) ?b) => "
             "(matmul[activation=none] (relu ?a) ?b)"});
  GraphBuilder b;
  int x = b.Input("x", {3, 3});
  int y = b.Input("y", {3, 3});
  b.Output(b.Op("matmul[activation=none]", {y, b.Op("relu", {x})}));
  EXPECT_TRUE(MatchesOf(b.Finish(), *rules).empty());
}

TEST(MatcherTest, RankedRuleMatchesInputsOfItsRanksOnly) {
  // Batched matmuls are read by the same rule at 3-D and 2-D; with input ranks only the 2-D
  // pair matches, and a rank a bound weight does not have (?c:3) matches nothing.
  const std::string ranked = kMergeMatmul + " where ?a:2 ?b:2 ?c:2";
  GraphBuilder b;
  int a2 = b.Input("a2", {4, 8});
  int a3 = b.Input("a3", {2, 4, 8});
  int w1 = b.Weight("w1", {8, 6}, 1);
  int w2 = b.Weight("w2", {8, 5}, 2);
  for (int a : {a3, a2}) {
    b.Output(b.Op("matmul[activation=none]", {a, w1}));
    b.Output(b.Op("matmul[activation=none]", {a, w2}));
  }
  runtime::Graph g = b.Finish();
  EXPECT_EQ(MatchesOf(g, *Rules({kMergeMatmul})).size(), 4u);
  auto m = MatchesOf(g, *Rules({ranked}));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].input_vals, (std::vector<int>{a2, w1, w2}));
  EXPECT_EQ(m[1].input_vals, (std::vector<int>{a2, w2, w1}));
  EXPECT_TRUE(MatchesOf(g, *Rules({kMergeMatmul + " where ?a:2 ?b:2 ?c:3"})).empty());
}

// FindMatchesRootedAt looks rules up by what feeds a node's first inputs: over every node it
// finds exactly the matches of every rule tried everywhere (FindAllMatches), on the benchmark
// models and random graphs with the shipped database, and per node in rule order.
TEST(MatcherTest, RootedMatchesAreEveryRulesMatches) {
  auto rules = testing::ShippedRules();
  ASSERT_NE(rules, nullptr);
  std::vector<std::pair<std::string, runtime::Graph>> graphs;
  runtime::models::BuildOptions options;
  options.image_size = 96;  // every layer of the full-size networks
  for (const runtime::models::ModelEntry& m : runtime::models::ListModels()) {
    if (m.name.rfind("bert", 0) == 0) continue;
    auto g = runtime::ImportOnnxModel(m.build(options), std::string(m.name));
    ASSERT_TRUE(g.ok()) << g.status().message();
    graphs.emplace_back(std::string(m.name), std::move(*g));
  }
  for (uint64_t seed = 0; seed < 60; ++seed)
    graphs.emplace_back("random " + std::to_string(seed), testing::RandomGraph(seed));
  auto key = [](const Match& m) { return std::make_tuple(m.rule, m.nodes, m.input_vals); };
  int64_t total = 0;
  for (const auto& [name, g] : graphs) {
    SCOPED_TRACE(name);
    GraphIndex index(g);
    std::vector<std::tuple<int, std::vector<int>, std::vector<int>>> all, rooted;
    for (const Match& m : FindAllMatches(g, index, *rules)) all.push_back(key(m));
    std::vector<Match> at;
    for (int n = 0; n < g.num_nodes(); ++n) {
      at.clear();
      FindMatchesRootedAt(g, index, *rules, n, &at);
      for (size_t k = 0; k < at.size(); ++k) {
        if (k > 0) {
          EXPECT_LE(at[k - 1].rule, at[k].rule);
        }
        rooted.push_back(key(at[k]));
      }
    }
    std::sort(all.begin(), all.end());
    std::sort(rooted.begin(), rooted.end());
    EXPECT_EQ(rooted.size(), all.size());
    EXPECT_TRUE(rooted == all);
    total += static_cast<int64_t>(all.size());
  }
  EXPECT_GT(total, 1000);
}

}  // namespace
}  // namespace verisub::rewriter
