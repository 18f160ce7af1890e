// A decision procedure for the rules E-matching on the axioms cannot settle: both sides written
// element by element at a symbolic index and brought to one normal form.
//
// An element of an operator's output is a polynomial over atoms: an element of a rule input or
// of an operator outside the fragment at an index of coordinate variables, an uninterpreted
// function (activations) of a normal form, and a finite sum over bound coordinates of a product
// of atoms. The fragment's operators carry their definitions (ewadd, ewsub, ewmul, smul,
// bias_add, channel_scale, transpose, matmul, conv2d and conv2d_bias of groups 1 and depthwise,
// pool_avg, reduce_mean, concat and split in pieces, the pointwise activations and the constant
// kernels; docs/verifier.md has the list and what each simplification rests on); any other
// operator is an opaque tensor whose inputs are normal forms themselves, so equal arguments give
// the same opaque tensor (congruence). Normal form: polynomials expanded with exact rational
// coefficients, a sum's factors that do not depend on its bound coordinates moved out, products
// of sums merged into one sum over the union of their bound coordinates, and bound coordinates
// named canonically (the least rendering over their permutations). Two sides whose outputs have
// equal normal forms at the same index are equal at every shape of those ranks where both
// type-check: that is a proof, shapes symbolic, not a test at some shapes. Different normal forms
// decide nothing (the rule goes on as not proved).
#pragma once

#include <string>
#include <vector>

#include "ruledb/rule.h"

namespace verisub::verify {

struct IndexLevelResult {
  bool proved = false;
  // When proved: `index:<operator>` for each operator whose element definition the proof used,
  // sorted (the proof record's axioms_used).
  std::vector<std::string> used;
  // When not: why (outside the fragment at these ranks, or the normal forms that differ).
  std::string reason;
};

// Whether every mapped output of `rule` has equal normal forms on both sides with the inputs at
// `input_ranks` (one per input).
IndexLevelResult ProveAtIndexLevel(const ruledb::Rule& rule, const std::vector<int>& input_ranks);

// The input-rank tuples in 0..specs::kProbeMaxRank at which every operator of both sides has
// known output ranks (ProbeOutputRanks along the patterns), in lexicographic order: every tuple
// where both sides could type-check, and possibly more.
std::vector<std::vector<int>> CandidateRankTuples(const ruledb::Rule& rule);

// The normal form of one output of `g` (inputs at `input_ranks`) at the index (#0;, #1;, ...),
// rendered; empty with `error` outside the fragment. For tests and diagnostics.
std::string IndexNormalForm(const ruledb::PatternGraph& g, const std::vector<int>& input_ranks,
                            int output, std::string* error);

}  // namespace verisub::verify
