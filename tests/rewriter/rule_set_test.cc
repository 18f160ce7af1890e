// Rule sets: compilation, root index, proof filter, unusable rules, text loading errors.
#include "rewriter/rule_set.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "rewriter/rule_source.h"
#include "ruledb/rule_symmetry.h"
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

ruledb::Rule Parsed(const std::string& text) {
  auto r = ruledb::ParseRule(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? *r : ruledb::Rule();
}

TEST(RuleSetTest, ARuleWhoseTargetIsAPatternIsReversed) {
  auto rev = ReverseRule(Parsed(
      "(ewmul (ewadd ?a ?b) ?c) => (ewadd (ewmul ?a ?c) (ewmul ?b ?c)) where ?a:2 ?b:2 ?c:2"));
  ASSERT_TRUE(rev.has_value());
  EXPECT_EQ(rev->ToText(),
            "(ewadd (ewmul ?a ?b) (ewmul ?c ?b)) => (ewmul (ewadd ?a ?c) ?b) where ?a:2 ?b:2 ?c:2");
  // Input ranks follow their inputs through the renaming.
  auto ranked = ReverseRule(Parsed("(smul (relu ?a) ?b) => (relu (smul ?a ?b)) where ?a:4 ?b:0"));
  ASSERT_TRUE(ranked.has_value());
  EXPECT_EQ(ranked->ToText(), "(relu (smul ?a ?b)) => (smul (relu ?a) ?b) where ?a:4 ?b:0");
  // Must-not twins: a target that drops an input (it would have to be invented), a bare input as
  // the target (it would match every value).
  EXPECT_FALSE(ReverseRule(Parsed("(ewmul ?a (const_ones ?b)) => (ewmul ?a (const_ones ?a))")));
  EXPECT_FALSE(ReverseRule(Parsed("(transpose[perm=[1,0]] (transpose[perm=[1,0]] ?a)) => ?a")));
  EXPECT_FALSE(
      ReverseRule(Parsed("(split.0[axis=1] (concat[axis=1] ?a ?b)) ; (split.1[axis=1] "
                         "(concat[axis=1] ?a ?b)) => ?a ; ?b")));
}

TEST(RuleSetTest, ReversedRulesFollowTheStatedOnesAndAreNotAddedTwice) {
  const std::string expand =
      "(relu (concat[axis=1] ?a ?b)) => (concat[axis=1] (relu ?a) (relu ?b))";
  auto set = testing::Rules({expand, "(transpose[perm=[1,0]] (transpose[perm=[1,0]] ?a)) => ?a"});
  ASSERT_NE(set, nullptr);
  ASSERT_EQ(set->size(), 3);
  EXPECT_EQ(set->rule(0).Text(), expand);
  EXPECT_FALSE(set->rule(0).reversed);
  EXPECT_FALSE(set->rule(1).reversed);
  EXPECT_TRUE(set->rule(2).reversed);
  EXPECT_EQ(set->rule(0).reversed_from, -1);
  EXPECT_EQ(set->rule(1).reversed_from, -1);
  EXPECT_EQ(set->rule(2).reversed_from, 0);
  EXPECT_EQ(set->rule(2).Text(),
            "(concat[axis=1] (relu ?a) (relu ?b)) => (relu (concat[axis=1] ?a ?b))");
  EXPECT_EQ(set->rule(2).root_op, specs::OpKind::kConcat);
  EXPECT_EQ(set->stats().reversed, 1);
  EXPECT_EQ(set->stats().compiled, 3);

  // Both directions stated: nothing to add.
  auto both = testing::Rules(
      {expand, "(concat[axis=1] (relu ?a) (relu ?b)) => (relu (concat[axis=1] ?a ?b))"});
  ASSERT_NE(both, nullptr);
  EXPECT_EQ(both->size(), 2);
  EXPECT_EQ(both->stats().reversed, 0);
  EXPECT_EQ(both->stats().skipped_reverse_duplicate, 2);
  // The other direction stated with operands of a commutative operator in another order: the
  // matcher reads both orders, so the reading adds nothing either.
  auto sym = testing::Rules({"(ewmul (ewadd ?a ?b) ?c) => (ewadd (ewmul ?a ?c) (ewmul ?b ?c))",
                             "(ewadd (ewmul ?c ?a) (ewmul ?b ?c)) => (ewmul (ewadd ?a ?b) ?c)"});
  ASSERT_NE(sym, nullptr);
  EXPECT_EQ(sym->size(), 2);
  EXPECT_EQ(sym->stats().skipped_reverse_duplicate, 2);
  // A rule equal to its own reading (commutativity) is not added again.
  auto self = testing::Rules({"(ewadd ?a ?b) => (ewadd ?b ?a)"});
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(self->size(), 1);

  // A source the matcher cannot walk (two concatenations of unrelated inputs): the stated rule
  // is skipped, its reading (one connected pattern) is used.
  auto disconnected = testing::Rules(
      {"(concat[axis=0] ?a ?a) ; (concat[axis=0] ?b ?b) => (split.0[axis=1] (concat[axis=0] "
       "(concat[axis=1] ?a ?b) (concat[axis=1] ?a ?b))) ; (split.1[axis=1] (concat[axis=0] "
       "(concat[axis=1] ?a ?b) (concat[axis=1] ?a ?b)))"});
  ASSERT_NE(disconnected, nullptr);
  EXPECT_EQ(disconnected->stats().skipped_unmatchable, 1);
  ASSERT_EQ(disconnected->size(), 1);
  EXPECT_TRUE(disconnected->rule(0).reversed);
  EXPECT_EQ(disconnected->rule(0).reversed_from, -1);
  EXPECT_EQ(disconnected->rule(0).root_op, specs::OpKind::kSplit);

  // Off: only the stated rules.
  auto rules = ParseRulesText(expand + "\n", "t");
  ASSERT_TRUE(rules.ok());
  RuleSetOptions off;
  off.proved_only = false;
  off.reverse = false;
  auto stated = RuleSet::Compile(*rules, off);
  ASSERT_TRUE(stated.ok());
  EXPECT_EQ((*stated)->size(), 1);
  EXPECT_EQ((*stated)->stats().reversed, 0);
}

TEST(RuleSetTest, ReversedRulesKeepTheProofRecordAndTheSetIsDeterministic) {
  auto rules = LoadRules("data/rules/taso.pb");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  auto a = RuleSet::Compile(*rules);
  auto b = RuleSet::Compile(*rules);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ((*a)->size(), (*b)->size());
  EXPECT_GT((*a)->stats().reversed, 0);
  std::set<std::string> texts;
  for (int i = 0; i < (*a)->size(); ++i) {
    const CompiledRule& r = (*a)->rule(i);
    EXPECT_EQ(r.Text(), (*b)->rule(i).Text());
    EXPECT_TRUE(texts.insert(r.Text()).second) << r.Text();
    if (!r.reversed) continue;
    EXPECT_EQ(r.rule.proof.status, ruledb::ProofStatus::kProved);
    if (r.reversed_from < 0) continue;  // read from a rule unusable as stated
    const CompiledRule& from = (*a)->rule(r.reversed_from);
    EXPECT_FALSE(from.reversed);
    EXPECT_EQ(r.rule.input_ranks.empty(), from.rule.input_ranks.empty());
  }
}

// The set keeps a reading unless its symmetry key equals that of a rule before it; Compile
// computes keys only where SymmetryHashes meet. Here every key is computed, the way the rule is
// stated, and the shipped database's readings must come out the same, in the same order.
TEST(RuleSetTest, ReadingsKeptAreThoseWithNewSymmetryKeys) {
  auto rules = LoadRules("data/rules/taso.pb");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  auto set = RuleSet::Compile(*rules);
  ASSERT_TRUE(set.ok());
  std::set<std::string> seen, stated_texts;
  std::vector<const ruledb::Rule*> order;  // stated rules in the set, then unusable ones
  std::vector<const ruledb::Rule*> unusable;
  for (int i = 0; i < (*set)->size(); ++i)
    if (!(*set)->rule(i).reversed) {
      order.push_back(&(*set)->rule(i).rule);
      stated_texts.insert((*set)->rule(i).Text());
    }
  for (const ruledb::Rule& r : *rules) {
    if (r.proof.status != ruledb::ProofStatus::kProved) continue;
    const std::string text = r.ToText();
    if (seen.insert(text).second && stated_texts.count(text) == 0) unusable.push_back(&r);
  }
  order.insert(order.end(), unusable.begin(), unusable.end());
  std::set<std::string> keys;
  for (int i = 0; i < (*set)->size(); ++i)
    if (!(*set)->rule(i).reversed) keys.insert(ruledb::SymmetryKey((*set)->rule(i).rule));
  std::vector<std::string> expected;
  for (const ruledb::Rule* r : order) {
    std::optional<ruledb::Rule> rev = ReverseRule(*r);
    if (!rev) continue;
    const std::string text = rev->ToText();
    if (seen.count(text) != 0 || !keys.insert(ruledb::SymmetryKey(*rev)).second) continue;
    seen.insert(text);
    RuleSetOptions as_stated;
    as_stated.proved_only = false;
    as_stated.reverse = false;
    if ((*RuleSet::Compile({*rev}, as_stated))->size() == 0) continue;  // unmatchable
    expected.push_back(text);
  }
  std::vector<std::string> kept;
  for (int i = 0; i < (*set)->size(); ++i)
    if ((*set)->rule(i).reversed) kept.push_back((*set)->rule(i).Text());
  EXPECT_GT(kept.size(), 1000u);
  EXPECT_EQ(kept.size(), expected.size());
  for (size_t i = 0; i < kept.size() && i < expected.size(); ++i)
    if (kept[i] != expected[i]) {
      ADD_FAILURE() << "reading " << i << ": kept " << kept[i] << ", expected " << expected[i];
      break;
    }
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
