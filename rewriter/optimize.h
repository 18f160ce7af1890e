// The product API: optimize a model graph (or an ONNX file) with a frozen rule set and a cost
// model. Never throws across this boundary; every failure is a Status.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/phase_times.h"
#include "base/status.h"
#include "rewriter/rule_set.h"
#include "rewriter/search.h"
#include "runtime/cost/cost_model.h"
#include "runtime/graph.h"
#include "runtime/onnx_import.h"
#include "runtime/opaque_stats.h"

namespace verisub {

// Debug builds check the graph after every pass by default; release builds after the last one
// (tests turn the check on explicitly).
#ifdef NDEBUG
inline constexpr bool kCheckEveryPassByDefault = false;
#else
inline constexpr bool kCheckEveryPassByDefault = true;
#endif

struct OptimizeOptions {
  rewriter::SearchOptions search;
  // runtime::CheckGraph after every pass of the pipeline (always after the last).
  bool check_after_each_pass = kCheckEveryPassByDefault;
  // A pass of OptimizePassNames(): after it, OptimizeReport::dump_text gets the graph's text form.
  std::string dump_after;
  // The fuse-epilogues pass: convolutions absorb the bias and activation after them
  // (runtime::FuseConvEpilogues); off, the pass leaves the graph as the search wrote it.
  bool fuse_epilogues = true;
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
  std::string dump_text;  // the graph after OptimizeOptions::dump_after, when set
  // Wall time per pass (OptimizeJointly adds its rewrites-only run and its layout pricing).
  base::PhaseTimes phases;
};

// The passes Optimize runs, in order:
//   import-fixes      spec types on every value a spec node touches (graphs not from the importer)
//   constant-folding  weight-only nodes become weights (runtime::FoldConstants)
//   search            the cost-based substitution search (rewriter::Search)
//   [layout assignment: planned, the layout dynamic program's slot; no pass yet]
//   finalize          fold, drop dead values, unique names: the graph is export-ready
std::vector<std::string> OptimizePassNames();

// `input` is left untouched; on success `*output` holds the optimized, export-ready graph. An
// invariant broken by a pass is an internal error "failed after <pass>: ...".
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
