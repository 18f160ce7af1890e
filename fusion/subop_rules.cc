#include "fusion/subop_rules.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "specs/ops/broadcast.h"
#include "specs/ops/reduce_axis.h"
#include "specs/ops/transpose.h"
#include "specs/params.h"

namespace verisub::fusion {
namespace {

using specs::OpKind;

// A node read as a spec operator: its kind and parameters, or nullopt (a leaf for the rules).
struct AsSpec {
  OpKind op;
  specs::Params params;
};

// The element-wise sub-operators and the spec operators of the same meaning, one table each way
// (less and pow have none).
constexpr std::pair<UnaryFn, OpKind> kUnaryOps[] = {
    {UnaryFn::kNeg, OpKind::kNeg},   {UnaryFn::kRecip, OpKind::kRecip},
    {UnaryFn::kExp, OpKind::kExp},   {UnaryFn::kLog, OpKind::kLog},
    {UnaryFn::kSqrt, OpKind::kSqrt}, {UnaryFn::kErf, OpKind::kErf},
    {UnaryFn::kTanh, OpKind::kTanh}, {UnaryFn::kAbs, OpKind::kAbs}};
constexpr std::pair<BinaryFn, OpKind> kBinaryOps[] = {{BinaryFn::kAdd, OpKind::kEwAdd},
                                                      {BinaryFn::kMul, OpKind::kEwMul},
                                                      {BinaryFn::kMax, OpKind::kEwMax},
                                                      {BinaryFn::kMin, OpKind::kEwMin}};

template <class Fn, size_t N>
std::optional<OpKind> SpecOfFn(const std::pair<Fn, OpKind> (&table)[N], Fn f) {
  for (const auto& [fn, op] : table)
    if (fn == f) return op;
  return std::nullopt;
}

template <class Fn, size_t N>
std::optional<Fn> FnOfSpec(const std::pair<Fn, OpKind> (&table)[N], OpKind op) {
  for (const auto& [fn, o] : table)
    if (o == op) return fn;
  return std::nullopt;
}

// A reindex that repeats one axis of extent 1 (broadcast) or permutes the axes (transpose).
std::optional<AsSpec> ReindexOp(const SubGraph& g, const SubNode& n) {
  const std::vector<int64_t>& in = g.dims(n.args[0]);
  const std::vector<int64_t>& out = n.dims;
  if (in.size() != out.size() || n.map.size() != in.size() || in.empty()) return std::nullopt;
  const size_t r = in.size();
  // Broadcast: every axis maps to itself except one, of extent 1, read at index 0.
  if (IsBroadcast(g, n)) {
    int repeated = -1;
    for (size_t k = 0; k < r; ++k) {
      if (in[k] == out[k]) continue;
      if (in[k] != 1 || repeated >= 0) return std::nullopt;
      repeated = static_cast<int>(k);
    }
    if (repeated < 0) return std::nullopt;
    AsSpec s{OpKind::kBroadcast, {}};
    s.params[specs::ops::kBroadcastAxis] = repeated;
    s.params[specs::ops::kBroadcastExtent] = out[repeated];
    return s;
  }
  // Transpose: input axis perm[i] is output axis i.
  std::vector<int> perm(r, -1);
  for (size_t k = 0; k < r; ++k) {
    const AxisMap& m = n.map[k];
    if (m.offset != 0 || m.divisor != 1 || m.modulus != 0) return std::nullopt;
    int at = -1;
    for (size_t j = 0; j < m.coef.size(); ++j) {
      if (m.coef[j] == 0) continue;
      if (m.coef[j] != 1 || at >= 0) return std::nullopt;
      at = static_cast<int>(j);
    }
    if (at < 0 || perm[at] >= 0 || out[at] != in[k]) return std::nullopt;
    perm[at] = static_cast<int>(k);
  }
  bool identity = true;
  for (size_t i = 0; i < r; ++i) identity &= perm[i] == static_cast<int>(i);
  if (identity) return std::nullopt;
  AsSpec s{OpKind::kTranspose, {}};
  s.params[specs::ops::kTransposePerm] = specs::EncodePerm(perm);
  return s;
}

std::optional<AsSpec> SpecOf(const SubGraph& g, int id) {
  const SubNode& n = g.nodes[id];
  switch (n.kind) {
    case SubOpKind::kUnary:
      if (auto op = SpecOfFn(kUnaryOps, n.unary)) return AsSpec{*op, {}};
      return std::nullopt;
    case SubOpKind::kBinary:
      if (auto op = SpecOfFn(kBinaryOps, n.binary)) return AsSpec{*op, {}};
      return std::nullopt;
    case SubOpKind::kReduce: {
      if (n.reduce_axes.size() != 1) return std::nullopt;
      AsSpec s{n.reduce == ReduceFn::kSum ? OpKind::kReduceSum : OpKind::kReduceMax, {}};
      s.params[specs::ops::kReduceAxis] = n.reduce_axes[0];
      return s;
    }
    case SubOpKind::kReindex:
      return ReindexOp(g, n);
    default:
      return std::nullopt;
  }
}

bool Supported(OpKind op) {
  return FnOfSpec(kUnaryOps, op) || FnOfSpec(kBinaryOps, op) || op == OpKind::kReduceSum ||
         op == OpKind::kReduceMax || op == OpKind::kBroadcast || op == OpKind::kTranspose;
}

// Builds pattern node `p` of a rule's target over `g` (its inputs bound to graph nodes), checking
// types as the spec operators' shape rules would; the new node's id, or nullopt where the target
// does not type-check at these dims.
std::optional<int> BuildNode(SubGraph* g, const ruledb::PatternNode& p,
                             const std::vector<int>& in) {
  if (auto f = FnOfSpec(kUnaryOps, p.op)) return g->Unary(*f, in[0]);
  if (auto f = FnOfSpec(kBinaryOps, p.op)) {
    if (g->dims(in[0]) != g->dims(in[1])) return std::nullopt;
    return g->Binary(*f, in[0], in[1]);
  }
  const std::vector<int64_t> from = g->dims(in[0]);
  switch (p.op) {
    case OpKind::kReduceSum:
    case OpKind::kReduceMax: {
      const int64_t axis = p.params[specs::ops::kReduceAxis];
      if (axis < 0 || axis >= static_cast<int64_t>(from.size())) return std::nullopt;
      return g->Reduce(p.op == OpKind::kReduceSum ? ReduceFn::kSum : ReduceFn::kMax, in[0],
                       {static_cast<int>(axis)});
    }
    case OpKind::kBroadcast: {
      const int64_t axis = p.params[specs::ops::kBroadcastAxis];
      const int64_t extent = p.params[specs::ops::kBroadcastExtent];
      if (axis < 0 || axis >= static_cast<int64_t>(from.size()) || from[axis] != 1 || extent < 1)
        return std::nullopt;
      std::vector<int64_t> to = from;
      to[axis] = extent;
      return g->BroadcastTo(in[0], to);
    }
    case OpKind::kTranspose: {
      const int t = g->Transpose(in[0], specs::DecodePerm(p.params[specs::ops::kTransposePerm]));
      if (t < 0) return std::nullopt;
      return t;
    }
    default:
      return std::nullopt;
  }
}

// Use counts: operand references and the output.
std::vector<int> Uses(const SubGraph& g) {
  std::vector<int> uses(g.nodes.size(), 0);
  for (const SubNode& n : g.nodes)
    for (int a : n.args) ++uses[a];
  if (g.output >= 0) ++uses[g.output];
  return uses;
}

// The live nodes of `g` in a topological order (every input node kept, first, in its place among
// the inputs): what a rewrite that appended its target and redirected the uses leaves.
SubGraph Compact(const SubGraph& g) {
  SubGraph out;
  out.input_dims = g.input_dims;
  std::vector<int> id(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == SubOpKind::kInput) {
      id[i] = static_cast<int>(out.nodes.size());
      out.nodes.push_back(g.nodes[i]);
    }
  std::function<int(int)> visit = [&](int v) -> int {
    if (id[v] >= 0) return id[v];
    SubNode n = g.nodes[v];
    for (int& a : n.args) a = visit(a);
    out.nodes.push_back(std::move(n));
    return id[v] = static_cast<int>(out.nodes.size()) - 1;
  };
  out.output = visit(g.output);
  return out;
}

// One match of a rule's source at a root node: pattern inputs and nodes bound to graph nodes.
struct Match {
  std::vector<int> inputs;  // pattern input -> graph node
  std::vector<int> nodes;   // pattern node -> graph node
};

bool MatchValue(const SubGraph& g, const ruledb::PatternGraph& p, ruledb::ValueRef v, int node,
                Match* m) {
  if (v.is_input()) {
    int& bound = m->inputs[v.index];
    if (bound >= 0) return bound == node;
    bound = node;
    return true;
  }
  if (v.index != 0) return false;
  int& bound = m->nodes[v.node];
  if (bound >= 0) return bound == node;
  const std::optional<AsSpec> s = SpecOf(g, node);
  const ruledb::PatternNode& pn = p.nodes[v.node];
  if (!s || s->op != pn.op || s->params != pn.params) return false;
  const SubNode& n = g.nodes[node];
  if (n.args.size() != pn.inputs.size()) return false;
  bound = node;
  for (size_t k = 0; k < pn.inputs.size(); ++k)
    if (!MatchValue(g, p, pn.inputs[k], n.args[k], m)) return false;
  return true;
}

}  // namespace

SubopRules::SubopRules(const std::vector<ruledb::Rule>& rules) {
  for (const ruledb::Rule& r : rules) {
    if (r.proof.status != ruledb::ProofStatus::kProved) continue;
    if (r.src.outputs.size() != 1 || r.dst.outputs.size() != 1) continue;
    if (r.dst.nodes.size() >= r.src.nodes.size() || r.src.outputs[0].is_input()) continue;
    bool ok = true;
    for (const auto* side : {&r.src, &r.dst})
      for (const ruledb::PatternNode& n : side->nodes) ok &= Supported(n.op);
    if (ok) rules_.push_back({r, r.Id()});
  }
}

SubGraph SubopRules::Apply(const SubGraph& input, SubopRewriteStats* stats) const {
  SubGraph g = Compact(input);
  if (stats) stats->nodes_before = static_cast<int>(g.nodes.size());
  // Each rewrite removes at least one node: the loop ends.
  for (bool changed = true; changed;) {
    changed = false;
    const std::vector<int> uses = Uses(g);
    for (int root = 0; root < static_cast<int>(g.nodes.size()) && !changed; ++root) {
      if (!SpecOf(g, root)) continue;
      for (const Compiled& c : rules_) {
        const ruledb::Rule& r = c.rule;
        Match m;
        m.inputs.assign(r.num_inputs, -1);
        m.nodes.assign(r.src.nodes.size(), -1);
        if (!MatchValue(g, r.src, r.src.outputs[0], root, &m)) continue;
        if (std::find(m.inputs.begin(), m.inputs.end(), -1) != m.inputs.end()) continue;
        if (!r.input_ranks.empty()) {
          bool ranks = true;
          for (int k = 0; k < r.num_inputs; ++k)
            ranks &= static_cast<int>(g.dims(m.inputs[k]).size()) == r.input_ranks[k];
          if (!ranks) continue;
        }
        // Freed: the root (its readers are redirected) and the matched nodes no one outside the
        // match reads (two pattern nodes bound to one graph node count once).
        std::vector<int> matched = m.nodes;
        std::sort(matched.begin(), matched.end());
        matched.erase(std::unique(matched.begin(), matched.end()), matched.end());
        int freed = 0;
        for (int v : matched) {
          int inside = 0;
          for (int w : matched)
            for (int a : g.nodes[w].args) inside += a == v;
          if (v == root || uses[v] == inside) ++freed;
        }
        if (static_cast<int>(r.dst.nodes.size()) >= freed) continue;
        // Build the target after the graph's nodes; a type error leaves the graph as it was.
        SubGraph next = g;
        std::vector<int> built(r.dst.nodes.size(), -1);
        bool typed = true;
        for (size_t k = 0; k < r.dst.nodes.size() && typed; ++k) {
          std::vector<int> args;
          for (const ruledb::ValueRef& a : r.dst.nodes[k].inputs)
            args.push_back(a.is_input() ? m.inputs[a.index] : built[a.node]);
          std::optional<int> b = BuildNode(&next, r.dst.nodes[k], args);
          typed = b.has_value();
          if (typed) built[k] = *b;
        }
        if (!typed) continue;
        const ruledb::ValueRef out = r.dst.outputs[0];
        const int replacement = out.is_input() ? m.inputs[out.index] : built[out.node];
        if (next.dims(replacement) != g.dims(root)) continue;
        for (SubNode& n : next.nodes)
          for (int& a : n.args)
            if (a == root) a = replacement;
        if (next.output == root) next.output = replacement;
        g = Compact(next);
        changed = true;
        if (stats) {
          ++stats->rewrites;
          ++stats->by_rule[c.id];
        }
        break;
      }
    }
  }
  if (stats) stats->nodes_after = static_cast<int>(g.nodes.size());
  return g;
}

}  // namespace verisub::fusion
