// Rules: canonical text round trips, input renaming, shared subterms, multi-output, errors.
#include "ruledb/rule.h"

#include <gtest/gtest.h>

#include <random>

#include "ruledb/pattern_eval.h"
#include "specs/semantics.h"

namespace verisub::ruledb {
namespace {

constexpr const char* kAssoc =
    "(matmul[activation=none] (matmul[activation=none] ?a ?b) ?c) => "
    "(matmul[activation=none] ?a (matmul[activation=none] ?b ?c))";

TEST(RuleTest, TextRoundTrips) {
  auto r = ParseRule(kAssoc);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->ToText(), kAssoc);
  EXPECT_EQ(r->num_inputs, 3);
  EXPECT_EQ(r->src.nodes.size(), 2u);
  EXPECT_EQ(r->Id().size(), 16u);
  auto again = ParseRule(r->ToText());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->Id(), r->Id());
}

TEST(RuleTest, InputNamesAreCanonical) {
  auto r = ParseRule(
      "(matmul[activation=none] (matmul[activation=none] ?z ?x) ?y) => "
      "(matmul[activation=none] ?z (matmul[activation=none] ?x ?y))");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->ToText(), kAssoc);
}

TEST(RuleTest, SharedSubtermsBecomeOneNode) {
  auto r = ParseRule("(ewadd (relu ?x) (relu ?x)) => (smul (relu ?x) ?s)");
  EXPECT_FALSE(r.ok());  // ?s is not a source input
  auto shared = ParseRule("(ewadd (relu ?x) (relu ?x)) => (ewadd (relu ?x) (relu ?x))");
  ASSERT_TRUE(shared.ok()) << shared.status().message();
  EXPECT_EQ(shared->src.nodes.size(), 2u);  // one relu, one ewadd
}

TEST(RuleTest, MultiOutputSplitIsOneNode) {
  auto r = ParseRule(
      "(matmul[activation=none] ?a ?b) ; (matmul[activation=none] ?a ?c) => "
      "(split.0[axis=1] (matmul[activation=none] ?a (concat[axis=1] ?b ?c))) ; "
      "(split.1[axis=1] (matmul[activation=none] ?a (concat[axis=1] ?b ?c)))");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->src.outputs.size(), 2u);
  EXPECT_EQ(r->dst.nodes.size(), 3u);  // concat, matmul, split
  EXPECT_EQ(r->dst.outputs[0].node, r->dst.outputs[1].node);
  EXPECT_EQ(r->dst.outputs[1].index, 1);
  auto again = ParseRule(r->ToText());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ToText(), r->ToText());
}

TEST(RuleTest, BothSidesEvaluateEqual) {
  auto r = ParseRule(kAssoc);
  ASSERT_TRUE(r.ok());
  specs::ModIntSemantics s;
  std::mt19937_64 rng(1);
  std::vector<specs::Tensor<uint32_t>> in(3);
  specs::Shape shapes[3] = {{2, 3}, {3, 4}, {4, 5}};
  for (int i = 0; i < 3; ++i) {
    in[i].type = specs::TensorType(shapes[i]);
    for (int64_t k = 0; k < shapes[i].NumElements(); ++k)
      in[i].data.push_back(s.FromInt(rng() % 1000));
  }
  auto a = EvalPattern(s, r->src, in);
  auto b = EvalPattern(s, r->dst, in);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)[0].data, (*b)[0].data);
  EXPECT_EQ((*a)[0].shape(), (specs::Shape{2, 5}));
  in[2].type = specs::TensorType(specs::Shape{5, 5});
  auto bad = EvalPattern(s, r->src, in);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("matmul: inner dimensions differ"), std::string::npos);
}

TEST(RuleTest, InputRanksAreWrittenAfterTheRuleAndFollowTheInputs) {
  auto plain = ParseRule(kAssoc);
  auto ranked = ParseRule(std::string(kAssoc) + " where ?a:2 ?b:3 ?c:4");
  ASSERT_TRUE(plain.ok() && ranked.ok()) << ranked.status().message();
  EXPECT_TRUE(plain->input_ranks.empty());
  EXPECT_EQ(ranked->input_ranks, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(ranked->ToText(), std::string(kAssoc) + " where ?a:2 ?b:3 ?c:4");
  EXPECT_NE(ranked->Id(), plain->Id());
  // Renamed inputs, listed in any order: the ranks move with the inputs they name.
  auto renamed = ParseRule(
      "(matmul[activation=none] (matmul[activation=none] ?z ?x) ?y) => "
      "(matmul[activation=none] ?z (matmul[activation=none] ?x ?y)) where ?y:4 ?z:2 ?x:3");
  ASSERT_TRUE(renamed.ok()) << renamed.status().message();
  EXPECT_EQ(renamed->ToText(), ranked->ToText());
  // Canonicalize renumbers inputs by first appearance and keeps each rank with its input.
  Rule r = *ranked;
  std::swap(r.src.nodes[0].inputs[0], r.src.nodes[0].inputs[1]);  // (MM ?b ?a) first
  r.dst = PatternGraph();
  r.dst.outputs = {{ValueRef::kInput, 0}};
  Rule c = Canonicalize(r);
  EXPECT_EQ(c.ToText(),
            "(matmul[activation=none] (matmul[activation=none] ?a ?b) ?c) => ?b where ?a:3 ?b:2 "
            "?c:4");
  // A rule built from rewritten text gets its ranks by input name.
  auto by_name = ParseRuleWithRanks("(relu ?x) => (relu ?x)", {{"?x", 2}, {"?unused", 4}});
  ASSERT_TRUE(by_name.ok()) << by_name.status().message();
  EXPECT_EQ(by_name->ToText(), "(relu ?a) => (relu ?a) where ?a:2");
  EXPECT_FALSE(ParseRuleWithRanks("(relu ?x) => (relu ?x)", {{"?y", 2}}).ok());
  // Sizes are checked.
  Rule wrong = *plain;
  wrong.input_ranks = {2, 2};
  EXPECT_FALSE(ValidateRule(wrong).ok());
  wrong.input_ranks = {2, 2, 9};
  EXPECT_FALSE(ValidateRule(wrong).ok());
}

TEST(RuleTest, MalformedRulesGiveErrors) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"(relu ?a)", "expected 'source => target'"},
      {"(relu ?a) => (relu ?a) => ?a", "more than one '=>'"},
      {"(relu a) => ?a", "must be written ?name"},
      {"(frob ?a) => ?a", "unknown operator 'frob'"},
      {"(relu ?a ?b) => ?a", "'relu' takes 1 inputs, got 2"},
      {"(matmul ?a ?b) => ?a", "needs all of its 1 parameters"},
      {"(matmul[activation=fast] ?a ?b) => ?a", "unknown value 'fast'"},
      {"(relu ?a) ; (relu ?b) => ?a", "source has 2 outputs, target has 1"},
      {"(relu ?a => ?a", "missing ')'"},
      {"(split.3[axis=0] ?a) => ?a", "'split' has no output 3"},
      {"(ewadd ?a ?b) => ?a where ?a:2", "where: no rank for input ?b"},
      {"(relu ?a) => ?a where ?a:2 ?a:3", "where: ?a is given twice"},
      {"(relu ?a) => ?a where ?b:2", "where: '?b' is not an input of the rule"},
      {"(relu ?a) => ?a where ?a:7", "where: bad rank '7' for ?a"},
      {"(relu ?a) => ?a where ?a", "where: expected ?input:rank, got '?a'"},
  };
  for (const Case& c : cases) {
    auto r = ParseRule(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos)
        << c.text << " -> " << r.status().message();
  }
}

}  // namespace
}  // namespace verisub::ruledb
