// What is rebuilt from an enumerated graph: its outputs, its pattern, its term keys and which
// operators each output depends on.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "gen/graph_code.h"
#include "gen/search_space.h"
#include "ruledb/pattern.h"

namespace verisub::gen {

// Output tensor ids of a graph, inline.
struct OutputList {
  std::array<uint8_t, kMaxGraphOutputs> ids{};
  int size = 0;
};

// Graph outputs: operator outputs no operator of the graph consumes, in production order.
OutputList GraphOutputs(const SearchSpace& s, const Graph& g);

// The graph as a pattern over the config's inputs (constants become constant nodes on their
// source input); outputs in the order given (tensor ids).
ruledb::PatternGraph ToPattern(const SearchSpace& s, const Graph& g,
                               const std::vector<int>& outputs);

// A key per tensor id that is equal exactly when two tensors are the same term over the same
// initial tensors (operands of commutative operators unordered, unless break_commutative is off).
// Initial tensors' keys are SearchSpace::term_keys; `op_keys[2k + j]` is operator k's output j.
void OpTermKeys(const SearchSpace& s, const Graph& g, uint64_t* op_keys);
inline uint64_t TermKey(const SearchSpace& s, const uint64_t* op_keys, int id) {
  const int num_initial = static_cast<int>(s.initial.size());
  return id < num_initial ? s.term_keys[id] : op_keys[id - num_initial];
}

// For each output, the set of operators it depends on (bit k: operator k; none for an initial
// tensor).
void OutputOpSets(const SearchSpace& s, const Graph& g, const uint8_t* outputs, int n,
                  uint32_t* sets);

// Number of groups the outputs fall into when outputs that share an operator (on either side)
// are grouped; `other` may be null.
int CountOutputGroups(const uint32_t* sets, const uint32_t* other, int n);

}  // namespace verisub::gen
