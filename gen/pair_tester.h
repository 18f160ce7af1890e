// Candidate pairs: graphs that share a fingerprint are split into classes that agree on random
// double inputs (which also fixes the output mapping), and pairs in a class become candidate
// rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gen/enumerator.h"
#include "gen/graph_code.h"
#include "ruledb/rule.h"

namespace verisub::gen {

struct PairStats {
  uint64_t distinct_fingerprints = 0;
  uint64_t buckets = 0;  // fingerprints shared by two graphs or more
  uint64_t graphs_in_buckets = 0;
  uint64_t largest_bucket = 0;
  uint64_t graphs_not_evaluated = 0;  // no pair with them could be kept (drop_composite_pairs)
  uint64_t terms_evaluated = 0;       // operator outputs computed in double (all tests)
  uint64_t terms_reused = 0;          // operator outputs found in the double cache
  uint64_t classes = 0;               // classes that agree in double, over all buckets
  uint64_t double_mismatches = 0;     // graphs that disagreed in double with their bucket's first
                                      // class (integer-only coincidences)
  uint64_t largest_class = 0;
  uint64_t pairs = 0;                // pairs inside classes
  uint64_t trivial_pairs = 0;        // both sides the same rule text (symmetric duplicates)
  uint64_t common_output_pairs = 0;  // some output the same term on both sides (dropped)
  uint64_t decomposable_pairs = 0;   // a union of smaller rules (dropped)
  uint64_t congruent_pairs = 0;      // every output the same operator on equal inputs (dropped)
  uint64_t unorientable_pairs = 0;   // each side uses an input the other lacks
  uint64_t rules_before_dedup = 0;   // pairs kept as rules, before duplicates are removed
  uint64_t candidates = 0;           // distinct rules
};

struct CandidateTexts {
  std::vector<std::string> texts;  // canonical rule texts (Rule::ToText()), sorted, unique
  PairStats stats;
};

// Tests the buckets of `e`, partitions in parallel; the result does not depend on `threads`.
CandidateTexts TestPairs(const SearchSpace& s, const Enumeration& e, int threads,
                         ProgressCounters* progress);

// The canonical text of the rule `a => b` or `b => a` (whichever has the target's inputs among
// the source's; if both, the one with the smaller text), with the output order that gives the
// smallest text. `a_outputs[i]` and `b_outputs[i]` are equal outputs. Empty when no orientation
// is valid.
std::optional<std::string> RuleText(const SearchSpace& s, const Graph& a,
                                    const std::vector<int>& a_outputs, const Graph& b,
                                    const std::vector<int>& b_outputs);

// |x - y| <= tolerance * max(1, |x|, |y|) for every element, and equal types.
bool Close(const specs::Tensor<double>& x, const specs::Tensor<double>& y, double tolerance);

}  // namespace verisub::gen
