// The resolved search space: initial tensors (inputs and constants) with their random values in
// both semantics, the operator instances, and the keys used for symmetry breaking.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gen/config.h"
#include "specs/tensor.h"

namespace verisub::gen {

// A tensor every graph may use without an operator: a graph input or a constant.
struct InitialTensor {
  std::string name;  // "x0", or "const_ones(x0)"
  bool is_input = true;
  int input = 0;             // config input index; a constant's shape source
  std::vector<int> sources;  // constants: the config inputs it is computed from
  OpInstance constant;       // constants only
  int group = 0;             // interchangeable group of `input`
  int member = 0;            // index of `input` inside its group
  // Structural key, distinct per initial tensor (orders operands and operators).
  uint64_t key = 0;
  specs::TensorType type;
  // Per config.ops entry, the arguments this tensor may feed (bit a: argument a).
  std::vector<uint8_t> allowed_args;
};

struct SearchSpace {
  const GenConfig* config = nullptr;
  std::vector<InitialTensor> initial;  // inputs first (config order), then constants
  int num_groups = 0;
  std::vector<uint64_t> op_keys;  // per config.ops entry
  std::vector<int> num_outputs;   // per config.ops entry
  // Per config.ops entry: its operands are put in key order in term keys (commutative, and
  // break_commutative on).
  std::vector<bool> ordered_operands;
  std::vector<uint64_t> term_keys;                          // per initial tensor (graph_terms.h)
  std::vector<specs::Tensor<uint32_t>> modint;              // per initial tensor
  std::vector<std::vector<specs::Tensor<double>>> doubles;  // [test][initial tensor]
};

// Draws the random values and evaluates the constants; fails if a constant's shape rule
// rejects its source input.
StatusOr<SearchSpace> BuildSearchSpace(const GenConfig& config);

// Mixing helpers shared by the enumeration and the fingerprints.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}
inline uint64_t HashCombine(uint64_t a, uint64_t b) { return Mix64(a * 0x9e3779b97f4a7c15ull + b); }

// Hash of a tensor type: shape and every dimension's split tree.
uint64_t HashType(const specs::TensorType& t);

}  // namespace verisub::gen
