// An enumerated graph and its compact encoding: one 64-bit code, or a few bytes per operator in
// an arena when the config's graphs do not fit in 64 bits.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "specs/op_spec.h"

namespace verisub::gen {

// Tensor ids: initial tensors are 0..I-1; operator k's output j is I + 2k + j.
inline constexpr uint8_t kNoTensor = 255;
// Operators of up to three inputs (conv2d_bias, layer_norm, select) are enumerated.
inline constexpr int kMaxGraphOpInputs = 3;
// GenConfig::max_ops is at most this.
inline constexpr int kMaxGraphOps = 8;
inline constexpr int kMaxGraphOutputs = kMaxGraphOps * specs::kMaxOpOutputs;

struct GraphOp {
  uint16_t inst = 0;  // index into GenConfig::ops
  uint8_t in[kMaxGraphOpInputs] = {kNoTensor, kNoTensor, kNoTensor};
  int arity() const { return in[1] == kNoTensor ? 1 : in[2] == kNoTensor ? 2 : 3; }
};

// The operators of a graph, stored inline (a graph has at most kMaxGraphOps).
class OpList {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const GraphOp& operator[](size_t k) const { return ops_[k]; }
  GraphOp& operator[](size_t k) { return ops_[k]; }
  const GraphOp* begin() const { return ops_.data(); }
  const GraphOp* end() const { return ops_.data() + size_; }
  void push_back(const GraphOp& op) { ops_[size_++] = op; }
  void resize(size_t n) { size_ = static_cast<uint8_t>(n); }

 private:
  std::array<GraphOp, kMaxGraphOps> ops_{};
  uint8_t size_ = 0;
};

// A decoded graph. A graph with no operators is an identity graph: its one output is the
// initial tensor `identity_of`.
struct Graph {
  OpList ops;
  int identity_of = -1;
};

// Graph codes. Packed: operator k is a field of `bits_per_op` bits, the first operator in the
// highest bits, holding (instance + 1, input 0 + 1, input 1 + 1[, input 2 + 1]) with 0 for
// "none" (the third input's bits only where the space has an operator of three inputs), so the
// fields of a graph's prefix are the prefix's code; an identity graph has a zero first field and
// its tensor + 1 in the lowest bits (where no other graph has a zero first field). Arena: the
// code is (task << 32 | byte offset) into the task's arena, where a graph is one byte with the
// operator count n, then 5 bytes per operator (instance low, high, inputs 0, 1 and 2); an
// identity graph is a 0 followed by the tensor id.
class GraphCodec {
 public:
  GraphCodec() = default;
  // Packs when every graph of up to max_ops operators fits in 64 bits, unless allow_packed is
  // false (tests use it to exercise the arena form). max_inputs: the most inputs an operator
  // instance of the space takes (2 or 3).
  GraphCodec(int num_insts, int num_tensors, int max_ops, bool allow_packed = true,
             int max_inputs = 2);

  bool packed() const { return packed_; }
  // The field of one operator at position k (packed codes only); OR the fields of a graph.
  uint64_t Field(int k, const GraphOp& op) const {
    uint64_t f = op.inst + uint64_t{1};
    for (int i = 0; i < fields_; ++i)
      f = (f << tensor_bits_) | (op.in[i] == kNoTensor ? 0 : op.in[i] + uint64_t{1});
    return f << (64 - (k + 1) * bits_per_op_);
  }
  uint64_t IdentityCode(int tensor) const { return static_cast<uint64_t>(tensor) + 1; }

  Graph Decode(uint64_t code, const std::vector<std::vector<uint8_t>>& arenas) const;

 private:
  bool packed_ = false;
  int tensor_bits_ = 0, bits_per_op_ = 0, max_ops_ = 0, fields_ = 2;
};

// An operator's arena bytes (instance low, high, inputs 0, 1 and 2); a graph is its operator
// count, then its operators.
void AppendOp(const GraphOp& op, std::vector<uint8_t>* arena);
void AppendGraph(const Graph& g, std::vector<uint8_t>* arena);

}  // namespace verisub::gen
