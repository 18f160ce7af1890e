// Whether given rules are among a set of candidates, up to a renaming of inputs, the orientation,
// the order of outputs and the order of commutative operands: the check that no rule of a
// reference list (TASO's rule families) is lost.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ruledb/rule.h"

namespace verisub::gen {

class RuleIndex {
 public:
  explicit RuleIndex(const std::vector<ruledb::Rule>& candidates);
  // Candidates as canonical text (GenResult::texts); each must parse.
  explicit RuleIndex(const std::vector<std::string>& candidates);
  bool Contains(const ruledb::Rule& rule) const;

 private:
  std::unordered_set<std::string> keys_;
};

// The reference rules that are not among the candidates, as their text.
std::vector<std::string> MissingRules(const std::vector<ruledb::Rule>& candidates,
                                      const std::vector<ruledb::Rule>& reference);

// A reference rule `L => R`, optionally `L => R via C`: a class of equal graphs pairs each graph
// with its smallest one only, so when a graph C smaller than both sides is equal to them the
// candidates are L = C and R = C, from which L = R follows.
struct ReferenceRule {
  std::string text;  // the line
  ruledb::Rule rule;
  std::vector<ruledb::Rule> via;  // L = C and R = C, empty without `via`
};

// One reference rule per line; blank lines and `#` comments are skipped. Errors name the line.
StatusOr<std::vector<ReferenceRule>> ParseReferenceRules(std::string_view text,
                                                         const std::string& source);

struct CoverageReport {
  int candidates = 0;                // reference rules that are candidates
  std::vector<std::string> via;      // reference rules found through their `via` graph
  std::vector<std::string> missing;  // neither
};

CoverageReport CheckCoverage(const RuleIndex& candidates,
                             const std::vector<ReferenceRule>& reference);

}  // namespace verisub::gen
