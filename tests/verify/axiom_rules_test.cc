// Every instance of every shipped axiom, written as a candidate rule `lhs => rhs`, is proved by
// the prover and names its own axiom: the axioms and the rules reach Z3 through the same
// function names, parameter values and triggers.
#include <gtest/gtest.h>

#include <regex>

#include "specs/axiom.h"
#include "verify/prover.h"

namespace verisub::verify {
namespace {

// Axiom side as rule text: tensor variables become pattern inputs (`x` -> `?x`).
std::string SideText(const specs::Axiom& ax, const specs::AxiomTerm& t,
                     const std::vector<int64_t>& assignment) {
  std::string s = specs::FormatAxiomTerm(ax, t, &assignment);
  for (const specs::AxiomTensorVar& v : ax.vars)
    s = std::regex_replace(s, std::regex("(^|[ (])" + v.name + "(?=[ )]|$)"), "$1?" + v.name);
  return s;
}

TEST(AxiomRulesTest, EveryAxiomInstanceIsProvedFromItsAxiom) {
  auto axioms = specs::AllAxioms();
  ASSERT_TRUE(axioms.ok());
  std::vector<ruledb::Rule> rules;
  std::vector<std::string> names;
  for (const specs::Axiom& ax : *axioms) {
    auto assignments = ax.ParamAssignments();
    // First and last assignment of each axiom keeps the suite fast while covering every axiom.
    std::vector<size_t> picks = {0, assignments.size() - 1};
    for (size_t k : picks) {
      std::string text =
          SideText(ax, ax.lhs, assignments[k]) + " => " + SideText(ax, ax.rhs, assignments[k]);
      auto r = ruledb::ParseRule(text);
      ASSERT_TRUE(r.ok()) << ax.name << ": " << text << ": " << r.status().message();
      rules.push_back(*r);
      names.push_back(ax.name);
      if (assignments.size() == 1) break;
    }
  }
  VerifyOptions opt;
  opt.threads = 2;
  opt.progress = false;
  // This is about the Z3 encoding. As rules some axioms are false at ranks they are not
  // declared for (matmul_concat_cols at 4-D); the prover proves those at the ranks of their
  // first well-typed base shapes (refutation or not). batchnorm's six inputs, with 1-D
  // parameters, get base shapes of their own: a 2-D case (unprovable: the axiom is declared for
  // 4-D inputs), then a 4-D one. The per-channel scale of a matmul's columns (declared for 2-D
  // and 3-D products, with a 1-D scale) needs a vector and a 3-D tensor among its bases.
  opt.prover.refute.enabled = false;
  opt.prover.index_level = false;  // each proof must come from its axiom
  VerifyOptions batchnorm = opt;
  batchnorm.prover.refute.base_shapes = {specs::Shape{2, 4}, specs::Shape{2, 4, 5, 5},
                                         specs::Shape{4}};
  VerifyOptions scale_matmul = opt;
  scale_matmul.prover.refute.base_shapes = {specs::Shape{2, 4}, specs::Shape{4, 4},
                                            specs::Shape{2, 4, 4}, specs::Shape{4}};
  // A maximum past a broadcast (declared for matrices) needs, per axis and extent, a matrix and
  // the vector broadcast to it among its bases.
  VerifyOptions broadcast = opt;
  broadcast.prover.refute.base_shapes = {specs::Shape{2, 4}, specs::Shape{2, 1}, specs::Shape{1, 4},
                                         specs::Shape{4, 4}, specs::Shape{2, 2}};
  auto group_of = [](const std::string& name) {
    return name.rfind("batchnorm", 0) == 0                    ? 1
           : name.rfind("scale_matmul", 0) == 0               ? 2
           : name.rfind("reduce_max_ewadd_broadcast", 0) == 0 ? 3
                                                              : 0;
  };
  std::vector<ruledb::Rule> groups[4];
  for (size_t i = 0; i < rules.size(); ++i) groups[group_of(names[i])].push_back(rules[i]);
  auto report = VerifyRules(groups[0], opt);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->proved, report->total);
  ASSERT_TRUE(VerifyRules(groups[1], batchnorm).ok());
  ASSERT_TRUE(VerifyRules(groups[2], scale_matmul).ok());
  ASSERT_TRUE(VerifyRules(groups[3], broadcast).ok());
  size_t next[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < rules.size(); ++i) {
    const int g = group_of(names[i]);
    rules[i] = groups[g][next[g]++];
  }
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(rules[i].proof.status, ruledb::ProofStatus::kProved)
        << names[i] << ": " << rules[i].ToText() << ": " << rules[i].proof.reason;
    // Ranks are recorded exactly when the axiom is guarded somewhere it could type-check.
    const bool expect_ranks =
        names[i] == "matmul_concat_rows" || names[i] == "matmul_concat_cols" ||
        names[i] == "matmul_concat_inner" || names[i] == "batchnorm_concat_batch" ||
        names[i] == "matmul_identity" || names[i] == "matmul_identity_any_ref" ||
        names[i].rfind("scale_matmul", 0) == 0 ||
        // Order facts validated on vectors and matrices only (the solver per element).
        names[i] == "abs_abs" || names[i] == "ewmax_ewadd" || names[i] == "ewmin_ewmax_absorb" ||
        names[i].rfind("reduce_max_ewadd_broadcast", 0) == 0;
    EXPECT_EQ(!rules[i].input_ranks.empty(), expect_ranks) << rules[i].ToText();
    const auto& used = rules[i].proof.axioms_used;
    EXPECT_NE(std::find(used.begin(), used.end(), names[i]), used.end())
        << names[i] << " not among the axioms used for " << rules[i].ToText();
  }
}

}  // namespace
}  // namespace verisub::verify
