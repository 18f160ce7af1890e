// A frozen rule set: rules compiled once (match plans, ids), indexed by the operator of their
// root source node, shared read-only by every optimization.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "ruledb/rule.h"
#include "specs/op_spec.h"

namespace verisub::rewriter {

// One step of a match plan: how to find the graph node for pattern node `pnode`.
struct MatchStep {
  enum class Kind {
    kRoot,      // try every graph node with the right operator
    kProducer,  // the producer of input `slot` of the graph node bound to pattern node `from`
    kConsumer,  // a consumer, at input `slot`, of the graph value bound to pattern value `via`
  };
  Kind kind = Kind::kRoot;
  int pnode = 0;
  int from = -1;
  int slot = 0;
  ruledb::ValueRef via;
};

// What the root's input slot `k` must be fed by: any value, or output `output` of a spec node
// with this operator and these parameters.
struct RootSlotTest {
  bool any = true;
  specs::OpKind op = specs::OpKind::kNumOps;
  specs::Params params;
  int output = 0;
};

struct CompiledRule {
  ruledb::Rule rule;
  std::string id;  // ruledb::Rule::Id()
  // The canonical text, made when asked (a report naming the rules applied): kept for every
  // rule it was 7 MB of a load's memory.
  std::string Text() const { return rule.ToText(); }
  specs::OpKind root_op = specs::OpKind::kNumOps;
  specs::Params root_params;
  bool root_commutative = false;  // the root's first two slots may be read in either order
  // A right-to-left reading of a stated rule (RuleSetOptions::reverse), and the index of that
  // rule in the set: -1 for a stated rule, and for a reading of one the matcher cannot use as
  // stated (a disconnected source, an input as a source output).
  bool reversed = false;
  int reversed_from = -1;
  // One test per input slot of the root: a cheap filter run before the matcher.
  std::vector<RootSlotTest> root_slots;
  // Binds every source node; each step after the first reaches a node connected to those
  // already bound, so matching never enumerates unrelated nodes.
  std::vector<MatchStep> plan;
};

// What a root's input slot is fed by, when a slot test requires something: output `output` of
// a spec node with this operator and parameters.
struct ProducerKey {
  specs::OpKind op = specs::OpKind::kNumOps;
  specs::Params params;
  int output = 0;
  bool operator<(const ProducerKey& o) const {
    if (op != o.op) return op < o.op;
    if (!(params == o.params)) return params.v < o.params.v;
    return output < o.output;
  }
};

// The rules of one root operator instance, in rule order, and the same rules by what their
// root's first input slot requires (RootSlotTest): the matcher looks up the producers of a
// node's first inputs instead of testing every rule of its operator.
struct RootRules {
  std::vector<int> all;
  std::vector<int> first_any;                        // first slot unconstrained, or no slots
  std::map<ProducerKey, std::vector<int>> first_is;  // first slot fed by this producer
  // The same for roots whose first two slots may be read in either order: the producer of
  // either of the node's first two inputs.
  std::map<ProducerKey, std::vector<int>> first_is_either;
};

struct RuleSetOptions {
  // Only rules whose proof record says proved are used. Rules read from text carry no proof
  // record, so tests and hand-written fixtures turn this off explicitly.
  bool proved_only = true;
  // Equalities hold both ways: a rule whose target is a pattern too (it uses every input of the
  // source, and no output is a bare input) is also compiled right to left, after every rule as
  // stated, unless it equals a rule already in the set up to input renaming, commutative operand
  // order and output order. A rule unusable as stated (disconnected source) may be usable so.
  bool reverse = true;
};

struct RuleSetStats {
  int loaded = 0;
  int compiled = 0;
  int skipped_unproved = 0;
  int skipped_duplicate = 0;
  // Source patterns that cannot be matched by following edges: disconnected sources, sources
  // that output a pattern input, or sources with no nodes.
  int skipped_unmatchable = 0;
  // Right-to-left readings compiled (part of `compiled`; readings of rules counted in
  // skipped_unmatchable too), and those skipped because the set already had an equal rule.
  // Rules whose target is no pattern, and readings whose source cannot be matched by following
  // edges, are in neither count.
  int reversed = 0;
  int skipped_reverse_duplicate = 0;
};

// `r` read right to left, canonical, when its target is a pattern (uses every input of the
// source, no output a bare input); nullopt otherwise. Proof record and input ranks carry over.
std::optional<ruledb::Rule> ReverseRule(const ruledb::Rule& r);

class RuleSet {
 public:
  // Compiles `rules`; rules that cannot be used are skipped and counted in stats().
  static StatusOr<std::shared_ptr<const RuleSet>> Compile(std::vector<ruledb::Rule> rules,
                                                          const RuleSetOptions& options = {});

  int size() const { return static_cast<int>(rules_.size()); }
  const CompiledRule& rule(int i) const { return rules_[i]; }
  // Indices of the rules whose root source node has operator `op`, in rule order.
  const std::vector<int>& RulesWithRoot(specs::OpKind op) const {
    return by_root_[static_cast<int>(op)];
  }
  // Indices of the rules whose root source node has this operator and these parameters, in
  // rule order (empty when none).
  const std::vector<int>& RulesWithRoot(specs::OpKind op, const specs::Params& params) const;
  // The same rules indexed by their first slot's test; null when there are none.
  const RootRules* RootRulesOf(specs::OpKind op, const specs::Params& params) const;
  const RuleSetStats& stats() const { return stats_; }

 private:
  RuleSet() = default;
  std::vector<CompiledRule> rules_;
  std::array<std::vector<int>, specs::kNumOpKinds + 1> by_root_;
  std::map<std::pair<specs::OpKind, specs::Params>, RootRules> by_root_instance_;
  RuleSetStats stats_;
};

}  // namespace verisub::rewriter
