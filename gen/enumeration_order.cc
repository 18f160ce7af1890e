// Enumeration order. Worker::Expand (enumerator.cc) groups the tensors of a graph by type, the
// groups in order of their first tensor, and loops over (operator instance, group of input 0,
// group of input 1[, group of input 2], input 0, input 1[, input 2]); the key of an operator is
// that tuple with each group named by its first tensor id.
#include "gen/enumeration_order.h"

#include "specs/registry.h"

namespace verisub::gen {

EnumerationOrder::EnumerationOrder(const SearchSpace& s) : s_(s) {
  for (size_t i = 0; i < s.initial.size(); ++i) {
    int t = types_.Intern(s.initial[i].type);
    initial_type_.push_back(t);
    if (static_cast<size_t>(t) >= first_initial_of_.size()) first_initial_of_.resize(t + 1, -1);
    if (first_initial_of_[t] < 0) first_initial_of_[t] = static_cast<int>(i);
    first_tensor_.push_back(first_initial_of_[t]);
  }
}

EnumerationOrder::Key EnumerationOrder::KeyOf(const Graph& g) {
  Key key{};
  if (g.ops.empty()) {
    key[1] = static_cast<uint64_t>(g.identity_of);
    return key;
  }
  const int num_initial = static_cast<int>(s_.initial.size());
  int out_type[kMaxGraphOutputs];
  auto type_of = [&](int id) {
    return id < num_initial ? initial_type_[id] : out_type[id - num_initial];
  };
  auto first_of_type = [&](int id) {
    if (id < num_initial) return first_tensor_[id];
    const int t = out_type[id - num_initial];
    if (static_cast<size_t>(t) < first_initial_of_.size() && first_initial_of_[t] >= 0)
      return first_initial_of_[t];
    for (int u = num_initial; u < id; ++u)
      if (out_type[u - num_initial] == t) return u;
    return id;
  };
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const GraphOp& op = g.ops[k];
    const bool binary = op.in[1] != kNoTensor, ternary = op.in[2] != kNoTensor;
    const auto& r =
        types_.Infer(s_.config->ops[op.inst], op.inst, type_of(op.in[0]),
                     binary ? type_of(op.in[1]) : -1, &rejected_, ternary ? type_of(op.in[2]) : -1);
    VERISUB_CHECK(r.ok);
    for (int j = 0; j < specs::kMaxOpOutputs; ++j) out_type[2 * k + j] = r.out[j];
    uint64_t k0 = static_cast<uint64_t>(first_of_type(op.in[0])), t0 = op.in[0];
    uint64_t k1 = binary ? static_cast<uint64_t>(first_of_type(op.in[1])) : 0;
    uint64_t t1 = binary ? op.in[1] : 0;
    uint64_t k2 = ternary ? static_cast<uint64_t>(first_of_type(op.in[2])) : 0;
    uint64_t t2 = ternary ? op.in[2] : 0;
    key[k] = 1 + ((uint64_t{op.inst} << 48) | (k0 << 40) | (k1 << 32) | (k2 << 24) | (t0 << 16) |
                  (t1 << 8) | t2);
  }
  return key;
}

}  // namespace verisub::gen
