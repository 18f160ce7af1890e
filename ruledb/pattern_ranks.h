// Ranks of the values of a pattern given ranks of its inputs, from the shape rules
// (specs::ProbeOutputRanks): what pruning needs to carry a ranked rule's ranks over to its
// generalizations and to decide which rules a ranked rule covers.
#pragma once

#include <vector>

#include "ruledb/pattern.h"
#include "ruledb/rule.h"

namespace verisub::ruledb {

class PatternRanks {
 public:
  // `input_ranks`: one per pattern input (those without one, or -1, make what depends on them
  // unknown).
  PatternRanks(const PatternGraph& g, const std::vector<int>& input_ranks);

  // The rank of a value, or -1 when it is unknown (an input without a rank, or an operator no
  // probe of its input ranks type-checks).
  int Rank(ValueRef v) const;

 private:
  std::vector<int> input_ranks_;
  std::vector<std::vector<int>> node_ranks_;  // per node, per output
};

// Whether `ranks` (one per input) is the only combination of input ranks 0..specs::kMaxRank at
// which both sides of `rule` can type-check. Then a proof at those ranks covers every use of the
// rule, and it needs no input ranks (e.g. `(transpose[perm=[1,0]] (transpose[perm=[1,0]] ?a))
// => ?a`, which type-checks at rank 2 only). Decided by narrowing each input's possible ranks
// with the rank cases of the operators (specs::ProbeRankCases), each use of an input on its own:
// an over-approximation of where the sides type-check, so `false` may be conservative, `true`
// is not.
bool RanksAreForced(const Rule& rule, const std::vector<int>& ranks);

}  // namespace verisub::ruledb
