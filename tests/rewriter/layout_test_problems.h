// Test helpers for the layout DP: random small problems and the brute-force optimum.
#pragma once

#include <cstdint>
#include <vector>

#include "rewriter/layout_problem.h"

namespace verisub::rewriter::testing {

// A random problem of a few nodes: branches, joins, a value read twice by one node, two-output
// nodes, opaque nodes (all-plain choice only), random candidate sets, kernel and conversion
// costs; graph inputs plain, some graph outputs. Deterministic in `seed`. The product of the
// nodes' choice counts stays at most `max_assignments`, so brute force is feasible.
LayoutProblem RandomLayoutProblem(uint64_t seed, int64_t max_assignments = 50000);

// The cheapest total over every combination of choices, and one combination reaching it.
double BruteForceOptimum(const LayoutProblem& p, std::vector<int>* best_choice = nullptr);

}  // namespace verisub::rewriter::testing
