// Helpers of the oneDNN backend tests: prepare a graph on a backend, run it, and compare two
// backends' outputs with a relative tolerance.
#pragma once

#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/graph.h"

namespace verisub::runtime::testing {

struct Comparison {
  double max_abs = 0;   // largest |a - b|
  double max_rel = 0;   // largest |a - b| / max(|b|, 1)
  double norm_rel = 0;  // ||a - b|| / ||b|| over all outputs
  double max_ref = 0;   // largest |b|
  std::string error;    // non-empty when a run failed or shapes differ
};

// Runs `g` on `inputs` with the oneDNN backend and the reference backend and compares them;
// `stats` (optional) receives the oneDNN model's prepare statistics.
Comparison CompareWithReference(const Graph& g, const std::vector<HostTensor>& inputs,
                                PrepareStats* stats = nullptr, int threads = 0);
Comparison Compare(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b);

}  // namespace verisub::runtime::testing
