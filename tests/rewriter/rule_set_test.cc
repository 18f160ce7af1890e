// Rule sets: compilation, root index, proof filter, unusable rules, text loading errors.
#include "rewriter/rule_set.h"

#include <gtest/gtest.h>

#include "rewriter/rule_source.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

TEST(RuleSetTest, HandwrittenFixtureCompiles) {
  auto set = testing::HandwrittenRules();
  ASSERT_NE(set, nullptr);
  EXPECT_GT(set->size(), 40);
  EXPECT_EQ(set->stats().skipped_unmatchable, 0);
  for (int r : set->RulesWithRoot(specs::OpKind::kRelu))
    EXPECT_EQ(set->rule(r).root_op, specs::OpKind::kRelu);
  EXPECT_FALSE(set->RulesWithRoot(specs::OpKind::kRelu).empty());
  EXPECT_FALSE(set->RulesWithRoot(specs::OpKind::kSplit).empty());
  EXPECT_TRUE(set->RulesWithRoot(specs::OpKind::kBatchnorm).empty());
}

TEST(RuleSetTest, UnprovedRulesAreSkippedByDefault) {
  auto rules = ParseRulesText("(ewadd ?a ?b) => (ewadd ?b ?a)\n", "t");
  ASSERT_TRUE(rules.ok());
  auto strict = RuleSet::Compile(*rules);
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ((*strict)->size(), 0);
  EXPECT_EQ((*strict)->stats().skipped_unproved, 1);
  (*rules)[0].proof.status = ruledb::ProofStatus::kProved;
  auto proved = RuleSet::Compile(*rules);
  ASSERT_TRUE(proved.ok());
  EXPECT_EQ((*proved)->size(), 1);
}

TEST(RuleSetTest, DuplicatesAndDisconnectedSourcesAreSkipped) {
  auto set = testing::Rules({"(ewadd ?a ?b) => (ewadd ?b ?a)", "(ewadd ?x ?y) => (ewadd ?y ?x)",
                             "(relu ?a) ; (tanh ?b) => (relu ?a) ; (tanh ?b)"});
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->size(), 1);
  EXPECT_EQ(set->stats().skipped_duplicate, 1);
  EXPECT_EQ(set->stats().skipped_unmatchable, 1);
}

TEST(RuleSetTest, PlanWalksFromTheRootAlongEdges) {
  auto set =
      testing::Rules({"(matmul[activation=none] ?a ?b) ; (matmul[activation=none] ?a ?c) "
                      "=> (matmul[activation=none] ?a ?b) ; (matmul[activation=none] ?a ?c)"});
  ASSERT_NE(set, nullptr);
  const CompiledRule& r = set->rule(0);
  ASSERT_EQ(r.plan.size(), 2u);
  EXPECT_EQ(r.plan[0].kind, MatchStep::Kind::kRoot);
  EXPECT_EQ(r.plan[1].kind, MatchStep::Kind::kConsumer);
  EXPECT_TRUE(r.plan[1].via.is_input());
}

TEST(RuleSourceTest, ErrorsNameFileAndLine) {
  auto rules = ParseRulesText("# comment\n\n(relu ?a) => ?a\n(frob ?a) => ?a\n", "x.rules");
  ASSERT_FALSE(rules.ok());
  EXPECT_NE(rules.status().message().find("x.rules:4"), std::string::npos)
      << rules.status().message();
  EXPECT_NE(rules.status().message().find("unknown operator 'frob'"), std::string::npos);
}

TEST(RuleSourceTest, CommentsAndBlankLinesAreIgnored) {
  auto rules = ParseRulesText("# c\n  \n(relu ?a) => ?a   \n# end", "x");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_EQ(rules->size(), 1u);
}

TEST(RuleSourceTest, MissingFileIsNotFound) {
  auto rules = LoadRules("/nonexistent/rules.txt");
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.status().code(), StatusCode::kNotFound);
  EXPECT_NE(rules.status().message().find("/nonexistent/rules.txt"), std::string::npos);
}

}  // namespace
}  // namespace verisub::rewriter
