// Fusion by reductions (DESIGN.md §6): lowerable nodes are grouped into clusters, one generated
// kernel each, with at most one reduction domain per kernel (reductions over the same tensor and
// axes, as softmax's max and sum, share one). In node order, a node joins the clusters of its
// inputs' producers when, together, they are the only readers of every value computed inside
// them (a centred value read by a square and a division, both in the kernel, stays inside): every
// cluster writes one value, and the bytes it saves are those of its inner values, written and
// read back. Greedy, not optimal: a value read both inside and outside stays a boundary, though
// writing it as a second output could pay.
#pragma once

#include <vector>

#include "runtime/graph.h"
#include "runtime/kernel_generator.h"

namespace verisub::fusion {

// Clusters over the nodes not `taken` (per node, 1 when another kernel computes it), including
// clusters of one node; a cluster that only moves data (reshapes, transposes, slices) is left
// out: the library runs those as views or strided copies, faster than a generated gather (a
// channel shuffle's reshape-transpose-reshape ran 5-10x slower generated). Deterministic: node
// order decides every merge.
std::vector<runtime::KernelCluster> PlanClusters(const runtime::Graph& g,
                                                 const std::vector<char>& taken);

}  // namespace verisub::fusion
