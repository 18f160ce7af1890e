// Incremental graph keys.
#include "rewriter/graph_key.h"

#include <algorithm>
#include <functional>
#include <string>

#include "runtime/graph_hash.h"

namespace verisub::rewriter {

using runtime::Graph;
using runtime::kNoValue;
using runtime::Node;

namespace {

using runtime::HashMix;

uint64_t DefinitionOf(specs::OpKind op, const specs::Params& params, const uint64_t* inputs,
                      int num_inputs) {
  return runtime::OperatorHash(op, params, inputs, num_inputs, /*commutative=*/true);
}

// The part of a node's hash that defines its outputs: operator, parameters and the identities
// of its inputs. An opaque node (never created by a rewrite) is known by its name.
uint64_t Definition(const Node& n, const uint64_t* inputs) {
  const int k = static_cast<int>(n.inputs.size());
  if (n.op) return DefinitionOf(*n.op, n.params, inputs, k);
  uint64_t h = HashMix(2, std::hash<std::string>()(n.name));
  for (int i = 0; i < k; ++i) h = HashMix(h, inputs[i]);
  return h;
}

uint64_t NodeHash(uint64_t definition, const uint64_t* outputs, size_t num_outputs) {
  uint64_t h = HashMix(definition, 3);
  for (size_t k = 0; k < num_outputs; ++k) h = HashMix(h, outputs[k]);
  return h;
}

uint64_t OutputTerm(size_t position, uint64_t ident) {
  return HashMix(HashMix(4, position), ident);
}

uint64_t IdentityOf(int v, const std::vector<uint64_t>& ident) {
  return v == kNoValue ? 0 : ident[v];
}

}  // namespace

GraphKeys GraphKeys::ForInput(const Graph& g) {
  GraphKeys k;
  k.ident_.resize(g.num_values());
  for (int v = 0; v < g.num_values(); ++v) k.ident_[v] = HashMix(5, static_cast<uint64_t>(v));
  k.HashNodes(g);
  return k;
}

GraphKeys GraphKeys::ForChild(const Graph& parent, const RewritePlan& plan,
                              const Graph& child) const {
  GraphKeys k;
  k.ident_ = ident_;
  k.ident_.resize(child.num_values(), 0);
  std::vector<uint64_t> created = NewIdentities(parent, plan);
  for (size_t i = 0; i < created.size(); ++i) k.ident_[parent.num_values() + i] = created[i];
  k.HashNodes(child);
  return k;
}

void GraphKeys::HashNodes(const Graph& g) {
  node_hash_.resize(g.num_nodes());
  key_ = 0;
  std::vector<uint64_t> in, out;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    in.clear();
    out.clear();
    for (int v : n.inputs) in.push_back(IdentityOf(v, ident_));
    for (int v : n.outputs) out.push_back(IdentityOf(v, ident_));
    node_hash_[i] = NodeHash(Definition(n, in.data()), out.data(), out.size());
    key_ += node_hash_[i];
  }
  for (size_t k = 0; k < g.outputs().size(); ++k)
    key_ += OutputTerm(k, IdentityOf(g.outputs()[k], ident_));
}

std::vector<uint64_t> GraphKeys::NewIdentities(const Graph& g, const RewritePlan& plan) const {
  const int first_new = g.num_values();
  std::vector<uint64_t> created(plan.new_types.size(), 0);
  std::vector<char> assigned(plan.new_types.size(), 0);
  // A replacement computes what the value it replaces computed: it takes over its identity.
  for (const auto& [from, to] : plan.redirect) {
    if (to < first_new || assigned[to - first_new]) continue;
    created[to - first_new] = ident_[from];
    assigned[to - first_new] = 1;
  }
  for (const RewritePlan::NewNode& n : plan.new_nodes) {
    uint64_t inputs[specs::kMaxOpInputs];
    for (int k = 0; k < n.num_inputs; ++k) {
      int v = n.inputs[k];
      inputs[k] = v < first_new ? ident_[v] : created[v - first_new];
    }
    const uint64_t def = DefinitionOf(n.op, n.params, inputs, n.num_inputs);
    for (int k = 0; k < n.num_outputs; ++k)
      if (!assigned[n.first_output + k]) created[n.first_output + k] = HashMix(def, k);
  }
  return created;
}

uint64_t GraphKeys::KeyAfter(const Graph& g, const GraphIndex& index,
                             const RewritePlan& plan) const {
  const int first_new = g.num_values();
  std::vector<uint64_t> created = NewIdentities(g, plan);
  auto ident = [&](int v) -> uint64_t {
    if (v == kNoValue) return 0;
    return v < first_new ? ident_[v] : created[v - first_new];
  };
  auto redirected = [&plan](int v) {
    for (const auto& [from, to] : plan.redirect)
      if (from == v) return to;
    return v;
  };
  auto removed = [&plan](int n) {
    return std::find(plan.removed.begin(), plan.removed.end(), n) != plan.removed.end();
  };
  uint64_t key = key_;
  for (int n : plan.removed) key -= node_hash_[n];
  for (const RewritePlan::NewNode& n : plan.new_nodes) {
    uint64_t in[specs::kMaxOpInputs];
    for (int k = 0; k < n.num_inputs; ++k) in[k] = ident(n.inputs[k]);
    uint64_t def = DefinitionOf(n.op, n.params, in, n.num_inputs);
    key += NodeHash(def, &created[n.first_output], n.num_outputs);
  }
  // Nodes left in place that read a replaced value now read its replacement.
  std::vector<int> rehashed;
  std::vector<uint64_t> in, out;
  for (const auto& [from, to] : plan.redirect) {
    for (const auto& [c, slot] : index.consumers[from]) {
      if (removed(c) || std::find(rehashed.begin(), rehashed.end(), c) != rehashed.end()) continue;
      rehashed.push_back(c);
      const Node& n = g.node(c);
      in.clear();
      out.clear();
      for (int v : n.inputs) in.push_back(ident(v == kNoValue ? v : redirected(v)));
      for (int v : n.outputs) out.push_back(ident(v));
      key += NodeHash(Definition(n, in.data()), out.data(), out.size()) - node_hash_[c];
    }
  }
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    int v = g.outputs()[k];
    int r = redirected(v);
    if (r != v) key += OutputTerm(k, ident(r)) - OutputTerm(k, ident(v));
  }
  return key;
}

}  // namespace verisub::rewriter
