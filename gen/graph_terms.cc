// Rebuilding outputs, patterns and keys from an enumerated graph.
#include "gen/graph_terms.h"

#include "specs/registry.h"

namespace verisub::gen {

OutputList GraphOutputs(const SearchSpace& s, const Graph& g) {
  OutputList out;
  if (g.ops.empty()) {
    out.ids[out.size++] = static_cast<uint8_t>(g.identity_of);
    return out;
  }
  const int num_initial = static_cast<int>(s.initial.size());
  uint32_t consumed = 0;  // bit 2k + j: operator k's output j
  for (const GraphOp& op : g.ops)
    for (uint8_t t : op.in)
      if (t != kNoTensor && t >= num_initial) consumed |= 1u << (t - num_initial);
  for (size_t k = 0; k < g.ops.size(); ++k) {
    int n = s.num_outputs[g.ops[k].inst];
    for (int j = 0; j < n; ++j) {
      int bit = 2 * static_cast<int>(k) + j;
      if (!((consumed >> bit) & 1)) out.ids[out.size++] = static_cast<uint8_t>(num_initial + bit);
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
      for (int source : t.sources) n.inputs.push_back({ValueRef::kInput, source});
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

void OpTermKeys(const SearchSpace& s, const Graph& g, uint64_t* op_keys) {
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const GraphOp& op = g.ops[k];
    uint64_t k0 = TermKey(s, op_keys, op.in[0]);
    uint64_t k1 = op.in[1] != kNoTensor ? TermKey(s, op_keys, op.in[1]) : 0;
    if (s.ordered_operands[op.inst] && k1 < k0) std::swap(k0, k1);
    uint64_t key = HashCombine(HashCombine(s.op_keys[op.inst], k0), k1);
    if (op.in[2] != kNoTensor) key = HashCombine(key, TermKey(s, op_keys, op.in[2]));
    for (int j = 0; j < s.num_outputs[op.inst]; ++j)
      op_keys[2 * k + j] = HashCombine(key, static_cast<uint64_t>(j));
  }
}

void OutputOpSets(const SearchSpace& s, const Graph& g, const uint8_t* outputs, int n,
                  uint32_t* sets) {
  const int num_initial = static_cast<int>(s.initial.size());
  uint32_t deps[kMaxGraphOps];
  for (size_t k = 0; k < g.ops.size(); ++k) {
    uint32_t d = 1u << k;
    for (uint8_t t : g.ops[k].in)
      if (t != kNoTensor && t >= num_initial) d |= deps[(t - num_initial) / 2];
    deps[k] = d;
  }
  for (int i = 0; i < n; ++i)
    sets[i] = outputs[i] < num_initial ? 0 : deps[(outputs[i] - num_initial) / 2];
}

int CountOutputGroups(const uint32_t* sets, const uint32_t* other, int n) {
  int group[kMaxGraphOutputs];
  for (int i = 0; i < n; ++i) group[i] = i;
  auto find = [&](int i) {
    while (group[i] != i) i = group[i] = group[group[i]];
    return i;
  };
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if ((sets[i] & sets[j]) || (other && (other[i] & other[j]))) group[find(i)] = find(j);
  int groups = 0;
  for (int i = 0; i < n; ++i) groups += find(i) == i;
  return groups;
}

}  // namespace verisub::gen
