// verisub::Optimize: prepare types, pick the cost model, run the search.
#include "rewriter/optimize.h"

#include <exception>
#include <new>

#include "rewriter/interface.h"
#include "runtime/cost/analytic_cost.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"

namespace verisub {

namespace {

// Spec types are needed on every value a spec node reads; imported graphs have them already.
bool NeedsTypes(const runtime::Graph& g) {
  for (const auto& n : g.nodes()) {
    if (!n->op) continue;
    for (int v : n->inputs)
      if (!g.value(v).spec_type) return true;
    for (int v : n->outputs)
      if (!g.value(v).spec_type) return true;
  }
  return false;
}

Status OptimizeImpl(runtime::Graph g, const rewriter::RuleSet& rules,
                    const OptimizeOptions& options, runtime::Graph* output,
                    OptimizeReport* report) {
  *report = OptimizeReport();
  if (!(options.search.alpha >= 1.0))
    return InvalidArgument("alpha must be at least 1 (got " + std::to_string(options.search.alpha) +
                           ")");
  if (options.search.budget < 0) return InvalidArgument("budget must not be negative");
  if (!(options.search.time_limit_s >= 0))
    return InvalidArgument("time limit must not be negative");
  if (options.search.max_queue < 1) return InvalidArgument("max_queue must be at least 1");
  std::unique_ptr<runtime::CostModel> owned;
  const runtime::CostModel* model = options.cost_model;
  if (!model) {
    auto device = runtime::DevicePreset(options.device);
    if (!device.ok()) return device.status();
    owned = std::make_unique<runtime::AnalyticCostModel>(*device);
    model = owned.get();
  }
  report->cost_model = model->Name();
  VERISUB_RETURN_IF_ERROR(runtime::CheckGraph(g).WithContext("input graph"));
  if (NeedsTypes(g)) VERISUB_RETURN_IF_ERROR(runtime::InferSpecTypes(&g));
  report->nodes_before = g.num_nodes();
  const rewriter::GraphInterface interface = rewriter::InterfaceOf(g);
  auto result = rewriter::Search(std::move(g), rules, *model, options.search, &report->search);
  if (!result.ok()) return result.status();
  VERISUB_RETURN_IF_ERROR(rewriter::RestoreInterface(interface, &*result));
  Status check = runtime::CheckGraph(*result);
  if (!check.ok()) return InternalError("optimized graph fails the checker: " + check.message());
  report->nodes_after = result->num_nodes();
  *output = std::move(result).value();
  return Status::Ok();
}

}  // namespace

Status Optimize(const runtime::Graph& input, const rewriter::RuleSet& rules,
                const OptimizeOptions& options, runtime::Graph* output, OptimizeReport* report) {
  return Optimize(runtime::Graph(input), rules, options, output, report);
}

Status Optimize(runtime::Graph&& input, const rewriter::RuleSet& rules,
                const OptimizeOptions& options, runtime::Graph* output, OptimizeReport* report) {
  try {
    return OptimizeImpl(std::move(input), rules, options, output, report);
  } catch (const std::bad_alloc&) {
    return InternalError("out of memory during optimization");
  } catch (const std::exception& e) {
    return InternalError(std::string("unexpected exception during optimization: ") + e.what());
  }
}

Status OptimizeModelFile(const std::string& model_path, const std::string& output_path,
                         const rewriter::RuleSet& rules, const OptimizeOptions& options,
                         OptimizeReport* report, runtime::Graph* optimized) {
  try {
    auto g = runtime::ImportOnnxFile(model_path);
    if (!g.ok()) return g.status();
    runtime::Graph out;
    VERISUB_RETURN_IF_ERROR(Optimize(std::move(g).value(), rules, options, &out, report));
    if (!output_path.empty()) VERISUB_RETURN_IF_ERROR(runtime::ExportOnnxFile(out, output_path));
    if (optimized) *optimized = std::move(out);
    return Status::Ok();
  } catch (const std::exception& e) {
    return InternalError(std::string("unexpected exception: ") + e.what());
  }
}

}  // namespace verisub
