// verisub::OptimizeModel: the optimizer as one call, for embedders and the Python module: the
// rules loaded and compiled, the costs from their source (measured on this machine by default,
// cached), the layout-aware joint search or the plain one, the optimized graph with its report.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "rewriter/cost_source.h"
#include "rewriter/joint.h"
#include "rewriter/optimize.h"
#include "runtime/graph.h"

namespace verisub {

struct ModelOptimizeOptions {
  std::string rules_path;  // empty: the shipped database (rewriter::FindDefaultRules)
  bool allow_unproved = false;
  rewriter::CostOptions cost;
  // "dp": the search prices graphs by their layout-DP-optimal cost (and keeps the cheaper of that
  // and the rewrites-only search); "plain": the rewrites-only search.
  std::string layout = "dp";
  OptimizeOptions optimize;  // search budget, time limit, seed; cost_model is set here
  // The optimized graph is written for another engine, which prepares constant weights at load:
  // off, no rewrite leaves a convolution or matmul reading a computed weight (sets
  // optimize.search.apply.keep_weights_constant; verisub-opt --computed-weights).
  bool computed_weights = false;
  // Also keep what the HTML report draws: the input graph, per-node costs, proof records.
  bool for_html_report = false;
};

struct ModelOptimizeResult {
  runtime::Graph graph;  // export-ready
  OptimizeReport report;
  std::optional<JointChoice> joint;  // with layout "dp"
  std::string rules_path;            // the rules used
  std::string cost_summary;          // CostSource::Summary(), the measurements saved
  // With for_html_report: the report's page (rewriter/report_html.h), `model` naming the input.
  std::string html;
};

// Errors name the rules file, the cost source or the failing pass. Measurements made before a
// failure are saved all the same.
StatusOr<ModelOptimizeResult> OptimizeModel(runtime::Graph graph,
                                            const ModelOptimizeOptions& options,
                                            const std::string& model = "");
// The same, with the model imported by `import` while the rules are read and compiled on a thread
// of their own (as verisub-opt does): the import and the rules overlap instead of adding up. An
// error of the rules is reported before one of the import.
StatusOr<ModelOptimizeResult> OptimizeModel(const std::function<StatusOr<runtime::Graph>()>& import,
                                            const ModelOptimizeOptions& options,
                                            const std::string& model = "");

}  // namespace verisub
