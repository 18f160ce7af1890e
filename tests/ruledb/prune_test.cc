// Pruning: golden tests of each step on small hand-written rule sets, each with a twin that
// must not be pruned; the oracle hook; determinism on the fixture.
#include "ruledb/prune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "ruledb/generalize.h"
#include "ruledb/rule_symmetry.h"
#include "tests/ruledb/eval_oracle.h"
#include "tests/ruledb/fixture.h"

namespace verisub::ruledb {
namespace {

// Short forms for the rule texts below.
std::string Expand(std::string s) {
  for (auto [from, to] : {std::pair<std::string, std::string>{"MM ", "matmul[activation=none] "},
                          {"T ", "transpose[perm=[1,0]] "}}) {
    for (size_t p; (p = s.find("(" + from)) != std::string::npos;)
      s.replace(p + 1, from.size(), to);
  }
  return s;
}

std::vector<Rule> Rules(const std::vector<std::string>& texts) {
  std::vector<Rule> rules;
  for (const std::string& t : texts) {
    auto r = ParseRule(Expand(t));
    EXPECT_TRUE(r.ok()) << t << ": " << r.status().message();
    if (!r.ok()) continue;
    r->proof.status = ProofStatus::kProved;
    rules.push_back(*r);
  }
  return rules;
}

std::vector<std::string> Texts(const std::vector<Rule>& rules) {
  std::vector<std::string> out;
  for (const Rule& r : rules) out.push_back(r.ToText());
  return out;
}

std::vector<std::string> Canonical(const std::vector<std::string>& texts) {
  std::vector<Rule> rules = Rules(texts);
  SortRules(&rules);
  return Texts(rules);
}

struct Outcome {
  std::vector<std::string> rules;
  PruneReport report;
  int64_t Removed(const std::string& step) const {
    for (const PruneStep& s : report.steps)
      if (s.name == step) return s.removed;
    return -1;
  }
  int64_t Added(const std::string& step) const {
    for (const PruneStep& s : report.steps)
      if (s.name == step) return s.added;
    return -1;
  }
};

Outcome Prune(const std::vector<std::string>& texts, const PruneOptions& options = {},
              const ValidityOracle& oracle = nullptr) {
  auto result = PruneRules(Rules(texts), options, oracle);
  EXPECT_TRUE(result.ok()) << result.status().message();
  if (!result.ok()) return {};
  return {Texts(result->rules), result->report};
}

const std::string kAssoc = "(MM (MM ?a ?b) ?c) => (MM ?a (MM ?b ?c))";

TEST(PruneTest, UnprovedAndTrivialRulesAreDropped) {
  std::vector<Rule> rules = Rules(
      {"(relu ?a) => (relu ?a)", "(relu (relu ?a)) => (relu ?a)", "(tanh (relu ?a)) => (relu ?a)"});
  rules[2].proof.status = ProofStatus::kNotProved;
  auto out = PruneRules(rules);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Texts(out->rules), Canonical({"(relu (relu ?a)) => (relu ?a)"}));
  EXPECT_EQ(out->report.steps[0].name, "unproved");
  EXPECT_EQ(out->report.steps[0].removed, 1);
  EXPECT_EQ(out->report.steps[1].name, "trivial");
  EXPECT_EQ(out->report.steps[1].removed, 1);
  // Twin: with proved_only off the unproved rule stays.
  PruneOptions keep;
  keep.proved_only = false;
  auto kept = PruneRules(rules, keep);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->rules.size(), 2u);
}

TEST(PruneTest, InputRenamingKeepsOneRule) {
  Outcome o = Prune({kAssoc, "(MM (MM ?z ?x) ?y) => (MM ?z (MM ?x ?y))"});
  EXPECT_EQ(o.rules, Canonical({kAssoc}));
  EXPECT_EQ(o.Removed("input_renaming"), 1);
  // Twin: the reverse direction is a different rule and stays.
  Outcome twin = Prune({kAssoc, "(MM ?a (MM ?b ?c)) => (MM (MM ?a ?b) ?c)"});
  EXPECT_EQ(twin.rules.size(), 2u);
  EXPECT_EQ(twin.Removed("input_renaming"), 0);
}

TEST(PruneTest, CommutativeAndOutputOrderVariantsAreMerged) {
  const std::vector<std::string> rules = {
      "(MM (ewadd ?a ?b) ?c) => (ewadd (MM ?a ?c) (MM ?b ?c))",
      "(MM (ewadd ?b ?a) ?c) => (ewadd (MM ?a ?c) (MM ?b ?c))",
      "(MM ?a ?b) ; (MM ?a ?c) => (split.0[axis=1] (MM ?a (concat[axis=1] ?b ?c))) ; "
      "(split.1[axis=1] (MM ?a (concat[axis=1] ?b ?c)))",
      "(MM ?a ?c) ; (MM ?a ?b) => (split.1[axis=1] (MM ?a (concat[axis=1] ?b ?c))) ; "
      "(split.0[axis=1] (MM ?a (concat[axis=1] ?b ?c)))"};
  Outcome o = Prune(rules);
  EXPECT_EQ(o.Removed("input_renaming"), 2);
  EXPECT_EQ(o.rules.size(), 2u);
  // Twin: without symmetric variants only plain renaming merges, and nothing here is one.
  PruneOptions plain;
  plain.merge_symmetric_variants = false;
  Outcome twin = Prune(rules, plain);
  EXPECT_EQ(twin.Removed("input_renaming"), 0);
  EXPECT_EQ(twin.rules.size(), 4u);
}

TEST(PruneTest, CommonOperatorWithAProvedGeneralization) {
  // TASO figure 4b: (relu ?c) is the same operator on the same input on both sides.
  const std::string specific = "(MM (MM ?a ?b) (relu ?c)) => (MM ?a (MM ?b (relu ?c)))";
  Outcome o = Prune({kAssoc, specific});
  EXPECT_EQ(o.rules, Canonical({kAssoc}));
  EXPECT_EQ(o.Removed("common_operator"), 1);
  // Twin: without the general rule in the set (and no oracle) the rule stays.
  Outcome twin = Prune({specific});
  EXPECT_EQ(twin.rules, Canonical({specific}));
  EXPECT_EQ(twin.Removed("common_operator"), 0);
}

TEST(PruneTest, CommonOperatorAsksTheOracle) {
  const std::string specific = "(MM (MM ?a ?b) (relu ?c)) => (MM ?a (MM ?b (relu ?c)))";
  Outcome o = Prune({specific}, {}, testing::HoldsOnRandomInputs);
  EXPECT_EQ(o.rules, Canonical({kAssoc}));  // the generalization, proved by the oracle, replaces it
  EXPECT_EQ(o.Removed("common_operator"), 1);
  EXPECT_EQ(o.Added("common_operator"), 1);
  // Twin: relu is idempotent, but its generalization `(relu ?x) => ?x` is false.
  Outcome twin = Prune({"(relu (relu ?a)) => (relu ?a)"}, {}, testing::HoldsOnRandomInputs);
  EXPECT_EQ(twin.rules, Canonical({"(relu (relu ?a)) => (relu ?a)"}));
  EXPECT_EQ(twin.Removed("common_operator"), 0);
  EXPECT_EQ(twin.Added("common_operator"), 0);
}

TEST(PruneTest, CommonOutputsWithAProvedGeneralization) {
  // TASO figure 4c: the relu on top of both sides holds every output.
  const std::string specific = "(relu (MM (MM ?a ?b) ?c)) => (relu (MM ?a (MM ?b ?c)))";
  Outcome o = Prune({kAssoc, specific});
  EXPECT_EQ(o.rules, Canonical({kAssoc}));
  EXPECT_EQ(o.Removed("common_outputs"), 1);
  // Twin: the fused activation is a different operator on top, so nothing is common.
  const std::string fused = "(relu (MM (MM ?a ?b) ?c)) => (matmul[activation=relu] ?a (MM ?b ?c))";
  Outcome twin = Prune({kAssoc, fused});
  EXPECT_EQ(twin.rules, Canonical({kAssoc, fused}));
  EXPECT_EQ(twin.Removed("common_outputs"), 0);
}

TEST(PruneTest, CommonOutputsRejectsInvalidGeneralizations) {
  // Stripping the top matmul of associativity gives `(MM ?a ?b) ; ?c => ?a ; (MM ?b ?c)`, false.
  Outcome o = Prune({kAssoc}, {}, testing::HoldsOnRandomInputs);
  EXPECT_EQ(o.rules, Canonical({kAssoc}));
  EXPECT_EQ(o.Removed("common_outputs"), 0);
  EXPECT_EQ(o.Added("common_outputs"), 0);
}

TEST(PruneTest, InstancesOfAMoreGeneralRuleAreSubsumed) {
  const std::string split0 = "(split.0[axis=0] (concat[axis=0] ?a ?b)) => ?a";
  const std::vector<std::string> instances = {
      "(split.0[axis=0] (concat[axis=0] ?a (relu ?b))) => ?a",  // ?b := (relu ?b)
      "(MM (MM ?a ?a) ?b) => (MM ?a (MM ?a ?b))",               // ?b := ?a
  };
  Outcome o = Prune({split0, kAssoc, instances[0], instances[1]});
  EXPECT_EQ(o.rules, Canonical({split0, kAssoc}));
  EXPECT_EQ(o.Removed("subsumed"), 2);
  // Twins: the other split output, and a rule whose target is not the instantiated target.
  const std::vector<std::string> twins = {
      "(split.1[axis=0] (concat[axis=0] ?a (relu ?b))) => (relu ?b)",
      "(MM (MM ?a ?a) ?b) => (MM (T (T ?a)) (MM ?a ?b))",
  };
  Outcome twin = Prune({split0, kAssoc, twins[0], twins[1]});
  EXPECT_EQ(twin.Removed("subsumed"), 0);
  EXPECT_EQ(twin.rules.size(), 4u);
}

TEST(PruneTest, SubsumptionMatchesCommutativeOperandsInEitherOrder) {
  const std::string comm = "(ewadd ?a ?b) => (ewadd ?b ?a)";
  const std::string inst = "(ewadd ?a (MM ?a ?b)) => (ewadd (MM ?a ?b) ?a)";
  PruneOptions only_subsumption;
  only_subsumption.common_operator = false;
  only_subsumption.common_outputs = false;
  Outcome o = Prune({comm, inst}, only_subsumption);
  EXPECT_EQ(o.rules, Canonical({comm}));
  EXPECT_EQ(o.Removed("subsumed"), 1);
  EXPECT_TRUE(IsInstanceOf(Rules({inst})[0], Rules({comm})[0], false, true));
  // Twin: a rule is never a strict instance of itself or of a mere renaming.
  EXPECT_FALSE(IsInstanceOf(Rules({comm})[0], Rules({comm})[0], false, true));
  EXPECT_FALSE(IsInstanceOf(Rules({comm})[0], Rules({inst})[0], false, true));
}

// Ranked rules (input ranks) cover less than rules without: a rule without ranks covers its
// ranked variants; a ranked rule covers only instances whose bound terms have its ranks.
TEST(PruneTest, RankedVariantsOfARuleWithoutRanksAreRenamings) {
  const std::string comm = "(ewadd ?a ?b) => (ewadd ?b ?a)";
  Outcome o = Prune({comm + " where ?a:2 ?b:2", comm, comm + " where ?b:4 ?a:4"});
  EXPECT_EQ(o.rules, Canonical({comm}));
  EXPECT_EQ(o.Removed("input_renaming"), 2);
  // Twin: ranked variants with different ranks cover each other only when equal.
  Outcome twin = Prune({comm + " where ?a:2 ?b:2", comm + " where ?a:4 ?b:4",
                        "(ewadd ?b ?a) => (ewadd ?a ?b) where ?a:2 ?b:2"});
  EXPECT_EQ(twin.rules, Canonical({comm + " where ?a:2 ?b:2", comm + " where ?a:4 ?b:4"}));
  EXPECT_EQ(twin.Removed("input_renaming"), 1);
}

TEST(PruneTest, ARankedRuleSubsumesOnlyInstancesAtItsRanks) {
  PruneOptions only_subsumption;
  only_subsumption.common_operator = false;
  only_subsumption.common_outputs = false;
  const std::string split0 = "(split.0[axis=0] (concat[axis=0] ?a ?b)) => ?a";
  const std::string inst = "(split.0[axis=0] (concat[axis=0] ?a (MM ?b ?c))) => ?a";
  // A rule without ranks covers a ranked instance.
  Outcome o = Prune({split0, inst + " where ?a:2 ?b:2 ?c:2"}, only_subsumption);
  EXPECT_EQ(o.rules, Canonical({split0}));
  // A ranked rule covers an instance whose bound terms have its ranks: (MM ?b ?c) of two 3-D
  // inputs is 3-D.
  const std::string ranked = split0 + " where ?a:3 ?b:3";
  Outcome at3 = Prune({ranked, inst + " where ?a:3 ?b:3 ?c:3"}, only_subsumption);
  EXPECT_EQ(at3.rules, Canonical({ranked}));
  EXPECT_TRUE(
      IsInstanceOf(Rules({inst + " where ?a:3 ?b:2 ?c:3"})[0], Rules({ranked})[0], true, true));
  // Twins: other ranks, or an instance without ranks (it claims every rank).
  for (const std::string& other : {inst + " where ?a:3 ?b:2 ?c:2", inst}) {
    Outcome twin = Prune({ranked, other}, only_subsumption);
    EXPECT_EQ(twin.rules.size(), 2u) << other;
    EXPECT_EQ(twin.Removed("subsumed"), 0) << other;
  }
}

TEST(PruneTest, GeneralizationsOfARankedRuleCarryTheRanksOfWhatTheyReplace) {
  // (MM ?a ?b) of a 4-D and a 2-D input is 4-D: the fresh input that replaces it is too.
  Rule r = Rules({"(ewadd (MM ?a ?b) ?c) => (ewadd ?c (MM ?a ?b)) where ?a:4 ?b:2 ?c:4"})[0];
  std::vector<Rule> g = CommonOperatorGeneralizations(r);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].ToText(), "(ewadd ?a ?b) => (ewadd ?b ?a) where ?a:4 ?b:4");
  Rule top = Rules({"(relu (MM ?a ?b)) => (relu (MM ?b ?a)) where ?a:3 ?b:3"})[0];
  std::vector<Rule> stripped = CommonOutputGeneralizations(top);
  ASSERT_EQ(stripped.size(), 1u);
  EXPECT_EQ(stripped[0].ToText(), Expand("(MM ?a ?b) => (MM ?b ?a) where ?a:3 ?b:3"));
  // Pruning: the ranked rule goes when its ranked generalization, or the same without ranks,
  // is valid; a generalization at other ranks does not cover it.
  const std::string specific =
      "(ewadd (MM ?a ?b) ?c) => (ewadd ?c (MM ?a ?b)) where ?a:4 ?b:2 ?c:4";
  const std::string comm = "(ewadd ?a ?b) => (ewadd ?b ?a)";
  for (const std::string& general : {comm, comm + " where ?a:4 ?b:4"}) {
    Outcome o = Prune({general, specific});
    EXPECT_EQ(o.rules, Canonical({general})) << general;
  }
  Outcome twin = Prune({comm + " where ?a:2 ?b:2", specific});
  EXPECT_EQ(twin.rules.size(), 2u);
  EXPECT_EQ(twin.Removed("common_operator"), 0);
}

TEST(PruneTest, GeneralizationsAreWhatTasoDescribes) {
  auto form1 = CommonOperatorGeneralizations(
      Rules({"(MM (MM ?a ?b) (relu ?c)) => (MM ?a (MM ?b (relu ?c)))"})[0]);
  EXPECT_EQ(Texts(form1), Canonical({kAssoc}));
  auto form2 = CommonOutputGeneralizations(
      Rules({"(ewadd (relu ?a) (MM ?b ?c)) => (ewadd (relu ?a) (MM ?c ?b))"})[0]);
  // Written order drops the equal pair; swapped order pairs the two different operands.
  EXPECT_EQ(Texts(form2),
            (std::vector<std::string>{
                Rules({"(MM ?b ?c) => (MM ?c ?b)"})[0].ToText(),
                Rules({"(relu ?a) ; (MM ?b ?c) => (MM ?c ?b) ; (relu ?a)"})[0].ToText()}));
  EXPECT_TRUE(CommonOutputGeneralizations(Rules({kAssoc})[0]).size() == 1u);
  EXPECT_TRUE(CommonOperatorGeneralizations(Rules({kAssoc})[0]).empty());
}

// Rules that each pruning step must remove, made from a rule of the fixture: a renamed copy,
// the rule under a common relu on both sides, and the rule with an input replaced by a term.
std::vector<Rule> RedundantVariants(const Rule& r) {
  std::vector<std::string> texts;
  std::string text = r.ToText();
  std::string renamed = text;
  for (size_t p; (p = renamed.find("?a")) != std::string::npos;) renamed.replace(p, 2, "?q");
  texts.push_back(renamed);
  if (r.src.outputs.size() == 1) {
    size_t arrow = text.find(" => ");
    texts.push_back("(relu " + text.substr(0, arrow) + ") => (relu " + text.substr(arrow + 4) +
                    ")");
  }
  std::string inst = text;
  for (size_t p = 0; (p = inst.find("?b", p)) != std::string::npos; p += 10)
    inst.replace(p, 2, "(tanh ?b)");
  if (inst != text) texts.push_back(inst);
  std::vector<Rule> out = Rules(texts);
  for (Rule& v : out) v.proof = r.proof;
  return out;
}

TEST(PruneTest, FixtureIsIrredundantAndItsRedundantVariantsArePruned) {
  auto fixture = testing::LoadFixtureRules();
  ASSERT_TRUE(fixture.ok()) << fixture.status().message();
  // Twin: the hand-written set has no redundant rule.
  auto alone = PruneRules(*fixture);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(alone->report.output, static_cast<int64_t>(fixture->size()));
  std::vector<Rule> sorted = *fixture;
  SortRules(&sorted);
  EXPECT_EQ(Texts(alone->rules), Texts(sorted));

  std::vector<Rule> padded = *fixture;
  for (const Rule& r : *fixture)
    for (Rule& v : RedundantVariants(r)) padded.push_back(std::move(v));
  std::shuffle(padded.begin(), padded.end(), std::mt19937(3));
  auto pruned = PruneRules(padded);
  ASSERT_TRUE(pruned.ok());
  const PruneReport& rep = pruned->report;
  EXPECT_EQ(Texts(pruned->rules), Texts(sorted)) << rep.ToString();
  int64_t n = rep.input;
  for (const PruneStep& s : rep.steps) {
    EXPECT_EQ(s.before, n) << s.name;
    EXPECT_EQ(s.after, s.before - s.removed + s.added) << s.name;
    n = s.after;
    if (s.name != "unproved" && s.name != "trivial") {
      EXPECT_GT(s.removed, 0) << rep.ToString();
    }
  }
  EXPECT_EQ(rep.output, n);
  EXPECT_EQ(rep.Counts().front(), (std::pair<std::string, int64_t>{"input", rep.input}));
  EXPECT_EQ(rep.Counts().back(), (std::pair<std::string, int64_t>{"output", rep.output}));
  // Deterministic whatever the input order.
  std::shuffle(padded.begin(), padded.end(), std::mt19937(4));
  auto again = PruneRules(padded);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Texts(again->rules), Texts(pruned->rules));
}

TEST(PruneTest, InvalidInputRuleIsAnError) {
  std::vector<Rule> rules = Rules({kAssoc});
  rules[0].dst.outputs.push_back({ValueRef::kInput, 0});
  auto out = PruneRules(rules);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "rule 0: source has 1 outputs, target has 2");
}

}  // namespace
}  // namespace verisub::ruledb
