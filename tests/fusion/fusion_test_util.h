// Helpers of the fusion tests: a graph's nodes lowered as one cluster and evaluated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusion/lower.h"
#include "runtime/host_tensor.h"

namespace verisub::fusion::testing {

// The kernel inputs of `c` (graph inputs from `inputs`, in the graph's order; weights from
// their data), as doubles.
std::vector<std::vector<double>> ClusterInputs(const runtime::Graph& g, const LoweredCluster& c,
                                               const std::vector<runtime::HostTensor>& inputs);
// Every node of `g` lowered as one cluster computing its first output.
StatusOr<LoweredCluster> LowerWhole(const runtime::Graph& g);
// Graphs (in the graph text form) of the spec operators that lower, alone and in chains, on
// random shapes of rank 1..4 with dimensions 1..4 (and a few larger ones), drawn from `seed`.
std::vector<std::string> SpecOperatorCases(uint64_t seed);
// Largest |a - b| / max(|b|, 1).
double MaxRelDiff(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace verisub::fusion::testing
