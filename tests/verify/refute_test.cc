// Refutation by evaluation: false candidates are refuted with the shapes and the difference in
// the reason, true ones never are (ranks, broadcasting, non-finite values), and the outcome is
// deterministic.
#include "verify/refute.h"

#include <gtest/gtest.h>

#include "tests/verify/rule_text.h"
#include "verify/candidates.h"
#include "verify/prover.h"

namespace verisub::verify {
namespace {

using testing::Rule;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(RefuteTest, IdentityOfTheGeneratorsShapesIsRefutedWithItsShapes) {
  // At the generator's 3x3 kernels enlarge is the identity; at a 1x3 kernel it is not.
  Refutation r = RefuteByEvaluation(Rule("(enlarge[kernel_h=3,kernel_w=3] ?a) => ?a"), {});
  ASSERT_TRUE(r.refuted);
  EXPECT_EQ(r.reason.rfind("counterexample by evaluation: inputs ?a [", 0), 0u) << r.reason;
  EXPECT_TRUE(Contains(r.reason, "output 0 has type")) << r.reason;
}

TEST(RefuteTest, DifferentValuesAreReportedWithTheElement) {
  Refutation r =
      RefuteByEvaluation(Rule("(relu (ewadd ?a ?b)) => (ewadd (relu ?a) (relu ?b))"), {});
  ASSERT_TRUE(r.refuted);
  EXPECT_TRUE(Contains(r.reason, "?a [")) << r.reason;
  EXPECT_TRUE(Contains(r.reason, "?b [")) << r.reason;
  EXPECT_TRUE(Contains(r.reason, "output 0 element ")) << r.reason;
  EXPECT_TRUE(Contains(r.reason, " vs ")) << r.reason;
}

TEST(RefuteTest, TwoDimensionalMatmulRuleIsRefutedAtFourDimensionsAndProvedOnlyAtTwo) {
  // True for 2-D matmuls only: a batched matmul concatenates its columns along the last axis,
  // not axis 1. Z3 proves it from matmul_concat_cols, an axiom declared for 2-D tensors.
  const std::string text =
      "(concat[axis=1] (matmul[activation=none] ?a ?b) (matmul[activation=none] ?a ?c)) => "
      "(matmul[activation=none] ?a (concat[axis=1] ?b ?c))";
  ruledb::Rule rule = Rule(text);
  Refutation r = RefuteByEvaluation(rule, {});
  ASSERT_TRUE(r.refuted);
  EXPECT_TRUE(Contains(r.reason, ",")) << r.reason;
  // A ranked rule is evaluated at its ranks only: at 2-D it holds, at 4-D it is refuted.
  EXPECT_FALSE(RefuteByEvaluation(Rule(text + " where ?a:2 ?b:2 ?c:2"), {}, 0, 128).refuted);
  EXPECT_TRUE(RefuteByEvaluation(Rule(text + " where ?a:4 ?b:4 ?c:4"), {}).refuted);
  EXPECT_EQ(WellTypedRankTuples(rule, {}, 3).front(), (std::vector<int>{2, 2, 2}));
  // Proved, with or without refutation, and only at the ranks of its first base (2-D): the
  // guard of matmul_concat_cols keeps Z3 from using it at 4-D.
  for (bool refute : {false, true}) {
    std::vector<ruledb::Rule> rules = {rule, Rule(text + " where ?a:4 ?b:4 ?c:4")};
    VerifyOptions opt;
    opt.threads = 1;
    opt.progress = false;
    opt.prover.refute.enabled = refute;
    auto report = VerifyRules(rules, opt);
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(rules[0].proof.status, ruledb::ProofStatus::kProved) << rules[0].proof.reason;
    EXPECT_EQ(rules[0].input_ranks, (std::vector<int>{2, 2, 2}));
    EXPECT_EQ(rules[0].ToText(), text + " where ?a:2 ?b:2 ?c:2");
    EXPECT_NE(rules[1].proof.status, ruledb::ProofStatus::kProved);
    EXPECT_TRUE(rules[1].proof.axioms_used.empty());
    EXPECT_EQ(report->proved_ranked, 1);
    EXPECT_EQ(report->refuted, refute ? 1 : 0);
  }
}

TEST(RefuteTest, TrueCandidatesAreNeverRefuted) {
  auto rules = ReadCandidates("tests/verify/candidates_true.txt");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  ASSERT_GE(rules->size(), 30u);
  for (const ruledb::Rule& rule : *rules) {
    Refutation r = RefuteByEvaluation(rule, {});
    EXPECT_FALSE(r.refuted) << rule.ToText() << ": " << r.reason;
    EXPECT_GT(r.cases, 0) << "no shapes found for " << rule.ToText();
  }
}

TEST(RefuteTest, RoundingIsNotADifference) {
  // Associativity reorders every sum; with bigger shapes and many cases, rounding differences
  // must stay below the tolerance.
  RefuteOptions opt;
  opt.max_dim = 12;
  opt.max_cases = 64;
  opt.max_variants = 256;
  for (const char* text :
       {"(matmul[activation=none] (matmul[activation=none] ?a ?b) ?c) => "
        "(matmul[activation=none] ?a (matmul[activation=none] ?b ?c))",
        "(ewadd (ewadd ?a ?b) ?c) => (ewadd ?a (ewadd ?b ?c))",
        "(pool_avg[kernel_h=3,kernel_w=3,stride_h=1,stride_w=1,padding=same,activation=none] "
        "(ewadd ?a ?b)) => (ewadd (pool_avg[kernel_h=3,kernel_w=3,stride_h=1,stride_w=1,"
        "padding=same,activation=none] ?a) (pool_avg[kernel_h=3,kernel_w=3,stride_h=1,"
        "stride_w=1,padding=same,activation=none] ?b))"}) {
    Refutation r = RefuteByEvaluation(Rule(text), opt);
    EXPECT_FALSE(r.refuted) << text << ": " << r.reason;
    EXPECT_GT(r.cases, 8) << text;
  }
}

TEST(RefuteTest, NonFiniteValuesRefuteNothing) {
  // batchnorm takes 1/sqrt(var + eps): negative random variances give NaN on both sides.
  RefuteOptions opt;
  opt.base_shapes = {specs::Shape{2, 4, 3, 3}, specs::Shape{4}};
  ruledb::Rule rule = Rule(
      "(concat[axis=0] (batchnorm[epsilon=1e-05] ?x ?a ?b ?m ?v) (batchnorm[epsilon=1e-05] ?y ?a "
      "?b ?m ?v)) => "
      "(batchnorm[epsilon=1e-05] (concat[axis=0] ?x ?y) ?a ?b ?m ?v)");
  Refutation r = RefuteByEvaluation(rule, opt);
  EXPECT_FALSE(r.refuted) << r.reason;
  EXPECT_GT(r.cases, 0);
}

TEST(RefuteTest, NoShapesNoRefutation) {
  // Base shapes on which the rule never type-checks: nothing is evaluated, nothing refuted.
  RefuteOptions opt;
  opt.base_shapes = {specs::Shape{}};
  Refutation r = RefuteByEvaluation(Rule("(transpose[perm=[1,0]] ?a) => ?a"), opt);
  EXPECT_FALSE(r.refuted);
  EXPECT_EQ(r.cases, 0);
}

TEST(RefuteTest, DeterministicAndSeeded) {
  ruledb::Rule rule = Rule("(relu (ewadd ?a ?b)) => (ewadd (relu ?a) (relu ?b))");
  RefuteOptions opt;
  Refutation a = RefuteByEvaluation(rule, opt), b = RefuteByEvaluation(rule, opt);
  EXPECT_EQ(a.refuted, b.refuted);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.cases, b.cases);
  opt.seed = 7;
  Refutation c = RefuteByEvaluation(rule, opt);
  EXPECT_TRUE(c.refuted);
  EXPECT_NE(a.reason, c.reason);  // other random inputs
  opt.enabled = false;
  EXPECT_FALSE(RefuteByEvaluation(rule, opt).refuted);
}

}  // namespace
}  // namespace verisub::verify
