// The generator's pre-run estimate.
#include "gen/estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gen/enumerator.h"
#include "specs/registry.h"

namespace verisub::gen {

std::string GenEstimate::Summary() const {
  char buf[300];
  std::snprintf(buf, sizeof buf,
                "estimate: largest input %lld elements; evaluation %.1f MiB over all threads; "
                "at most %.3g graphs (loose bound), %llu fit the memory budget",
                static_cast<long long>(largest_input_elements), evaluation_bytes / (1 << 20),
                graphs_upper_bound, static_cast<unsigned long long>(max_graphs_in_budget));
  return buf;
}

StatusOr<GenEstimate> EstimateGeneration(const GenConfig& config, int threads,
                                         uint64_t budget_bytes) {
  GenEstimate e;
  std::string largest;
  double input_elements = 0;
  for (const InputDecl& in : config.inputs) {
    double n = 1;
    for (int i = 0; i < in.shape.rank; ++i) n *= static_cast<double>(in.shape.dims[i]);
    input_elements += n;
    if (n > static_cast<double>(e.largest_input_elements)) {
      e.largest_input_elements = n > 9e18 ? INT64_MAX : static_cast<int64_t>(n);
      largest = in.name;
    }
  }
  // Every tensor is held as modular integers (4 bytes) and, for the double tests, as doubles
  // (8 bytes); a graph's results are bounded by max_ops results of the largest size (an
  // operator that grows a tensor, like matmul or concat, is not bounded by this: the run's
  // memory guard still is).
  const double per_element = 12.0;
  const double results = static_cast<double>(config.max_ops) * specs::kMaxOpOutputs *
                         static_cast<double>(e.largest_input_elements);
  e.evaluation_bytes = (input_elements + results) * per_element * std::max(1, threads) +
                       input_elements * 8.0 * config.double_tests;
  if (e.evaluation_bytes > static_cast<double>(budget_bytes))
    return FailedPrecondition(
        "the config needs about " +
        std::to_string(static_cast<int64_t>(e.evaluation_bytes / (1 << 20))) +
        " MiB to evaluate its graphs on " + std::to_string(std::max(1, threads)) +
        " thread(s) (largest input '" + largest + "', " + std::to_string(e.largest_input_elements) +
        " elements), over the memory budget of " + std::to_string(budget_bytes >> 20) +
        " MiB: use smaller shapes or fewer threads");
  // Graphs of k operators: each step picks an operator and its arguments among the tensors
  // built so far; the canonical order divides by k!.
  double tensors = static_cast<double>(config.inputs.size() + config.constants.size());
  double level = 1, total = 0;
  for (int k = 1; k <= config.max_ops; ++k) {
    double choices = 0;
    for (const OpInstance& op : config.ops)
      choices += std::pow(tensors, specs::GetOp(op.kind).num_inputs);
    level *= choices / k;
    total += level;
    tensors += specs::kMaxOpOutputs;
  }
  e.graphs_upper_bound = total;
  // An entry, its copy while partitions are merged and sorted, and arena room.
  const double per_graph = 3.0 * sizeof(GraphEntry);
  double room = static_cast<double>(budget_bytes) - e.evaluation_bytes;
  e.max_graphs_in_budget = static_cast<uint64_t>(std::max(0.0, room / per_graph));
  return e;
}

}  // namespace verisub::gen
