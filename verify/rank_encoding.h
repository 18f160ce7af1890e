// Ranks in the encoding: the rank cases of operator functions (from the shape rules, see
// specs/rank_probe.h), which axiom variables need a rank guard, and the Z3 rank facts.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "specs/axiom.h"
#include "specs/rank_probe.h"

namespace verisub::verify {

// An operator function of the encoding: operator, parameter values and output.
struct FunctionSig {
  specs::OpKind op = specs::OpKind::kNumOps;
  specs::Params params;
  int output = 0;
};

// Function name -> signature and rank cases (input ranks 0..specs::kMaxRank at which the
// function type-checks, with its output rank), probed on first use.
class FunctionRanks {
 public:
  struct Entry {
    FunctionSig sig;
    std::vector<specs::RankCase> cases;
  };
  const Entry& Get(const std::string& name, const FunctionSig& sig);
  // Null when `name` has not been probed.
  const Entry* Find(const std::string& name) const;

 private:
  std::map<std::string, Entry> entries_;
};

// Registers every function an axiom term applies under an assignment (name -> signature).
void CollectAxiomSignatures(const specs::AxiomTerm& t, const std::vector<int64_t>& assignment,
                            FunctionRanks* ranks);

// Per tensor variable of `ax` under `assignment`: the ranks its guard allows (the declared
// ones), or empty for no guard. A variable without declared ranks has none; nor has one whose
// declared ranks include every rank 0..specs::kProbeMaxRank at which a side of the axiom could
// type-check (rank cases of its functions, each occurrence of a variable on its own: an
// over-approximation, so a guard is dropped only where both sides are ill-typed at every other
// rank, e.g. `x:4` of a convolution axiom, `s:0` of smul, `x:2|3|4` of matmul_assoc). Such a
// declaration restates the shape rules; a guard stays where the axiom is false at ranks that
// type-check (matmul_concat_cols' `x:2`: batched matmuls) or where one side is a bare variable
// (`matmul_identity`, whose right side is well-typed at every rank). Ranks above
// kProbeMaxRank count as declared, as they do for a variable without declared ranks: axioms
// are validated up to rank 4.
std::vector<std::vector<int>> AxiomGuards(const specs::Axiom& ax,
                                          const std::vector<int64_t>& assignment,
                                          FunctionRanks* ranks);

// Whether every rank of `ranks` is in `mask` (bit r: rank r).
bool RanksWithin(const std::vector<int>& ranks, uint32_t mask);

// Z3 terms for ranks: `rank: Tensor -> Int`.
class RankEncoder {
 public:
  RankEncoder(z3::context& ctx, const z3::sort& tensor);

  z3::expr Rank(const z3::expr& t) const { return rank_(t); }
  // rank(t) is one of `ranks` (a disjunction; `ranks` not empty).
  z3::expr RankIn(const z3::expr& t, const std::vector<int>& ranks) const;
  // forall xs. (rank(x0) = r0 and ...) -> rank(f(xs)) = r, one implication per case whose
  // input ranks are at most specs::kProbeMaxRank and in `ranks` (a bit mask), with the
  // application f(xs) as the pattern; nullopt when there is no such case.
  std::optional<z3::expr> Facts(const z3::func_decl& f, const FunctionSig& sig,
                                const std::vector<specs::RankCase>& cases,
                                uint32_t ranks = ~0u) const;

 private:
  z3::context& ctx_;
  z3::sort tensor_;
  z3::func_decl rank_;
};

}  // namespace verisub::verify
