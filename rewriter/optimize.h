// The product API: optimize a model graph (or an ONNX file) with a frozen rule set and a cost
// model. Never throws across this boundary; every failure is a Status.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "rewriter/rule_set.h"
#include "rewriter/search.h"
#include "runtime/cost/cost_model.h"
#include "runtime/graph.h"
#include "runtime/onnx_import.h"
#include "runtime/opaque_stats.h"

namespace verisub {

struct OptimizeOptions {
  rewriter::SearchOptions search;
  // Analytic device preset used when `cost_model` is null: "v100", "cpu-2core" or "h100".
  std::string device = "v100";
  const runtime::CostModel* cost_model = nullptr;  // not owned
  // How OptimizeModelFile imports the model (input shapes for symbolic dimensions, ...).
  runtime::ImportOptions import;
};

struct OptimizeReport {
  std::string cost_model;  // CostModel::Name()
  int nodes_before = 0;
  int nodes_after = 0;
  // What the rules cannot see in the input graph (opaque nodes per ONNX operator).
  runtime::OpaqueStats opaque;
  rewriter::SearchReport search;
};

// `input` is left untouched; on success `*output` holds the optimized, export-ready graph.
Status Optimize(const runtime::Graph& input, const rewriter::RuleSet& rules,
                const OptimizeOptions& options, runtime::Graph* output, OptimizeReport* report);
// The same, consuming `input`: the weights the result no longer reads (replaced by folded ones)
// are freed during the optimization instead of living on in the caller's graph.
Status Optimize(runtime::Graph&& input, const rewriter::RuleSet& rules,
                const OptimizeOptions& options, runtime::Graph* output, OptimizeReport* report);

// Imports `model_path`, optimizes it and, when `output_path` is not empty, exports the result
// (temporary file + rename: nothing is written on error). `optimized` may be null.
Status OptimizeModelFile(const std::string& model_path, const std::string& output_path,
                         const rewriter::RuleSet& rules, const OptimizeOptions& options,
                         OptimizeReport* report, runtime::Graph* optimized = nullptr);

}  // namespace verisub
