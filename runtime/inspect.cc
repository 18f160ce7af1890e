// verisub-onnx's work, as a library call.
#include "runtime/inspect.h"

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "base/string_printf.h"
#include "runtime/executor.h"
#include "runtime/graph_hash.h"
#include "runtime/memory_budget.h"
#include "runtime/onnx_export.h"
#include "runtime/opaque_stats.h"

namespace verisub::runtime {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Random inputs in [-1, 1) (zeros for integer inputs).
StatusOr<std::vector<HostTensor>> RandomInputs(const Graph& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<HostTensor> inputs;
  for (int v : g.inputs()) {
    const Value& val = g.value(v);
    if (!val.StaticShape()) return InvalidArgument("input '" + val.name + "' has no static shape");
    std::vector<double> data(CountElements(val.dims));
    for (double& d : data) d = IsFloatType(val.elem_type) ? dist(rng) : 0.0;
    inputs.push_back(HostTensor::FromDoubles(val.elem_type, val.dims, data));
  }
  return inputs;
}

}  // namespace

Status InspectModel(const InspectOptions& options, std::string* report) {
  auto t0 = std::chrono::steady_clock::now();
  VERISUB_ASSIGN_OR_RETURN(Graph g, ImportOnnxFile(options.model_path, options.import));
  const double import_s = Seconds(t0);
  int weights = 0;
  for (int v = 0; v < g.num_values(); ++v) weights += g.value(v).constant != nullptr;
  OpaqueStats opaque = MeasureOpaque(g);
  *report += "model: " + options.model_path + "\n";
  base::StringAppendF(
      report, "nodes: %d\n%s\ndynamic shapes: %d values\nweights: %d\ninputs: %zu\n", g.num_nodes(),
      OpaqueSummaryLine(opaque).c_str(), opaque.dynamic_values, weights, g.inputs().size());
  base::StringAppendF(report, "outputs: %zu\nhash: %016llx\nimport_seconds: %.3f\n",
                      g.outputs().size(), static_cast<unsigned long long>(StructuralHash(g)),
                      import_s);
  for (const auto& [op, count] : OpCounts(g))
    base::StringAppendF(report, "  %-28s %d\n", op.c_str(), count);

  if (options.run) {
    // Refused before the random inputs are made, not by bad_alloc while making them.
    VERISUB_RETURN_IF_ERROR(
        CheckMemoryBudget(g, options.import.memory, /*executor=*/true).WithContext("--run"));
    VERISUB_ASSIGN_OR_RETURN(std::vector<HostTensor> inputs, RandomInputs(g, options.seed));
    auto t1 = std::chrono::steady_clock::now();
    VERISUB_ASSIGN_OR_RETURN(std::vector<HostTensor> outputs, Execute(g, inputs, options.import.memory));
    base::StringAppendF(report, "run_seconds: %.3f\n", Seconds(t1));
    for (size_t k = 0; k < outputs.size(); ++k) {
      double sum = 0;
      for (double x : outputs[k].ToDoubles()) sum += x;
      base::StringAppendF(report, "output %s %s sum=%.6g\n", g.value(g.outputs()[k]).name.c_str(),
                          DimsToString(outputs[k].dims).c_str(), sum);
    }
  }
  if (!options.output_path.empty()) {
    auto t2 = std::chrono::steady_clock::now();
    VERISUB_RETURN_IF_ERROR(ExportOnnxFile(g, options.output_path));
    base::StringAppendF(report, "export_seconds: %.3f\nwrote: %s\n", Seconds(t2),
                        options.output_path.c_str());
  }
  return Status::Ok();
}

}  // namespace verisub::runtime
