// Pruning of proved rules (TASO section 4): every step removes rules that a more general rule
// kept in the set already covers, so whatever graph the full set reaches the pruned set reaches.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ruledb/rule.h"

namespace verisub::ruledb {

// Says whether a rule is valid (e.g. the Z3 verifier). Asked only about generalizations that
// are not among the input rules; a rule it accepts is added to the result as proved.
using ValidityOracle = std::function<bool(const Rule&)>;

struct PruneOptions {
  // Step "unproved": drop rules whose proof status is not kProved.
  bool proved_only = true;
  // Rules equal up to input renaming are always merged. With this set, rules that differ only
  // by the operand order of commutative operators or by the order of their outputs are merged
  // too (sound because commutativity is part of the op's meaning; the rewriter must then match
  // commutative operands in both orders, or keep the commutativity rule, which this keeps).
  bool merge_symmetric_variants = true;
  bool common_operator = true;  // step "common_operator" (TASO figure 4b)
  bool common_outputs = true;   // step "common_outputs" (TASO figure 4c)
  bool subsumption = true;      // step "subsumed"
  int max_symmetry_variants = 4096;
};

struct PruneStep {
  std::string name;
  int64_t before = 0;
  int64_t removed = 0;
  int64_t added = 0;  // generalizations the oracle proved that were not in the set
  int64_t after = 0;
  double seconds = 0;
};

struct PruneReport {
  int64_t input = 0;
  std::vector<PruneStep> steps;
  int64_t output = 0;

  // One line per step: `common_operator: 120 -> 97 (removed 23, added 0) 0.004 s`.
  std::string ToString() const;
  // For the database header: input, after_<step> for each step, output.
  std::vector<std::pair<std::string, int64_t>> Counts() const;
};

struct PruneResult {
  std::vector<Rule> rules;  // canonical, sorted as SortRules
  PruneReport report;
};

// Runs the enabled steps in order: unproved, trivial, input_renaming, common_operator,
// common_outputs, subsumed. A generalization counts as valid when it is among the input rules
// (up to renaming, and symmetry if enabled) or `is_valid` (may be empty) accepts it. Errors
// only on an invalid input rule (ValidateRule), naming its index. Deterministic: the result
// does not depend on the input order.
StatusOr<PruneResult> PruneRules(std::vector<Rule> rules, const PruneOptions& options = {},
                                 const ValidityOracle& is_valid = nullptr);

// The steps, for callers that want to run them separately. Each returns the number of rules it
// removed; `rules` must be canonical and sorted (SortRules) and stays so.
int64_t DropUnproved(std::vector<Rule>* rules);
int64_t DropTrivial(std::vector<Rule>* rules);  // source and target are the same
int64_t PruneInputRenaming(std::vector<Rule>* rules, const PruneOptions& options);
int64_t PruneSubsumed(std::vector<Rule>* rules, const PruneOptions& options);

// The set of rules known to be valid, by key; asks the oracle about others and remembers the
// rules it proves.
class KnownValidRules {
 public:
  KnownValidRules(const std::vector<Rule>& proved, const PruneOptions& options,
                  const ValidityOracle& is_valid);
  // True if `r` is known valid or the oracle proves it; a newly proved rule is remembered and
  // appended to `added`.
  bool IsValid(const Rule& r, std::vector<Rule>* added);
  std::string Key(const Rule& r) const;

 private:
  const PruneOptions& options_;
  const ValidityOracle& is_valid_;
  std::unordered_set<std::string> keys_;
  std::unordered_set<std::string> rejected_;  // keys the oracle refused
};

// Common-subgraph steps: drop a rule when one of its generalizations is valid; rules the oracle
// proved are added to `rules` (and counted in `added`).
int64_t PruneCommonOperator(std::vector<Rule>* rules, KnownValidRules* known, int64_t* added);
int64_t PruneCommonOutputs(std::vector<Rule>* rules, KnownValidRules* known, int64_t* added);

}  // namespace verisub::ruledb
