// Rule compilation: match plans that walk from the root along producer and consumer edges.
#include "rewriter/rule_set.h"

#include <algorithm>
#include <set>

#include "specs/registry.h"

namespace verisub::rewriter {
namespace {

// Plans the binding order from the root: producers first (a node has one producer per input,
// so these steps never branch), consumers of bound values only when needed. Returns false when
// some source node is not connected to the root.
bool BuildPlan(const ruledb::PatternGraph& src, int root, std::vector<MatchStep>* plan) {
  const int n = static_cast<int>(src.nodes.size());
  std::vector<char> bound(n, 0);
  std::vector<char> input_bound;
  auto mark_inputs = [&](int p) {
    for (const ruledb::ValueRef& in : src.nodes[p].inputs) {
      if (!in.is_input()) continue;
      if (static_cast<int>(input_bound.size()) <= in.index) input_bound.resize(in.index + 1, 0);
      input_bound[in.index] = 1;
    }
  };
  auto value_bound = [&](const ruledb::ValueRef& v) {
    if (v.is_input()) return v.index < static_cast<int>(input_bound.size()) && input_bound[v.index];
    return bound[v.node] != 0;
  };
  plan->push_back({MatchStep::Kind::kRoot, root, -1, 0, {}});
  bound[root] = 1;
  mark_inputs(root);
  for (int count = 1; count < n; ++count) {
    bool found = false;
    for (const MatchStep& s : *plan) {
      const auto& inputs = src.nodes[s.pnode].inputs;
      for (int k = 0; k < static_cast<int>(inputs.size()) && !found; ++k) {
        if (inputs[k].is_input() || bound[inputs[k].node]) continue;
        plan->push_back({MatchStep::Kind::kProducer, inputs[k].node, s.pnode, k, {}});
        found = true;
      }
      if (found) break;
    }
    for (int p = 0; p < n && !found; ++p) {
      if (bound[p]) continue;
      const auto& inputs = src.nodes[p].inputs;
      for (int k = 0; k < static_cast<int>(inputs.size()) && !found; ++k) {
        if (!value_bound(inputs[k])) continue;
        plan->push_back({MatchStep::Kind::kConsumer, p, -1, k, inputs[k]});
        found = true;
      }
    }
    if (!found) return false;
    bound[plan->back().pnode] = 1;
    mark_inputs(plan->back().pnode);
  }
  return true;
}

}  // namespace

StatusOr<std::shared_ptr<const RuleSet>> RuleSet::Compile(std::vector<ruledb::Rule> rules,
                                                          const RuleSetOptions& options) {
  std::shared_ptr<RuleSet> set(new RuleSet());
  std::set<std::string> seen;
  for (ruledb::Rule& r : rules) {
    ++set->stats_.loaded;
    if (options.proved_only && r.proof.status != ruledb::ProofStatus::kProved) {
      ++set->stats_.skipped_unproved;
      continue;
    }
    Status valid = ruledb::ValidateRule(r);
    if (!valid.ok()) return valid.WithContext("rule " + r.ToText());
    CompiledRule c;
    c.text = r.ToText();
    c.id = r.Id();
    if (!seen.insert(c.text).second) {
      ++set->stats_.skipped_duplicate;
      continue;
    }
    const ruledb::PatternGraph& src = r.src;
    bool usable = !src.nodes.empty() && !src.outputs.empty();
    for (const ruledb::ValueRef& o : src.outputs) usable &= !o.is_input();
    if (usable) {
      int root = src.outputs[0].node;
      usable = BuildPlan(src, root, &c.plan);
      const ruledb::PatternNode& rn = src.nodes[root];
      c.root_op = rn.op;
      c.root_params = rn.params;
      c.root_commutative = specs::GetOp(rn.op).commutative;
      for (const ruledb::ValueRef& in : rn.inputs) {
        RootSlotTest t;
        if (!in.is_input()) {
          t.any = false;
          t.op = src.nodes[in.node].op;
          t.params = src.nodes[in.node].params;
          t.output = in.index;
        }
        c.root_slots.push_back(t);
      }
    }
    if (!usable) {
      ++set->stats_.skipped_unmatchable;
      continue;
    }
    c.rule = std::move(r);
    set->by_root_[static_cast<int>(c.root_op)].push_back(static_cast<int>(set->rules_.size()));
    set->by_root_instance_[{c.root_op, c.root_params}].push_back(
        static_cast<int>(set->rules_.size()));
    set->rules_.push_back(std::move(c));
    ++set->stats_.compiled;
  }
  return std::shared_ptr<const RuleSet>(std::move(set));
}

const std::vector<int>& RuleSet::RulesWithRoot(specs::OpKind op,
                                               const specs::Params& params) const {
  static const std::vector<int> kNone;
  auto it = by_root_instance_.find({op, params});
  return it == by_root_instance_.end() ? kNone : it->second;
}

}  // namespace verisub::rewriter
