// Fusion by reductions (DESIGN.md §6): lowerable nodes are partitioned into kernels, one generated
// kernel each, at most one reduction domain per kernel (reductions over the same tensor and axes,
// as softmax's max and sum, share one), one value written per kernel: every other value computed
// inside is read only inside (a centred value read by a square and a division, both in the
// kernel, stays inside). The partition minimizes the bytes crossing kernel boundaries plus a fixed
// price per kernel; the compute is the same in every partition (each sub-operator runs once, none
// is recomputed), so what differs is traffic and launches, and the measured time decides per
// kernel afterwards (generated or library, session/). Exact by branch and bound (SolvePartition),
// checked against brute force in tests.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/graph.h"
#include "runtime/kernel_generator.h"

namespace verisub::fusion {

// What one kernel costs beyond the bytes it moves, in bytes: a call, a pass of its threads over
// its loops, the write-back it cannot overlap (about 2 us at this machine's ~8 GB/s per core).
inline constexpr int64_t kKernelCostBytes = 16 << 10;

// The partition problem on its own: nodes 0..n-1 in topological order, node i computing value i;
// values n.. are read from outside (library kernels, graph inputs, weights).
struct FusionProblem {
  struct Node {
    std::vector<int> reads;  // value ids, distinct
    int domain = 0;          // its reduction domain, 0 when it reduces nothing
    bool escapes = false;    // its value is read outside the problem (or is a graph output)
  };
  std::vector<Node> nodes;
  std::vector<int64_t> bytes;  // per value id
};

struct FusionPartition {
  std::vector<int> kernel_of;  // per node, kernels numbered in order of their first node
  int kernels = 0;
  int64_t cost = 0;
  bool exact = true;   // false when a component's search ran out of budget (the best found)
  int64_t states = 0;  // search states visited
};

// The cost of `kernel_of` (a kernel id per node): per kernel, kKernelCostBytes, the bytes of the
// value it writes, and the bytes of every outside value it reads (once per kernel); nullopt when
// the partition breaks a rule above (two values leave a kernel, two reduction domains meet).
std::optional<int64_t> PartitionCost(const FusionProblem& p, const std::vector<int>& kernel_of);

// The cheapest partition, searched per connected component (nodes in reverse order, each joining
// the one kernel that reads it or starting its own; bounded by the cost so far, joins first).
// A component whose search visits more than `max_states` states keeps the best partition found.
FusionPartition SolvePartition(const FusionProblem& p, int64_t max_states = 1 << 18);

// Clusters over the nodes not `taken` (per node, 1 when another kernel computes it), including
// clusters of one node; a cluster that only moves data is kept only where it copies twice or more
// in the library (a concatenation and the channel shuffle after it: one pass instead of two); one
// reshape, transpose or slice the library runs as a view or a strided copy. Deterministic.
std::vector<runtime::KernelCluster> PlanClusters(const runtime::Graph& g,
                                                 const std::vector<char>& taken);

}  // namespace verisub::fusion
