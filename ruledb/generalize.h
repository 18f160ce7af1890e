// More general forms of a rule (TASO's common-subgraph pruning) and the instance relation
// between rules (subsumption). All results are canonical rules.
#pragma once

#include <optional>
#include <vector>

#include "ruledb/rule.h"

namespace verisub::ruledb {

// Generalizations of a ranked rule are ranked: its inputs keep their ranks, and a fresh input
// gets the rank of the term it replaces (ruledb::PatternRanks; a generalization for which that
// rank is unknown is not proposed).

// Form 1: an operator whose operands are all pattern inputs, present with the same parameters
// and operands in both source and target, replaced everywhere by fresh inputs (one per output
// of the operator that is used). One result per such common operator.
std::vector<Rule> CommonOperatorGeneralizations(const Rule& r);

// Form 2: when every source/target output pair is either the same term on both sides or the
// same operator (parameters, output index) on both sides, those top operators are removed and
// their operands become the outputs (pairs that are the same term on both sides are dropped).
// Operands of commutative tops are paired in both orders, one result each.
std::vector<Rule> CommonOutputGeneralizations(const Rule& r);

// Whether `specific` is `general` with its inputs replaced by terms of `specific`'s source
// (operands of commutative operators matched in either order, outputs in `general`'s order):
// the source matches, and the instantiated target equals `specific`'s target, exactly or, when
// `modulo_symmetry`, up to the symmetries of SymmetryKey. With `strict`, bindings that only
// rename inputs one to one do not count (a rule is then not an instance of itself). A `general`
// with input ranks covers only a ranked `specific` whose terms bound to its inputs have those
// ranks; a `general` without ranks covers instances at any ranks.
// `specific_key`, when given, caches `specific`'s key across calls (it is computed on the first
// source match and reused): pruning compares one rule with thousands.
bool IsInstanceOf(const Rule& specific, const Rule& general, bool modulo_symmetry, bool strict,
                  std::optional<std::string>* specific_key = nullptr);

}  // namespace verisub::ruledb
