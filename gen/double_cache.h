// Double evaluation of many graphs that share subterms: each term is evaluated once per thread
// (on every test input) and kept while the cache is small.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "gen/graph_code.h"

namespace verisub::gen {

class DoubleCache {
 public:
  using Values = std::vector<specs::Tensor<double>>;  // one tensor per double test

  DoubleCache(const SearchSpace& s, size_t max_terms) : s_(s), max_terms_(max_terms) {}

  // Values of every tensor id of g; `keys` are TermKeys(s, g). Pointers stay valid until Trim().
  std::vector<const Values*> Evaluate(const Graph& g, const std::vector<uint64_t>& keys);
  // Forgets everything when the cache holds more than max_terms terms.
  void Trim();

 private:
  const SearchSpace& s_;
  size_t max_terms_;
  std::unordered_map<uint64_t, Values> terms_;
};

}  // namespace verisub::gen
