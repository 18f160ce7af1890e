// Symmetric variants of a rule: the same substitution written with the operands of commutative
// operators swapped or its outputs listed in another order.
#pragma once

#include <cstdint>
#include <string>

#include "ruledb/rule.h"

namespace verisub::ruledb {

// The smallest canonical text over all variants (operands of `commutative` operators swapped,
// outputs permuted), so two rules equal up to input renaming and these symmetries get the same
// key. When there are more than `max_variants` variants the key is the rule's own text.
std::string SymmetryKey(const Rule& r, int max_variants = 4096);

// A hash that rules with equal SymmetryKeys share (whatever max_variants), computed in one pass
// over the rule: each value is hashed from its operator, parameters and operands (the operands of
// a commutative operator in sorted order; every input alike, so renaming changes nothing), the
// outputs as a sorted list of (source, target) pairs. Rules with different hashes have different
// keys, so only rules whose hashes meet need their keys (RuleSet::Compile).
uint64_t SymmetryHash(const Rule& r);

// A rule read back from its canonical text: identical subterms merged into one node.
Rule Normalize(const Rule& r);

}  // namespace verisub::ruledb
