// Symmetric variants of a rule: the same substitution written with the operands of commutative
// operators swapped or its outputs listed in another order.
#pragma once

#include <string>

#include "ruledb/rule.h"

namespace verisub::ruledb {

// The smallest canonical text over all variants (operands of `commutative` operators swapped,
// outputs permuted), so two rules equal up to input renaming and these symmetries get the same
// key. When there are more than `max_variants` variants the key is the rule's own text.
std::string SymmetryKey(const Rule& r, int max_variants = 4096);

// A rule read back from its canonical text: identical subterms merged into one node.
Rule Normalize(const Rule& r);

}  // namespace verisub::ruledb
