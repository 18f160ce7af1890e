// Ranks in the encoding: which axiom variables are guarded, and what the rank facts and rank
// assertions let Z3 prove: a rule true for 2-D tensors only is not provable without ranks,
// provable at 2-D, and not at 4-D (where it is false); a rule that needs no guarded axiom is
// proved without using the ranks it is given.
#include "verify/rank_encoding.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "specs/registry.h"
#include "verify/prover.h"

namespace verisub::verify {
namespace {

using ruledb::ProofStatus;

std::shared_ptr<const AxiomBase> Base() {
  auto all = specs::AllAxioms();
  EXPECT_TRUE(all.ok());
  auto base = MakeAxiomBase(*all);
  EXPECT_TRUE(base.ok()) << base.status().message();
  return *base;
}

// Guards of an axiom's first instance, by variable name ("" when it has none).
std::map<std::string, std::string> Guards(const AxiomBase& base, const std::string& axiom) {
  std::map<std::string, std::string> out;
  for (const AxiomInstance& inst : base.instances) {
    const specs::Axiom& ax = base.axioms[inst.axiom];
    if (ax.name != axiom) continue;
    for (size_t v = 0; v < ax.vars.size(); ++v) {
      std::string g;
      for (int r : inst.guards[v]) g += (g.empty() ? "" : "|") + std::to_string(r);
      out[ax.vars[v].name] = g;
    }
    break;
  }
  EXPECT_FALSE(out.empty()) << axiom;
  return out;
}

TEST(RankEncodingTest, GuardsStayWhereAnAxiomCouldApplyAtOtherRanks) {
  auto base = Base();
  using M = std::map<std::string, std::string>;
  // matmul type-checks batched, where concatenating along axis 1 is not concatenating columns.
  EXPECT_EQ(Guards(*base, "matmul_concat_cols"), (M{{"x", "2"}, {"y", "2"}, {"z", "2"}}));
  // Declared ranks that are every rank the sides type-check at restate the shape rules.
  EXPECT_EQ(Guards(*base, "matmul_assoc"), (M{{"x", ""}, {"y", ""}, {"z", ""}}));
  EXPECT_EQ(Guards(*base, "conv_linear_input"), (M{{"x", ""}, {"y", ""}, {"w", ""}}));
  EXPECT_EQ(Guards(*base, "conv_smul_input"), (M{{"x", ""}, {"w", ""}, {"s", ""}}));
  EXPECT_EQ(Guards(*base, "transpose_concat"), (M{{"x", ""}, {"y", ""}}));
  // A bare variable side is well-typed at every rank: its variable stays guarded.
  EXPECT_EQ(Guards(*base, "transpose_involution"), (M{{"x", "2"}}));
  EXPECT_EQ(Guards(*base, "matmul_identity_any_ref"), (M{{"x", "2|3|4"}, {"y", ""}}));
  // batchnorm type-checks for any rank from 2; its parameters are 1-D by the shape rule.
  EXPECT_EQ(Guards(*base, "batchnorm_concat_batch"),
            (M{{"x", "4"}, {"y", "4"}, {"a", ""}, {"b", ""}, {"m", ""}, {"v", ""}}));
  // Undeclared: no guard.
  EXPECT_EQ(Guards(*base, "ewadd_comm"), (M{{"x", ""}, {"y", ""}}));
}

// Asks Z3 about `text` with the inputs' ranks asserted (none when `ranks` is empty).
struct Outcome {
  ruledb::ProofRecord record;
  bool used_ranks = false;
};

Outcome Ask(const std::shared_ptr<const AxiomBase>& base, const std::string& text,
            const std::vector<int>& ranks, const std::string& dump_dir = "") {
  auto rule = ruledb::ParseRule(text);
  EXPECT_TRUE(rule.ok()) << rule.status().message();
  ProverOptions options;
  options.smt2_dir = dump_dir;
  Prover prover(base, options);
  Encoder& enc = prover.encoder();
  std::vector<z3::expr> inputs;
  for (int i = 0; i < rule->num_inputs; ++i) {
    std::string name = ruledb::InputName(i).substr(1);
    inputs.push_back(prover.ctx().constant(name.c_str(), enc.tensor_sort()));
  }
  FunctionRanks signatures;
  for (const ruledb::PatternGraph* g : {&rule->src, &rule->dst})
    for (const ruledb::PatternNode& n : g->nodes)
      for (int k = 0; k < specs::GetOp(n.op).num_outputs; ++k)
        signatures.Get(FunctionName(n.op, n.params, k), {n.op, n.params, k});
  Query query;
  query.signatures = &signatures;
  std::vector<z3::expr> src = enc.EncodePattern(rule->src, inputs, &query.functions);
  std::vector<z3::expr> dst = enc.EncodePattern(rule->dst, inputs, &query.functions);
  for (size_t i = 0; i < src.size(); ++i) query.goals.emplace_back(src[i], dst[i]);
  for (size_t i = 0; i < ranks.size(); ++i) query.ranks.push_back({inputs[i], {ranks[i]}});
  query.dump_name = "query";
  query.comment = text;
  Outcome out;
  out.record = prover.Prove(query, &out.used_ranks);
  return out;
}

TEST(RankEncodingTest, ATwoDimensionalRuleNeedsRanksAndRankFacts) {
  auto base = Base();
  // matmul_concat_cols applied with x := (matmul ?a ?b): its guard holds only through the rank
  // fact of the inner matmul.
  const std::string mm = "matmul[activation=none]";
  const std::string text = "(concat[axis=1] (" + mm + " (" + mm + " ?a ?b) ?c) (" + mm + " (" + mm +
                           " ?a ?b) ?d)) => (" + mm + " (" + mm + " ?a ?b) (concat[axis=1] ?c ?d))";
  Outcome none = Ask(base, text, {});
  EXPECT_EQ(none.record.status, ProofStatus::kUnknown) << none.record.reason;
  Outcome two = Ask(base, text, {2, 2, 2, 2});
  EXPECT_EQ(two.record.status, ProofStatus::kProved) << two.record.reason;
  EXPECT_TRUE(two.used_ranks);
  EXPECT_NE(
      std::find(two.record.axioms_used.begin(), two.record.axioms_used.end(), "matmul_concat_cols"),
      two.record.axioms_used.end());
  // Batched, the rule is false, and the guards keep Z3 from proving it; its dump replays.
  std::string dir = (std::filesystem::temp_directory_path() / "verisub_rank_encoding").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Outcome four = Ask(base, text, {4, 4, 4, 4}, dir);
  EXPECT_NE(four.record.status, ProofStatus::kProved);
  Outcome mixed = Ask(base, text, {3, 2, 2, 2});
  EXPECT_NE(mixed.record.status, ProofStatus::kProved);
  std::string out = dir + "/replay.txt";
  ASSERT_EQ(std::system(("z3 " + dir + "/query.smt2 > " + out + " 2>&1").c_str()), 0);
  std::ifstream in(out);
  std::string answer;
  std::getline(in, answer);
  EXPECT_TRUE(answer == "sat" || answer == "unknown") << answer;
}

TEST(RankEncodingTest, AProofWithoutGuardedAxiomsDoesNotUseTheRanks) {
  auto base = Base();
  const std::string conv = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";
  const std::string text =
      "(" + conv + " (ewadd ?a ?b) ?c) => (ewadd (" + conv + " ?a ?c) (" + conv + " ?b ?c))";
  for (const std::vector<int>& ranks : {std::vector<int>{}, std::vector<int>{4, 4, 4}}) {
    Outcome o = Ask(base, text, ranks);
    EXPECT_EQ(o.record.status, ProofStatus::kProved) << o.record.reason;
    EXPECT_FALSE(o.used_ranks);
  }
}

}  // namespace
}  // namespace verisub::verify
