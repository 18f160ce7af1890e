// Double evaluation of many graphs that share subterms: each term is evaluated once (on every
// test input) and kept while it is recent. Two generations: when the recent terms pass half the
// byte budget they become the old generation, and a term found there moves back to the recent.
// A term of max_ops operators is in no other graph (each graph is built once), so it is only
// kept until the next Trim(), outside the budget.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "gen/graph_code.h"
#include "gen/search_space.h"

namespace verisub::gen {

class DoubleCache {
 public:
  using Values = std::vector<specs::Tensor<double>>;  // one tensor per double test

  DoubleCache(const SearchSpace& s, size_t max_bytes);

  const Values* Initial(int i) const { return &initial_[i]; }
  // Values of g's operator outputs: op_values[2k + j] for operator k's output j; `op_keys` are
  // OpTermKeys(s, g). Pointers stay valid until Trim().
  void Evaluate(const Graph& g, const uint64_t* op_keys, const Values** op_values);
  // Starts a new generation when the recent one is full.
  void Trim();

  uint64_t evaluated() const { return evaluated_; }  // terms computed
  uint64_t reused() const { return reused_; }        // terms found in the cache

 private:
  using Map = std::unordered_map<uint64_t, Values>;
  const Values* Find(uint64_t key);
  void Compute(const GraphOp& op, const Values* const* in, Values* const* out) const;
  static size_t Bytes(const Values& v);

  const SearchSpace& s_;
  size_t max_bytes_;
  std::vector<Values> initial_;
  Map recent_, old_;
  std::deque<Values> whole_graph_terms_;  // terms of max_ops operators: the first `used`
  size_t whole_graph_terms_used_ = 0;
  Values scratch_[specs::kMaxOpOutputs];  // an output whose value is already cached
  size_t recent_bytes_ = 0;
  uint64_t evaluated_ = 0, reused_ = 0;
};

}  // namespace verisub::gen
