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
