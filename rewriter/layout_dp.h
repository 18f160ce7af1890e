// The global layout dynamic program over the cuts of a node order (seed 001): the state at a
// cut is, for every value crossing it, the layout it is stored in plus the layouts it has
// already been converted to (a conversion is made once and shared, see layout_problem.h); a
// step adds the node's kernel cost in its chosen layouts and the conversions its inputs need;
// backtracking from the cheapest final state gives one choice per node.
//
// Prunings, each switchable, applied to the states of every cut:
// - dominated (exact, never changes the optimum): a state is dropped when another state with
//   the same stored layouts everywhere, plus the conversions that give it every converted copy
//   the first has, costs no more.
// - threshold: drop states costlier than threshold x the cut's best.
// - pareto (the seed's rule): drop a state when another state that differs in one value's
//   stored layout reaches it with conversions of that value for no more; and, more widely,
//   when one of the cut's 8 cheapest states reaches it by converting every value in which
//   they differ. Not exact (the two states price later conversions of a value from different
//   stored layouts).
// - beam: keep at most max_states per cut, cheapest first; the report says when it cut.
// With threshold, pareto and beam inactive the result is the exact optimum.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "rewriter/layout_problem.h"

namespace verisub::rewriter {

struct LayoutDpOptions {
  bool prune_dominated = true;
  // States costlier than threshold x the cut's best are dropped; <= 0 turns the rule off. Off
  // by default: a cut's costs are partial sums, so early states that are dearer so far but
  // cheaper in the end fall to it (SqueezeNet 2.6% off the optimum at 1.05 and at 1.1), while
  // the pareto rule alone keeps every benchmark model exact and fast (docs/layout-dp.md).
  double threshold = 0;
  bool pareto = true;
  // State budget per cut (the beam); <= 0 means no budget. A cut over budget keeps its
  // cheapest states, and the result is then no longer exact (the report says so).
  int max_states = 256;
  // Order: the narrower of the given and the greedy order (layout_order.h), or the given one.
  bool narrow_order = true;
};

struct LayoutDpReport {
  int nodes = 0;
  int values = 0;
  int max_cut_width = 0;        // of the order used
  int given_max_cut_width = 0;  // of the problem's own order
  bool used_greedy_order = false;
  int peak_states = 0;  // per cut, after pruning
  double mean_states = 0;
  int64_t transitions = 0;  // (state, choice) pairs expanded
  int64_t pruned_dominated = 0;
  int64_t pruned_threshold = 0;
  int64_t pruned_pareto = 0;
  int64_t pruned_beam = 0;
  int beam_cuts = 0;  // cuts where the beam dropped states
  // True when no state was dropped by threshold, pareto or beam: the cost is the optimum.
  bool exact = true;
  // All-plain cost (kInfiniteCost when some node has no all-plain choice) and the DP's cost.
  double cost_plain_us = 0;
  double cost_us = 0;
  // Sum of every node's cheapest choice, conversions left out: no assignment costs less, so
  // cost_us / lower_bound_us - 1 bounds the gap to the optimum where no exact run fits.
  double lower_bound_us = 0;
  double time_ms = 0;  // the DP itself (order, states, backtracking)
  // Filled by AssignLayouts: nodes offered only uniform layout combinations (too many slots),
  // and the time spent building the problem (cost queries).
  int restricted_nodes = 0;
  double build_ms = 0;
};

struct LayoutSolution {
  std::vector<int> choice;  // per problem node
  double cost_us = 0;       // EvaluateChoices(problem, choice)
};

// Solves a problem (CheckLayoutProblem must pass; the error says why not). `report` may be null.
StatusOr<LayoutSolution> SolveLayoutProblem(const LayoutProblem& p, const LayoutDpOptions& options,
                                            LayoutDpReport* report);

}  // namespace verisub::rewriter
