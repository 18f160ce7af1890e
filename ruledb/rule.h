// A graph substitution: a source pattern, a target pattern over the same inputs, and an output
// mapping (source output i is replaced by target output i); plus its proof record.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ruledb/pattern.h"
#include "specs/status.h"

namespace verisub::ruledb {

enum class ProofStatus {
  kUnchecked,  // not sent to the verifier
  kProved,     // the axioms entail equality of every mapped output
  kNotProved,  // the solver found the negation satisfiable (a countermodel of the axioms)
  kUnknown,    // the solver answered unknown
  kTimeout,    // the query ran out of time
  kError,      // the query could not be built
};
const char* ProofStatusName(ProofStatus s);

struct ProofRecord {
  ProofStatus status = ProofStatus::kUnchecked;
  std::vector<std::string> axioms_used;  // names, sorted
  double seconds = 0;
  std::string reason;  // why it is not proved; empty when proved
};

struct Rule {
  int num_inputs = 0;
  PatternGraph src, dst;
  ProofRecord proof;

  // Canonical text: `src => dst`, inputs named ?a, ?b, ... in order of first appearance in
  // the source (then the target), nodes in the order the text visits them. Equal rules have
  // equal text; the id is a hash of it.
  std::string ToText() const;
  std::string Id() const;  // 16 hex digits of XXH3 over ToText()
};

// Renumbers inputs and nodes into the canonical order used by ToText(), so structural equality
// of canonical rules is equality of their text.
Rule Canonicalize(const Rule& r);

// Parses `src => dst`; the result is canonical. Errors give the column and the reason.
StatusOr<Rule> ParseRule(std::string_view text);

// Structural checks: topological order, arities, input indices in range, every target input
// also used by the source, output counts equal.
Status ValidateRule(const Rule& r);

// Name of pattern input i in canonical text: ?a .. ?z, then ?a1 ...
std::string InputName(int i);

}  // namespace verisub::ruledb
