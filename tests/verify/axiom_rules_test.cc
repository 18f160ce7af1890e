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
  // This is about the Z3 encoding. As rules (which carry no ranks) some axioms are false:
  // matmul_concat_cols holds for 2-D tensors only, and evaluation refutes it at 4-D shapes.
  opt.prover.refute.enabled = false;
  auto report = VerifyRules(rules, opt);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->proved, report->total);
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(rules[i].proof.status, ruledb::ProofStatus::kProved)
        << names[i] << ": " << rules[i].ToText() << ": " << rules[i].proof.reason;
    const auto& used = rules[i].proof.axioms_used;
    EXPECT_NE(std::find(used.begin(), used.end(), names[i]), used.end())
        << names[i] << " not among the axioms used for " << rules[i].ToText();
  }
}

}  // namespace
}  // namespace verisub::verify
