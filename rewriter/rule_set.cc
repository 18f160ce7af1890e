// Rule compilation: match plans that walk from the root along producer and consumer edges.
#include "rewriter/rule_set.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "ruledb/rule_symmetry.h"
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

// Fills the match plan and root filters of `c` from its source; false when the source cannot
// be matched by following edges.
bool CompileSource(const ruledb::Rule& r, CompiledRule* c) {
  const ruledb::PatternGraph& src = r.src;
  if (src.nodes.empty() || src.outputs.empty()) return false;
  for (const ruledb::ValueRef& o : src.outputs)
    if (o.is_input()) return false;
  int root = src.outputs[0].node;
  if (!BuildPlan(src, root, &c->plan)) return false;
  const ruledb::PatternNode& rn = src.nodes[root];
  c->root_op = rn.op;
  c->root_params = rn.params;
  c->root_commutative = specs::GetOp(rn.op).commutative;
  for (const ruledb::ValueRef& in : rn.inputs) {
    RootSlotTest t;
    if (!in.is_input()) {
      t.any = false;
      t.op = src.nodes[in.node].op;
      t.params = src.nodes[in.node].params;
      t.output = in.index;
    }
    c->root_slots.push_back(t);
  }
  return true;
}

}  // namespace

std::optional<ruledb::Rule> ReverseRule(const ruledb::Rule& r) {
  if (r.dst.nodes.empty()) return std::nullopt;
  for (const ruledb::ValueRef& o : r.dst.outputs)
    if (o.is_input()) return std::nullopt;
  std::vector<char> used(r.num_inputs, 0);
  for (const ruledb::PatternNode& n : r.dst.nodes)
    for (const ruledb::ValueRef& v : n.inputs)
      if (v.is_input() && v.index >= 0 && v.index < r.num_inputs) used[v.index] = 1;
  for (char u : used)
    if (!u) return std::nullopt;
  ruledb::Rule rev = r;
  std::swap(rev.src, rev.dst);
  return ruledb::Canonicalize(rev);
}

StatusOr<std::shared_ptr<const RuleSet>> RuleSet::Compile(std::vector<ruledb::Rule> rules,
                                                          const RuleSetOptions& options) {
  std::shared_ptr<RuleSet> set(new RuleSet());
  // The texts of the rules in the set (stated and right-to-left readings), and of readings the
  // matcher cannot use, by their ids (a hash of the text): a rule whose text is met again adds
  // nothing. Only ids are kept (22,000 texts were 8 MB beside the model's weights); where two
  // meet, the texts are compared (a collision of two different texts keeps both).
  // Keyed by the id's 64 bits, not its 16 hex digits (a string each, 1.4 MB more at the peak).
  std::unordered_multimap<uint64_t, int> seen;  // id -> index in rules_, or -1 - k
  std::vector<std::string> unusable;            // the k-th reading the matcher cannot use
  seen.reserve(2 * rules.size());
  auto key = [](const std::string& id) { return std::strtoull(id.c_str(), nullptr, 16); };
  auto already = [&](const std::string& text, const std::string& id) {
    auto [begin, end] = seen.equal_range(key(id));
    for (auto it = begin; it != end; ++it)
      if ((it->second >= 0 ? set->rules_[it->second].Text() : unusable[-1 - it->second]) == text)
        return true;
    return false;
  };
  std::vector<ruledb::Rule> unmatchable;
  auto add = [&](CompiledRule c) {
    const int index = static_cast<int>(set->rules_.size());
    set->by_root_[static_cast<int>(c.root_op)].push_back(index);
    RootRules& root = set->by_root_instance_[{c.root_op, c.root_params}];
    root.all.push_back(index);
    if (c.root_slots.empty() || c.root_slots[0].any) {
      root.first_any.push_back(index);
    } else {
      const RootSlotTest& t = c.root_slots[0];
      const ProducerKey key{t.op, t.params, t.output};
      (c.root_commutative && c.root_slots.size() >= 2 ? root.first_is_either : root.first_is)[key]
          .push_back(index);
    }
    set->rules_.push_back(std::move(c));
    ++set->stats_.compiled;
  };
  for (ruledb::Rule& r : rules) {
    ++set->stats_.loaded;
    if (options.proved_only && r.proof.status != ruledb::ProofStatus::kProved) {
      ++set->stats_.skipped_unproved;
      continue;
    }
    Status valid = ruledb::ValidateRule(r);
    if (!valid.ok()) return valid.WithContext("rule " + r.ToText());
    CompiledRule c;
    const std::string text = r.ToText();
    c.id = ruledb::RuleIdOfText(text);
    if (already(text, c.id)) {
      ++set->stats_.skipped_duplicate;
      continue;
    }
    if (!CompileSource(r, &c)) {
      ++set->stats_.skipped_unmatchable;
      seen.emplace(key(c.id), -1 - static_cast<int>(unusable.size()));
      unusable.push_back(text);
      if (options.reverse) unmatchable.push_back(std::move(r));  // its reading may match
      continue;
    }
    seen.emplace(key(c.id), static_cast<int>(set->rules_.size()));
    c.rule = std::move(r);
    add(std::move(c));
  }
  if (!options.reverse) return std::shared_ptr<const RuleSet>(std::move(set));
  // Right-to-left readings after every stated rule, in the stated rules' order (those the
  // matcher cannot use as stated, e.g. with a disconnected source, last), so the stated rules
  // keep their indices and the set does not depend on anything but the input order. A reading
  // equal to a rule already in the set (up to renaming, commutative operand order and output
  // order) adds nothing the matcher would not find.
  //
  // Symmetry keys cost a canonical text per variant: they are computed only where two rules'
  // SymmetryHashes meet (rules with equal keys have equal hashes), the others wait in
  // `pending` (indices into rules_) until a later reading's hash meets theirs.
  std::unordered_set<std::string> keys;
  std::unordered_map<uint64_t, std::vector<int>> pending;
  auto settle = [&](uint64_t hash) {  // true when a rule with this hash was met before
    auto it = pending.find(hash);
    if (it == pending.end()) return false;
    for (int index : it->second) keys.insert(ruledb::SymmetryKey(set->rules_[index].rule));
    it->second.clear();
    return true;
  };
  const int stated = static_cast<int>(set->rules_.size());
  for (int i = 0; i < stated; ++i) pending[ruledb::SymmetryHash(set->rules_[i].rule)].push_back(i);
  for (int i = 0; i < stated + static_cast<int>(unmatchable.size()); ++i) {
    std::optional<ruledb::Rule> rev =
        ReverseRule(i < stated ? set->rules_[i].rule : unmatchable[i - stated]);
    if (!rev) continue;
    CompiledRule c;
    const std::string text = rev->ToText();
    c.id = ruledb::RuleIdOfText(text);
    if (already(text, c.id)) {
      ++set->stats_.skipped_reverse_duplicate;
      continue;
    }
    const uint64_t hash = ruledb::SymmetryHash(*rev);
    const bool met = settle(hash);  // then its key goes into `keys` now, else it waits
    if (met && !keys.insert(ruledb::SymmetryKey(*rev)).second) {
      ++set->stats_.skipped_reverse_duplicate;
      continue;
    }
    if (!CompileSource(*rev, &c)) {  // not kept, but later readings equal to it add nothing
      seen.emplace(key(c.id), -1 - static_cast<int>(unusable.size()));
      unusable.push_back(text);
      if (!met) {
        keys.insert(ruledb::SymmetryKey(*rev));
        pending[hash];
      }
      continue;
    }
    seen.emplace(key(c.id), static_cast<int>(set->rules_.size()));
    c.rule = std::move(*rev);
    c.reversed = true;
    c.reversed_from = i < stated ? i : -1;
    if (!met) pending[hash].push_back(static_cast<int>(set->rules_.size()));
    add(std::move(c));
    ++set->stats_.reversed;
  }
  return std::shared_ptr<const RuleSet>(std::move(set));
}

const std::vector<int>& RuleSet::RulesWithRoot(specs::OpKind op,
                                               const specs::Params& params) const {
  static const std::vector<int> kNone;
  const RootRules* root = RootRulesOf(op, params);
  return root ? root->all : kNone;
}

const RootRules* RuleSet::RootRulesOf(specs::OpKind op, const specs::Params& params) const {
  auto it = by_root_instance_.find({op, params});
  return it == by_root_instance_.end() ? nullptr : &it->second;
}

}  // namespace verisub::rewriter
