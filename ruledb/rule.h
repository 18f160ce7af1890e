// A graph substitution: a source pattern, a target pattern over the same inputs, and an output
// mapping (source output i is replaced by target output i); plus its proof record.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ruledb/pattern.h"
#include "ruledb/proof_status.h"

namespace verisub::ruledb {

struct ProofRecord {
  ProofStatus status = ProofStatus::kUnchecked;
  std::vector<std::string> axioms_used;  // names, sorted
  double seconds = 0;
  std::string reason;  // why it is not proved; empty when proved
};

struct Rule {
  int num_inputs = 0;
  PatternGraph src, dst;
  // Empty: the rule holds at every rank where both sides type-check. Otherwise one rank per
  // input: the rule holds, and may be applied, only where every input has its rank (its proof
  // needed axioms declared for those ranks only).
  std::vector<int> input_ranks;
  ProofRecord proof;

  // Canonical text: `src => dst`, inputs named ?a, ?b, ... in order of first appearance in
  // the source (then the target), nodes in the order the text visits them, then the input
  // ranks when there are any (` where ?a:2 ?b:2`, every input in order). Equal rules have
  // equal text; the id is a hash of it.
  std::string ToText() const;
  std::string Id() const;  // 16 hex digits of XXH3 over ToText()
};

// Rule::Id of a rule whose ToText() is `text`.
std::string RuleIdOfText(std::string_view text);

// Renumbers inputs and nodes into the canonical order used by ToText(), so structural equality
// of canonical rules is equality of their text.
Rule Canonicalize(const Rule& r);

// Parses `src => dst [where ?x:R ...]`; the result is canonical. A `where` clause names every
// input once, in any order. Errors give the column and the reason.
StatusOr<Rule> ParseRule(std::string_view text);

// For rules built by rewriting rule text (pruning's generalizations): `text` has no where
// clause, and each input gets the rank `ranks_by_name` gives its name (each needs one; names the
// text does not use are ignored).
StatusOr<Rule> ParseRuleWithRanks(std::string_view text,
                                  const std::map<std::string, int>& ranks_by_name);

// The input ranks as written after a rule's text: "" when empty, else ` where ?a:2 ?b:4`.
std::string InputRanksText(const std::vector<int>& input_ranks);
// Structural checks: topological order, arities, input indices in range, every target input
// also used by the source, output counts equal, no input ranks or one in 0..kMaxRank per input.
Status ValidateRule(const Rule& r);

// Name of pattern input i in canonical text: ?a .. ?z, then ?a1 ...
std::string InputName(int i);

}  // namespace verisub::ruledb
