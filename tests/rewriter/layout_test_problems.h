// Test helpers for the layout DP: random small problems and the brute-force optimum.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rewriter/layout_assign.h"
#include "rewriter/layout_problem.h"

namespace verisub::rewriter::testing {

// A random problem of a few nodes: branches, joins, a value read twice by one node, two-output
// nodes, opaque nodes (all-plain choice only), random candidate sets, kernel and conversion
// costs; graph inputs plain, some graph outputs. Deterministic in `seed`. The product of the
// nodes' choice counts stays at most `max_assignments`, so brute force is feasible.
LayoutProblem RandomLayoutProblem(uint64_t seed, int64_t max_assignments = 50000);

// The cheapest total over every combination of choices, and one combination reaching it.
double BruteForceOptimum(const LayoutProblem& p, std::vector<int>* best_choice = nullptr);

// Checks an assignment of `g` (test expectations): every non-folded node runs in a combination
// `costs` admits, every read in another layout than the stored one has its conversion (value,
// to) listing the reader, graph outputs not stored plain are delivered plain, and the kernel
// and conversion times add up to the assignment's cost.
void ExpectValidAssignment(const std::string& name, const runtime::Graph& g,
                           const LayoutCostSource& costs, const LayoutAssignment& a);

}  // namespace verisub::rewriter::testing
