// Rank cases, guards and rank facts.
#include "verify/rank_encoding.h"

#include <algorithm>

#include "specs/registry.h"
#include "verify/encoding.h"

namespace verisub::verify {

const FunctionRanks::Entry& FunctionRanks::Get(const std::string& name, const FunctionSig& sig) {
  auto it = entries_.find(name);
  if (it != entries_.end()) return it->second;
  Entry e{sig, specs::ProbeRankCases(sig.op, sig.params, specs::kMaxRank)};
  return entries_.emplace(name, std::move(e)).first->second;
}

const FunctionRanks::Entry* FunctionRanks::Find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

void CollectAxiomSignatures(const specs::AxiomTerm& t, const std::vector<int64_t>& assignment,
                            FunctionRanks* ranks) {
  if (t.var >= 0) return;
  specs::Params p = specs::ResolveParams(t, assignment);
  ranks->Get(FunctionName(t.op, p, t.output), {t.op, p, t.output});
  for (const specs::AxiomTerm& a : t.args) CollectAxiomSignatures(a, assignment, ranks);
}

namespace {

constexpr uint32_t kAnyRank = (1u << (specs::kMaxRank + 1)) - 1;

// Bit r: the term may have rank r when variable v ranges over the ranks of var_ranks[v], each
// occurrence on its own (so this over-approximates the ranks at which the term type-checks).
uint32_t PossibleRanks(const specs::AxiomTerm& t, const std::vector<int64_t>& assignment,
                       const std::vector<uint32_t>& var_ranks, FunctionRanks* ranks) {
  if (t.var >= 0) return var_ranks[t.var];
  std::vector<uint32_t> args;
  for (const specs::AxiomTerm& a : t.args) {
    args.push_back(PossibleRanks(a, assignment, var_ranks, ranks));
    if (!args.back()) return 0;
  }
  specs::Params p = specs::ResolveParams(t, assignment);
  uint32_t out = 0;
  for (const specs::RankCase& c :
       ranks->Get(FunctionName(t.op, p, t.output), {t.op, p, t.output}).cases) {
    bool fits = true;
    for (size_t i = 0; fits && i < args.size(); ++i) fits = (args[i] >> c.inputs[i]) & 1;
    if (fits) out |= 1u << c.outputs[t.output];
  }
  return out;
}

}  // namespace

std::vector<std::vector<int>> AxiomGuards(const specs::Axiom& ax,
                                          const std::vector<int64_t>& assignment,
                                          FunctionRanks* ranks) {
  std::vector<std::vector<int>> guards(ax.vars.size());
  for (size_t v = 0; v < ax.vars.size(); ++v) {
    const specs::AxiomTensorVar& var = ax.vars[v];
    if (!var.ranks_declared) continue;
    for (int r = 0; r <= specs::kProbeMaxRank && guards[v].empty(); ++r) {
      if (std::find(var.ranks.begin(), var.ranks.end(), r) != var.ranks.end()) continue;
      std::vector<uint32_t> var_ranks(ax.vars.size(), kAnyRank);
      var_ranks[v] = 1u << r;
      if (PossibleRanks(ax.lhs, assignment, var_ranks, ranks) ||
          PossibleRanks(ax.rhs, assignment, var_ranks, ranks))
        guards[v] = var.ranks;
    }
  }
  return guards;
}

RankEncoder::RankEncoder(z3::context& ctx, const z3::sort& tensor)
    : ctx_(ctx), tensor_(tensor), rank_(ctx.function("rank", tensor, ctx.int_sort())) {}

z3::expr RankEncoder::RankIn(const z3::expr& t, const std::vector<int>& ranks) const {
  z3::expr_vector options(ctx_);
  for (int r : ranks) options.push_back(rank_(t) == ctx_.int_val(r));
  return z3::mk_or(options);
}

bool RanksWithin(const std::vector<int>& ranks, uint32_t mask) {
  for (int r : ranks)
    if (!((mask >> r) & 1)) return false;
  return true;
}

std::optional<z3::expr> RankEncoder::Facts(const z3::func_decl& f, const FunctionSig& sig,
                                           const std::vector<specs::RankCase>& cases,
                                           uint32_t ranks) const {
  const int n = specs::GetOp(sig.op).num_inputs;
  z3::expr_vector xs(ctx_);
  for (int i = 0; i < n; ++i) {
    std::string name = "x" + std::to_string(i);
    xs.push_back(ctx_.constant(name.c_str(), tensor_));
  }
  z3::expr app = f(xs);
  z3::expr_vector implications(ctx_);
  for (const specs::RankCase& c : cases) {
    if (*std::max_element(c.inputs.begin(), c.inputs.end()) > specs::kProbeMaxRank ||
        !RanksWithin(c.inputs, ranks))
      continue;
    z3::expr_vector premise(ctx_);
    for (int i = 0; i < n; ++i) premise.push_back(rank_(xs[i]) == ctx_.int_val(c.inputs[i]));
    implications.push_back(
        z3::implies(z3::mk_and(premise), rank_(app) == ctx_.int_val(c.outputs[sig.output])));
  }
  if (implications.empty()) return std::nullopt;
  return Forall(xs, {app}, z3::mk_and(implications));
}

}  // namespace verisub::verify
