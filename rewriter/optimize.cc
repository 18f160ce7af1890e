// verisub::Optimize: pick the cost model, then the pass pipeline (import fixes, constant
// folding, search, finalize).
#include "rewriter/optimize.h"

#include <exception>
#include <new>

#include "rewriter/apply.h"
#include "rewriter/graph_cost.h"
#include "rewriter/interface.h"
#include "rewriter/pass_pipeline.h"
#include "rewriter/search_memory.h"
#include "runtime/canonicalize.h"
#include "runtime/constant_folding.h"
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

// The passes of OptimizePassNames(), bound to one run's rules, cost model, options and report
// (null only to list the names).
std::vector<rewriter::GraphPass> MakePasses(const rewriter::RuleSet* rules,
                                            const runtime::CostModel* model,
                                            const OptimizeOptions* options,
                                            OptimizeReport* report) {
  std::vector<rewriter::GraphPass> passes;
  passes.push_back({"import-fixes", [](runtime::Graph* g) {
                      return NeedsTypes(*g) ? runtime::InferSpecTypes(g) : Status::Ok();
                    }});
  passes.push_back({"constant-folding", [](runtime::Graph* g) {
                      runtime::FoldOptions fold;
                      fold.max_elements = rewriter::kFoldMaxElements;
                      fold.keep_dequantized_weights = true;
                      return runtime::FoldConstants(g, fold).status();
                    }});
  passes.push_back({"search", [rules, model, options, report](runtime::Graph* g) {
                      VERISUB_RETURN_IF_ERROR(rewriter::CheckSearchMemory(
                          *g, options->search, options->search.max_memory_bytes));
                      auto result = rewriter::Search(std::move(*g), *rules, *model, options->search,
                                                     &report->search);
                      if (!result.ok()) return result.status();
                      *g = std::move(result).value();
                      return Status::Ok();
                    }});
  // Layout assignment goes here: the layout dynamic program (planned) picks a layout for every
  // value and inserts the conversions; finalize then makes the result export-ready.
  passes.push_back({"finalize", [](runtime::Graph* g) { return rewriter::FinalizeGraph(g); }});
  // Convolutions absorb their bias and activation, as engines run them; after finalize, whose
  // folding makes a rewritten bias a weight again.
  passes.push_back({"fuse-epilogues", [options](runtime::Graph* g) {
                      if (options == nullptr || options->fuse_epilogues)
                        runtime::FuseConvEpilogues(g);
                      return Status::Ok();
                    }});
  return passes;
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
  if (!(options.search.min_gain >= 0 && options.search.min_gain < 1))
    return InvalidArgument("min_gain must be in [0, 1) (got " +
                           std::to_string(options.search.min_gain) + ")");
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
  report->nodes_before = g.num_nodes();
  report->opaque = runtime::MeasureOpaque(g);
  const rewriter::GraphInterface interface = rewriter::InterfaceOf(g);
  rewriter::PassPipelineOptions pipeline;
  pipeline.check_after_each_pass = options.check_after_each_pass;
  pipeline.dump_after = options.dump_after;
  pipeline.times = &report->phases;
  VERISUB_RETURN_IF_ERROR(rewriter::RunPassPipeline(MakePasses(&rules, model, &options, report),
                                                    pipeline, &g, &report->dump_text));
  // The model's input and output names and order are its interface: restored after rewriting.
  VERISUB_RETURN_IF_ERROR(rewriter::RestoreInterface(interface, &g));
  Status check = runtime::CheckGraph(g);
  if (!check.ok()) return InternalError("optimized graph fails the checker: " + check.message());
  report->nodes_after = g.num_nodes();
  *output = std::move(g);
  return Status::Ok();
}

}  // namespace

std::vector<std::string> OptimizePassNames() {
  std::vector<std::string> names;
  for (const rewriter::GraphPass& p : MakePasses(nullptr, nullptr, nullptr, nullptr))
    names.push_back(p.name);
  return names;
}

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
    auto g = runtime::ImportOnnxFile(model_path, options.import);
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
