// Compact encoding of an enumerated graph (a few bytes per operator), and what can be rebuilt
// from it: its pattern graph, its outputs, and its values in double.
#pragma once

#include <cstdint>
#include <vector>

#include "gen/search_space.h"
#include "ruledb/pattern.h"

namespace verisub::gen {

// Tensor ids: initial tensors are 0..I-1; operator k's output j is I + 2k + j.
inline constexpr uint8_t kNoTensor = 255;

struct GraphOp {
  uint16_t inst = 0;  // index into GenConfig::ops
  uint8_t in[2] = {kNoTensor, kNoTensor};
};

// A decoded graph. A graph with no operators is an identity graph: its one output is the
// initial tensor `identity_of`.
struct Graph {
  std::vector<GraphOp> ops;
  int identity_of = -1;
};

// Encoding: one byte with the operator count n, then 4 bytes per operator (instance low, high,
// input 0, input 1); an identity graph is a 0 followed by the tensor id.
void AppendGraph(const Graph& g, std::vector<uint8_t>* arena);
Graph DecodeGraph(const uint8_t* code);

// Graph outputs: operator outputs no operator of the graph consumes, in production order.
std::vector<int> GraphOutputs(const SearchSpace& s, const Graph& g);

// The graph as a pattern over the config's inputs (constants become constant nodes on their
// source input); outputs in the order given (tensor ids).
ruledb::PatternGraph ToPattern(const SearchSpace& s, const Graph& g,
                               const std::vector<int>& outputs);

// A key per tensor id that is equal exactly when two tensors are the same term over the same
// initial tensors (operands of commutative operators unordered, unless break_commutative is off).
std::vector<uint64_t> TermKeys(const SearchSpace& s, const Graph& g);

// For each of `outputs`, the set of operators it depends on (bit k: operator k).
std::vector<uint32_t> OutputOpSets(const SearchSpace& s, const Graph& g,
                                   const std::vector<int>& outputs);

// Number of groups the outputs fall into when outputs that share an operator (on either side)
// are grouped; `other` may be empty.
int CountOutputGroups(const std::vector<uint32_t>& sets, const std::vector<uint32_t>& other);

// Values of the given output tensors on double test `test`.
std::vector<specs::Tensor<double>> EvalDouble(const SearchSpace& s, const Graph& g, int test,
                                              const std::vector<int>& outputs);

}  // namespace verisub::gen
