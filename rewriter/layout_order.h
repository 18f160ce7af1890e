// Node orders for the layout DP. The DP's state at a cut holds one entry per value crossing it,
// so the order decides the state size: an order that finishes live values early keeps cuts
// narrow (the DP's optimum does not depend on the order, only its work does).
#pragma once

#include <vector>

#include "rewriter/layout_problem.h"

namespace verisub::rewriter {

// Values crossing each cut of `order` (a permutation of node indices): cut i lies before
// order[i], cut order.size() after the last node. A value crosses cut i when it is a graph
// input or produced before i, and is read at or after i (graph outputs are read at the end).
// Values nothing reads are in no cut. Each cut lists value ids in increasing order.
std::vector<std::vector<int>> CutValues(const LayoutProblem& p, const std::vector<int>& order);
int MaxCutWidth(const LayoutProblem& p, const std::vector<int>& order);

// True when `order` is a permutation of the nodes in which every value is produced before it
// is read.
bool IsTopologicalOrder(const LayoutProblem& p, const std::vector<int>& order);

// The problem's own order: 0, 1, ..., n-1.
std::vector<int> GivenOrder(const LayoutProblem& p);

// Greedy narrow-cut order: among the nodes whose inputs are ready, take the one that changes
// the live set least (outputs that stay live minus inputs it reads last), ties going to the
// earliest node of the given order, so a chain is followed to its end before a new branch is
// opened and a join is taken as soon as its inputs are ready.
std::vector<int> GreedyNarrowOrder(const LayoutProblem& p);

// The narrower of the given and the greedy order (the given one on a tie), so the order used
// is never wider than the graph's own.
std::vector<int> NarrowestOrder(const LayoutProblem& p);

}  // namespace verisub::rewriter
