// Backtracking matcher that follows a compiled rule's plan.
#include "rewriter/matcher.h"

#include <algorithm>
#include <map>
#include <optional>

#include "rewriter/graph_cost.h"
#include "specs/registry.h"

namespace verisub::rewriter {

using runtime::Graph;
using runtime::kNoValue;
using runtime::Node;

GraphIndex::GraphIndex(const Graph& g)
    : producer(g.num_values(), -1),
      use_count(g.num_values(), 0),
      is_output(g.num_values(), 0),
      consumers(g.num_values()),
      weight_only(WeightOnlyValues(g)) {
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    for (int o : n.outputs)
      if (o != kNoValue) producer[o] = i;
    for (int k = 0; k < static_cast<int>(n.inputs.size()); ++k) {
      int v = n.inputs[k];
      if (v == kNoValue) continue;
      ++use_count[v];
      consumers[v].push_back({i, k});
    }
    if (n.op) by_op[static_cast<int>(*n.op)].push_back(i);
  }
  for (int v : g.outputs()) {
    ++use_count[v];
    is_output[v] = 1;
  }
}

namespace {

class Matcher {
 public:
  // `root_node` >= 0 binds the plan's root to that node only; -1 tries every node.
  Matcher(const Graph& g, const GraphIndex& index, const CompiledRule& rule, int rule_index,
          int root_node, std::vector<Match>* out)
      : g_(g), index_(index), rule_(rule), src_(rule.rule.src), root_node_(root_node), out_(out) {
    cur_.rule = rule_index;
    cur_.nodes.assign(src_.nodes.size(), -1);
    cur_.input_vals.assign(rule.rule.num_inputs, kNoValue);
    swapped_.assign(src_.nodes.size(), 0);
  }

  void Run() { Step(0); }

 private:
  // Graph input slot of pattern node p's input slot k: commutative operators may be bound with
  // their two operands swapped.
  int GraphSlot(int p, int k) const { return swapped_[p] && k < 2 ? 1 - k : k; }

  // The graph value bound to pattern value `v`, or kNoValue while unbound.
  int Bound(const ruledb::ValueRef& v) const {
    if (v.is_input()) return cur_.input_vals[v.index];
    int gn = cur_.nodes[v.node];
    if (gn < 0) return kNoValue;
    const auto& outs = g_.node(gn).outputs;
    return v.index < static_cast<int>(outs.size()) ? outs[v.index] : kNoValue;
  }

  void Step(size_t s) {
    if (s == rule_.plan.size()) {
      if (Complete()) out_->push_back(cur_);
      return;
    }
    const MatchStep& step = rule_.plan[s];
    switch (step.kind) {
      case MatchStep::Kind::kRoot:
        if (root_node_ >= 0) {
          TryBind(s, step.pnode, root_node_);
          break;
        }
        for (int gn : index_.by_op[static_cast<int>(src_.nodes[step.pnode].op)])
          TryBind(s, step.pnode, gn);
        break;
      case MatchStep::Kind::kProducer: {
        int v = g_.node(cur_.nodes[step.from]).inputs[GraphSlot(step.from, step.slot)];
        if (v != kNoValue && index_.producer[v] >= 0) TryBind(s, step.pnode, index_.producer[v]);
        break;
      }
      case MatchStep::Kind::kConsumer: {
        int v = Bound(step.via);
        if (v == kNoValue) break;
        // A commutative consumer may read the value through its other operand (TryBind tries
        // both orders; the slot check there rejects the wrong one).
        bool comm = specs::GetOp(src_.nodes[step.pnode].op).commutative && step.slot < 2;
        int last = -1;
        for (const auto& [gn, slot] : index_.consumers[v]) {
          if (gn == last) continue;  // reads v twice: one binding attempt covers both slots
          if (slot == step.slot || (comm && slot == 1 - step.slot)) {
            last = gn;
            TryBind(s, step.pnode, gn);
          }
        }
        break;
      }
    }
  }

  // Binds pattern node p to graph node gn (both operand orders for a commutative operator whose
  // operands differ), then continues with the next step.
  void TryBind(size_t s, int p, int gn) {
    const Node& n = g_.node(gn);
    const ruledb::PatternNode& pn = src_.nodes[p];
    if (!n.op || *n.op != pn.op || n.params != pn.params) return;
    if (std::find(cur_.nodes.begin(), cur_.nodes.end(), gn) != cur_.nodes.end()) return;
    TryBindOrder(s, p, gn, false);
    if (specs::GetOp(pn.op).commutative && n.inputs.size() >= 2 && n.inputs[0] != n.inputs[1])
      TryBindOrder(s, p, gn, true);
  }

  // Binds if every edge to already bound pattern values agrees.
  void TryBindOrder(size_t s, int p, int gn, bool swap) {
    const Node& n = g_.node(gn);
    const ruledb::PatternNode& pn = src_.nodes[p];
    // Pattern inputs this binding binds (at most the node's arity): unbound again afterwards,
    // instead of copying every binding on each attempt (the search's hottest allocation).
    constexpr size_t kMaxArity = 16;
    VERISUB_CHECK(pn.inputs.size() <= kMaxArity);
    int newly_bound[kMaxArity];
    int num_newly_bound = 0;
    cur_.nodes[p] = gn;
    swapped_[p] = swap;
    bool ok = n.inputs.size() == pn.inputs.size();
    for (size_t k = 0; ok && k < pn.inputs.size(); ++k) {
      const ruledb::ValueRef& in = pn.inputs[k];
      int v = n.inputs[GraphSlot(p, static_cast<int>(k))];
      if (in.is_input()) {
        int& b = cur_.input_vals[in.index];
        if (b == kNoValue) {
          b = v;
          newly_bound[num_newly_bound++] = in.index;
          ok = RankFits(in.index, v);
        } else {
          ok = b == v;
        }
      } else if (cur_.nodes[in.node] >= 0) {
        ok = Bound(in) == v;
      }
    }
    // Edges from p to pattern consumers bound earlier.
    for (size_t q = 0; ok && q < src_.nodes.size(); ++q) {
      if (cur_.nodes[q] < 0 || static_cast<int>(q) == p) continue;
      const auto& qin = src_.nodes[q].inputs;
      const Node& qn = g_.node(cur_.nodes[q]);
      for (size_t k = 0; ok && k < qin.size(); ++k)
        if (!qin[k].is_input() && qin[k].node == p)
          ok = Bound(qin[k]) == qn.inputs[GraphSlot(static_cast<int>(q), static_cast<int>(k))];
    }
    if (ok) Step(s + 1);
    cur_.nodes[p] = -1;
    swapped_[p] = 0;
    for (int k = 0; k < num_newly_bound; ++k) cur_.input_vals[newly_bound[k]] = kNoValue;
  }

  // A rule with input ranks holds only there: the value bound to input i must have rank
  // input_ranks[i] (known from its type).
  bool RankFits(int input, int v) const {
    const std::vector<int>& ranks = rule_.rule.input_ranks;
    if (ranks.empty()) return true;
    if (v == kNoValue) return false;
    const runtime::Value& value = g_.value(v);
    int rank = value.spec_type    ? value.spec_type->shape.rank
               : value.rank_known ? static_cast<int>(value.dims.size())
                                  : -1;
    return rank == ranks[input];
  }

  // Whole-match conditions: inputs bound outside the match, and every value read outside the
  // match is a source output.
  bool Complete() const {
    for (int v : cur_.input_vals) {
      if (v == kNoValue) return false;
      int p = index_.producer[v];
      if (p >= 0 && std::find(cur_.nodes.begin(), cur_.nodes.end(), p) != cur_.nodes.end())
        return false;
    }
    for (size_t p = 0; p < src_.nodes.size(); ++p) {
      const Node& n = g_.node(cur_.nodes[p]);
      for (int k = 0; k < static_cast<int>(n.outputs.size()); ++k) {
        int v = n.outputs[k];
        int inside = 0;
        for (int gn : cur_.nodes) {
          const auto& ins = g_.node(gn).inputs;
          inside += static_cast<int>(std::count(ins.begin(), ins.end(), v));
        }
        if (index_.use_count[v] == inside) continue;
        ruledb::ValueRef ref{static_cast<int>(p), k};
        if (std::find(src_.outputs.begin(), src_.outputs.end(), ref) == src_.outputs.end())
          return false;
      }
    }
    return true;
  }

  const Graph& g_;
  const GraphIndex& index_;
  const CompiledRule& rule_;
  const ruledb::PatternGraph& src_;
  const int root_node_;
  std::vector<Match>* out_;
  Match cur_;
  std::vector<char> swapped_;  // pattern node -> bound with its two operands swapped
};

}  // namespace

std::vector<Match> FindMatches(const Graph& g, const GraphIndex& index, const RuleSet& rules,
                               int rule_index) {
  std::vector<Match> out;
  Matcher(g, index, rules.rule(rule_index), rule_index, -1, &out).Run();
  return out;
}

namespace {

// The producer test of one root slot against the value the graph node reads there.
bool SlotPasses(const Graph& g, const GraphIndex& index, const RootSlotTest& t, int v) {
  if (t.any) return true;
  if (v == kNoValue) return false;
  int p = index.producer[v];
  if (p < 0) return false;
  const Node& n = g.node(p);
  return n.op && *n.op == t.op && n.params == t.params &&
         t.output < static_cast<int>(n.outputs.size()) && n.outputs[t.output] == v;
}

// Cheap necessary condition for a match rooted at `n`: the producers feeding the root.
bool RootPasses(const Graph& g, const GraphIndex& index, const CompiledRule& rule, const Node& n) {
  const auto& slots = rule.root_slots;
  if (n.inputs.size() != slots.size()) return false;
  auto in_order = [&](bool swap) {
    for (size_t k = 0; k < slots.size(); ++k) {
      size_t slot = swap && k < 2 ? 1 - k : k;
      if (!SlotPasses(g, index, slots[k], n.inputs[slot])) return false;
    }
    return true;
  };
  return in_order(false) || (rule.root_commutative && slots.size() >= 2 && in_order(true));
}


// What feeds value `v`, as a root slot test names it; nullopt for a graph input, a weight or an
// opaque node (only unconstrained slots accept those).
std::optional<ProducerKey> ProducerOf(const Graph& g, const GraphIndex& index, int v) {
  if (v == kNoValue) return std::nullopt;
  const int p = index.producer[v];
  if (p < 0 || !g.node(p).op) return std::nullopt;
  const Node& n = g.node(p);
  const auto out = std::find(n.outputs.begin(), n.outputs.end(), v);
  return ProducerKey{*n.op, n.params, static_cast<int>(out - n.outputs.begin())};
}

}  // namespace

void FindMatchesRootedAt(const Graph& g, const GraphIndex& index, const RuleSet& rules, int node,
                         std::vector<Match>* out) {
  const Node& n = g.node(node);
  if (!n.op) return;
  const RootRules* root = rules.RootRulesOf(*n.op, n.params);
  if (!root) return;
  // The rules whose first slot can pass: unconstrained ones, those asking for the producer of
  // the first input, and (commutative roots) of the second; merged back into rule order, so the
  // matches come out as if every rule of the root had been tried in turn.
  const std::vector<int>* lists[4] = {&root->first_any, nullptr, nullptr, nullptr};
  auto look_up = [](const std::map<ProducerKey, std::vector<int>>& m,
                    const std::optional<ProducerKey>& key) -> const std::vector<int>* {
    if (!key || m.empty()) return nullptr;
    auto it = m.find(*key);
    return it == m.end() ? nullptr : &it->second;
  };
  if (!n.inputs.empty()) {
    const std::optional<ProducerKey> first = ProducerOf(g, index, n.inputs[0]);
    lists[1] = look_up(root->first_is, first);
    lists[2] = look_up(root->first_is_either, first);
    if (n.inputs.size() >= 2)
      lists[3] = look_up(root->first_is_either, ProducerOf(g, index, n.inputs[1]));
  }
  size_t at[4] = {0, 0, 0, 0};
  for (;;) {
    int next = -1;
    for (int l = 0; l < 4; ++l)
      if (lists[l] && at[l] < lists[l]->size() && (next < 0 || (*lists[l])[at[l]] < next))
        next = (*lists[l])[at[l]];
    if (next < 0) break;
    for (int l = 0; l < 4; ++l)  // a rule in two lists (both inputs fed alike) is tried once
      if (lists[l] && at[l] < lists[l]->size() && (*lists[l])[at[l]] == next) ++at[l];
    const CompiledRule& rule = rules.rule(next);
    if (!RootPasses(g, index, rule, n)) continue;
    Matcher(g, index, rule, next, node, out).Run();
  }
}

std::vector<Match> FindAllMatches(const Graph& g, const GraphIndex& index, const RuleSet& rules) {
  std::vector<Match> out;
  for (int r = 0; r < rules.size(); ++r) {
    std::vector<Match> m = FindMatches(g, index, rules, r);
    out.insert(out.end(), m.begin(), m.end());
  }
  return out;
}

}  // namespace verisub::rewriter
