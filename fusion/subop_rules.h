// Rules at the sub-operator level applied to a lowered kernel (issue 26, item 3; DESIGN.md §6):
// the proved rules of data/rules/subop.pb (data/gen/subop.cfg) rewrite a SubGraph greedily, each
// application making the graph strictly smaller, until none applies (the reduced-operator-set
// patent's greedy use of cost-decreasing rules). Cost = sub-operators computed: every one runs
// once per element of its output, and a fused kernel's traffic does not change with its inside.
//
// A SubGraph node is read as the spec operator of the same meaning: neg, recip, exp, log, sqrt,
// erf, tanh, abs; add, mul, max, min as ewadd, ewmul, ewmax, ewmin; a reduction over one axis as
// reduce_sum or reduce_max[axis]; a reindex that repeats one axis of extent 1 as
// broadcast[axis, extent], one that permutes axes as transpose[perm]. Everything else (constants,
// inputs, less, pow, select, other reindexes, reductions over several axes) is a leaf a rule's
// input may bind to, never matched inside. A rule applies only where its parameters equal the
// node's (a rule proved for broadcasts of extent 4 rewrites broadcasts of extent 4), where the
// ranks its proof needs hold, and where its target type-checks at the bound operands' dims.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fusion/subop.h"
#include "ruledb/rule.h"

namespace verisub::fusion {

struct SubopRewriteStats {
  int rewrites = 0;
  int nodes_before = 0;
  int nodes_after = 0;
  std::map<std::string, int> by_rule;  // rule id -> applications
};

class SubopRules {
 public:
  SubopRules() = default;
  // Keeps the rules that can make a sub-operator graph smaller: proved, one output, every operator
  // one of those above, fewer target than source operators. `rules` in the database's order,
  // which is the order they are tried in.
  explicit SubopRules(const std::vector<ruledb::Rule>& rules);

  int size() const { return static_cast<int>(rules_.size()); }
  // `g` rewritten to a fixpoint: at each step the first node (in graph order) where some rule
  // (in order) matches and removes more sub-operators than its target adds; dead nodes dropped,
  // kernel inputs kept in place. Deterministic.
  SubGraph Apply(const SubGraph& g, SubopRewriteStats* stats = nullptr) const;

 private:
  struct Compiled {
    ruledb::Rule rule;
    std::string id;
  };
  std::vector<Compiled> rules_;
};

}  // namespace verisub::fusion
