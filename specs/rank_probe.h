// Output ranks of operator instances as a function of their input ranks, found by running the
// shape rules on probe inputs: what the verifier's rank facts and the pruning of ranked rules
// know about ranks, derived from the shape rules rather than restated.
#pragma once

#include <vector>

#include "specs/op_spec.h"
#include "specs/params.h"

namespace verisub::specs {

// Input ranks 0..kProbeMaxRank are probed (the ranks the axioms are validated at).
inline constexpr int kProbeMaxRank = 4;

// The output ranks of `op` with `params` applied to inputs of the given ranks (one per input),
// when a probe of those ranks type-checks; false otherwise (no rank is known). The probes, tried
// in order: every dimension 1; every dimension 3 (windows of 3 with padding=valid); every
// dimension the concatenation of two 1s, with that concat history (so a split along any axis
// has a history to undo). For every operator of the set the output ranks depend on the input
// ranks and the parameters only, so any probe that type-checks gives them (tested).
bool ProbeOutputRanks(OpKind op, const Params& params, const std::vector<int>& input_ranks,
                      std::vector<int>* output_ranks);

// One combination of input ranks at which an operator instance type-checks.
struct RankCase {
  std::vector<int> inputs;   // one rank per input
  std::vector<int> outputs;  // one rank per output
};

// Every combination of input ranks in 0..max_rank for which ProbeOutputRanks succeeds, in
// lexicographic order of the input ranks. Memoized (thread-safe); the reference stays valid.
const std::vector<RankCase>& ProbeRankCases(OpKind op, const Params& params, int max_rank = kProbeMaxRank);

}  // namespace verisub::specs
