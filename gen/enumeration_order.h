// The order in which the enumeration builds graphs, recomputed from a decoded graph. Graphs of
// one fingerprint are compared in this order: it decides a class's representative and center,
// so the candidates do not depend on how graphs are stored or sorted.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "gen/graph_code.h"
#include "gen/search_space.h"
#include "gen/type_cache.h"

namespace verisub::gen {

class EnumerationOrder {
 public:
  // Compared lexicographically: identity graphs first (by tensor), then by operator, each
  // operator by its place in the enumeration's loop over its prefix graph; a prefix before its
  // extensions.
  using Key = std::array<uint64_t, kMaxGraphOps + 1>;

  explicit EnumerationOrder(const SearchSpace& s);
  Key KeyOf(const Graph& g);  // caches shape rules, hence not const

 private:
  const SearchSpace& s_;
  TypeCache types_;
  std::vector<int> initial_type_;      // per initial tensor
  std::vector<int> first_tensor_;      // per initial tensor: smallest id of the same type
  std::vector<int> first_initial_of_;  // per type id: smallest initial tensor id, or -1
  uint64_t rejected_ = 0;              // never counted: the graphs were built
};

}  // namespace verisub::gen
