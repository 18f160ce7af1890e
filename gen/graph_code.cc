// Graph encoding, decoding and rebuilding.
#include "gen/graph_code.h"

namespace verisub::gen {
namespace {

int BitWidth(uint64_t v) {
  int bits = 0;
  while (v >> bits) ++bits;
  return bits;
}

}  // namespace

GraphCodec::GraphCodec(int num_insts, int num_tensors, int max_ops, bool allow_packed,
                       int max_inputs) {
  fields_ = max_inputs > 2 ? 3 : 2;
  tensor_bits_ = BitWidth(static_cast<uint64_t>(num_tensors));
  bits_per_op_ = BitWidth(static_cast<uint64_t>(num_insts)) + fields_ * tensor_bits_;
  max_ops_ = max_ops;
  // An identity graph's tensor lies in the lowest bits, under its zero first field.
  packed_ = allow_packed && max_ops * bits_per_op_ <= 64 && tensor_bits_ < 64 - bits_per_op_;
}

Graph GraphCodec::Decode(uint64_t code, const std::vector<std::vector<uint8_t>>& arenas) const {
  Graph g;
  if (!packed_) {
    const uint8_t* c = arenas[code >> 32].data() + (code & 0xffffffffu);
    int n = c[0];
    if (n == 0) {
      g.identity_of = c[1];
      return g;
    }
    for (int k = 0; k < n; ++k) {
      const uint8_t* op = c + 1 + 5 * k;
      g.ops.push_back(GraphOp{static_cast<uint16_t>(op[0] | (op[1] << 8)), {op[2], op[3], op[4]}});
    }
    return g;
  }
  const uint64_t tensor_mask = (uint64_t{1} << tensor_bits_) - 1;
  const uint64_t field_mask = (uint64_t{1} << bits_per_op_) - 1;
  for (int k = 0; k < max_ops_; ++k) {
    uint64_t f = (code >> (64 - (k + 1) * bits_per_op_)) & field_mask;
    if (f == 0) break;
    GraphOp op;
    for (int i = fields_ - 1; i >= 0; --i, f >>= tensor_bits_) {
      const uint64_t t = f & tensor_mask;
      op.in[i] = t == 0 ? kNoTensor : static_cast<uint8_t>(t - 1);
    }
    op.inst = static_cast<uint16_t>(f - 1);
    g.ops.push_back(op);
  }
  if (g.ops.empty()) g.identity_of = static_cast<int>((code & tensor_mask) - 1);
  return g;
}

void AppendOp(const GraphOp& op, std::vector<uint8_t>* arena) {
  arena->push_back(static_cast<uint8_t>(op.inst & 0xff));
  arena->push_back(static_cast<uint8_t>(op.inst >> 8));
  for (uint8_t t : op.in) arena->push_back(t);
}

void AppendGraph(const Graph& g, std::vector<uint8_t>* arena) {
  arena->push_back(static_cast<uint8_t>(g.ops.size()));
  if (g.ops.empty()) {
    arena->push_back(static_cast<uint8_t>(g.identity_of));
    return;
  }
  for (const GraphOp& op : g.ops) AppendOp(op, arena);
}

}  // namespace verisub::gen
