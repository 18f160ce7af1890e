// Random-input comparison of two graphs in the reference executor.
#include "rewriter/verify_outputs.h"

#include <cmath>
#include <random>
#include <vector>

#include "runtime/executor.h"

namespace verisub::rewriter {

using runtime::Graph;
using runtime::HostTensor;

Status CompareOutputs(const Graph& original, const Graph& optimized, const VerifyOptions& options,
                      VerifyReport* report) {
  *report = VerifyReport();
  if (original.inputs().size() != optimized.inputs().size() ||
      original.outputs().size() != optimized.outputs().size())
    return InvalidArgument("the graphs have different numbers of inputs or outputs");
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int trial = 0; trial < options.trials; ++trial) {
    std::vector<HostTensor> inputs;
    for (int v : original.inputs()) {
      const runtime::Value& val = original.value(v);
      if (!val.StaticShape())
        return InvalidArgument("input '" + val.name + "' has no static shape");
      int64_t n = runtime::CountElements(val.dims);
      if (n < 0) return InvalidArgument("input '" + val.name + "' is too large");
      std::vector<double> data(n);
      for (double& d : data) d = runtime::IsFloatType(val.elem_type) ? dist(rng) : 0.0;
      inputs.push_back(HostTensor::FromDoubles(val.elem_type, val.dims, data));
    }
    auto a = runtime::Execute(original, inputs);
    if (!a.ok()) return a.status().WithContext("running the original graph");
    auto b = runtime::Execute(optimized, inputs);
    if (!b.ok()) return b.status().WithContext("running the optimized graph");
    for (size_t k = 0; k < a->size(); ++k) {
      const std::string name = original.value(original.outputs()[k]).name;
      if ((*a)[k].dims != (*b)[k].dims)
        return InvalidArgument("output '" + name + "' has shape " +
                               runtime::DimsToString((*a)[k].dims) + " originally but " +
                               runtime::DimsToString((*b)[k].dims) + " after optimization");
      std::vector<double> x = (*a)[k].ToDoubles(), y = (*b)[k].ToDoubles();
      for (size_t i = 0; i < x.size(); ++i) {
        double diff = std::fabs(x[i] - y[i]);
        bool both_nan = std::isnan(x[i]) && std::isnan(y[i]);
        if (!both_nan && report->max_abs_diff < diff) report->max_abs_diff = diff;
        if (both_nan || diff <= options.abs_tol + options.rel_tol * std::fabs(x[i])) continue;
        if (std::isnan(diff) && x[i] == y[i]) continue;  // equal infinities
        return InvalidArgument("output '" + name + "' differs at element " + std::to_string(i) +
                               ": original " + std::to_string(x[i]) + ", optimized " +
                               std::to_string(y[i]) + " (trial " + std::to_string(trial) + ")");
      }
      ++report->outputs_compared;
      report->elements_compared += static_cast<int64_t>(x.size());
    }
  }
  return Status::Ok();
}

}  // namespace verisub::rewriter
