// Graph encoding, decoding and rebuilding.
#include "gen/graph_code.h"

#include <array>

#include "specs/evaluate.h"
#include "specs/semantics.h"

namespace verisub::gen {

void AppendGraph(const Graph& g, std::vector<uint8_t>* arena) {
  arena->push_back(static_cast<uint8_t>(g.ops.size()));
  if (g.ops.empty()) {
    arena->push_back(static_cast<uint8_t>(g.identity_of));
    return;
  }
  for (const GraphOp& op : g.ops) {
    arena->push_back(static_cast<uint8_t>(op.inst & 0xff));
    arena->push_back(static_cast<uint8_t>(op.inst >> 8));
    arena->push_back(op.in[0]);
    arena->push_back(op.in[1]);
  }
}

Graph DecodeGraph(const uint8_t* code) {
  Graph g;
  int n = code[0];
  if (n == 0) {
    g.identity_of = code[1];
    return g;
  }
  g.ops.resize(n);
  for (int k = 0; k < n; ++k) {
    const uint8_t* c = code + 1 + 4 * k;
    g.ops[k].inst = static_cast<uint16_t>(c[0] | (c[1] << 8));
    g.ops[k].in[0] = c[2];
    g.ops[k].in[1] = c[3];
  }
  return g;
}

std::vector<int> GraphOutputs(const SearchSpace& s, const Graph& g) {
  if (g.ops.empty()) return {g.identity_of};
  const int num_initial = static_cast<int>(s.initial.size());
  std::vector<bool> consumed(num_initial + 2 * g.ops.size(), false);
  for (const GraphOp& op : g.ops)
    for (uint8_t t : op.in)
      if (t != kNoTensor) consumed[t] = true;
  std::vector<int> out;
  for (size_t k = 0; k < g.ops.size(); ++k) {
    int n = specs::GetOp(s.config->ops[g.ops[k].inst].kind).num_outputs;
    for (int j = 0; j < n; ++j) {
      int id = num_initial + 2 * static_cast<int>(k) + j;
      if (!consumed[id]) out.push_back(id);
    }
  }
  return out;
}

ruledb::PatternGraph ToPattern(const SearchSpace& s, const Graph& g,
                               const std::vector<int>& outputs) {
  using ruledb::ValueRef;
  ruledb::PatternGraph p;
  const int num_initial = static_cast<int>(s.initial.size());
  std::vector<int> constant_node(num_initial, -1);
  std::vector<int> op_node(g.ops.size());
  auto resolve = [&](int id) -> ValueRef {
    if (id >= num_initial) return {op_node[(id - num_initial) / 2], (id - num_initial) % 2};
    const InitialTensor& t = s.initial[id];
    if (t.is_input) return {ValueRef::kInput, t.input};
    if (constant_node[id] < 0) {
      ruledb::PatternNode n;
      n.op = t.constant.kind;
      n.params = t.constant.params;
      n.inputs = {{ValueRef::kInput, t.input}};
      constant_node[id] = static_cast<int>(p.nodes.size());
      p.nodes.push_back(std::move(n));
    }
    return {constant_node[id], 0};
  };
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const OpInstance& inst = s.config->ops[g.ops[k].inst];
    ruledb::PatternNode n;
    n.op = inst.kind;
    n.params = inst.params;
    for (int i = 0; i < specs::GetOp(inst.kind).num_inputs; ++i)
      n.inputs.push_back(resolve(g.ops[k].in[i]));
    op_node[k] = static_cast<int>(p.nodes.size());
    p.nodes.push_back(std::move(n));
  }
  for (int id : outputs) p.outputs.push_back(resolve(id));
  return p;
}

std::vector<uint64_t> TermKeys(const SearchSpace& s, const Graph& g) {
  const int num_initial = static_cast<int>(s.initial.size());
  std::vector<uint64_t> keys(num_initial + 2 * g.ops.size(), 0);
  for (int i = 0; i < num_initial; ++i)
    keys[i] = HashCombine(0x3c6ef372ull, static_cast<uint64_t>(i));
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const OpInstance& inst = s.config->ops[g.ops[k].inst];
    const specs::OpSpec& op = specs::GetOp(inst.kind);
    uint64_t k0 = keys[g.ops[k].in[0]];
    uint64_t k1 = op.num_inputs > 1 ? keys[g.ops[k].in[1]] : 0;
    if (op.commutative && s.config->break_commutative && k1 < k0) std::swap(k0, k1);
    uint64_t key = HashCombine(HashCombine(s.op_keys[g.ops[k].inst], k0), k1);
    for (int j = 0; j < op.num_outputs; ++j)
      keys[num_initial + 2 * k + j] = HashCombine(key, static_cast<uint64_t>(j));
  }
  return keys;
}

std::vector<uint32_t> OutputOpSets(const SearchSpace& s, const Graph& g,
                                   const std::vector<int>& outputs) {
  const int num_initial = static_cast<int>(s.initial.size());
  std::vector<uint32_t> deps(num_initial + 2 * g.ops.size(), 0);
  for (size_t k = 0; k < g.ops.size(); ++k) {
    uint32_t d = 1u << k;
    for (uint8_t t : g.ops[k].in)
      if (t != kNoTensor) d |= deps[t];
    deps[num_initial + 2 * k] = deps[num_initial + 2 * k + 1] = d;
  }
  std::vector<uint32_t> out;
  for (int id : outputs) out.push_back(deps[id]);
  return out;
}

int CountOutputGroups(const std::vector<uint32_t>& sets, const std::vector<uint32_t>& other) {
  const size_t n = sets.size();
  std::vector<size_t> group(n);
  for (size_t i = 0; i < n; ++i) group[i] = i;
  auto find = [&](size_t i) {
    while (group[i] != i) i = group[i] = group[group[i]];
    return i;
  };
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j)
      if ((sets[i] & sets[j]) || (!other.empty() && (other[i] & other[j])))
        group[find(i)] = find(j);
  int groups = 0;
  for (size_t i = 0; i < n; ++i) groups += find(i) == i;
  return groups;
}

std::vector<specs::Tensor<double>> EvalDouble(const SearchSpace& s, const Graph& g, int test,
                                              const std::vector<int>& outputs) {
  const int num_initial = static_cast<int>(s.initial.size());
  std::vector<std::array<specs::Tensor<double>, specs::kMaxOpOutputs>> values(g.ops.size());
  auto get = [&](int id) -> const specs::Tensor<double>* {
    if (id < num_initial) return &s.doubles[test][id];
    return &values[(id - num_initial) / 2][(id - num_initial) % 2];
  };
  specs::DoubleSemantics db;
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const OpInstance& inst = s.config->ops[g.ops[k].inst];
    const specs::Tensor<double>* in[specs::kMaxOpInputs];
    for (int i = 0; i < specs::GetOp(inst.kind).num_inputs; ++i) in[i] = get(g.ops[k].in[i]);
    // The integer evaluation of the same graph passed shape inference, so this cannot fail.
    VERISUB_CHECK(specs::Evaluate(db, inst.kind, inst.params, in, values[k].data()).ok());
  }
  std::vector<specs::Tensor<double>> out;
  for (int id : outputs) out.push_back(*get(id));
  return out;
}

}  // namespace verisub::gen
