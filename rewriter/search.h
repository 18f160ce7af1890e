// TASO's cost-based backtracking search: a priority queue of graphs by cost, graphs costlier
// than alpha x best dropped, seen graphs deduplicated by structural hash, explicit limits, and a
// report with the stop reason.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "rewriter/apply.h"
#include "rewriter/rule_set.h"
#include "runtime/cost/cost_model.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

struct SearchOptions {
  // Candidates costlier than alpha x the best cost so far are not explored (TASO: 1.05).
  double alpha = 1.05;
  // Graphs taken from the queue and expanded (every match of every rule applied). On the
  // benchmark models with the hand-written rules, 10x this budget finds no cheaper graph.
  int budget = 100;
  // Stops once this many graphs in a row were expanded without finding a cheaper one and no
  // queued candidate promises a cheaper one (0: never). Rewriting at model load must be light:
  // on ResNet-50 the budget's 100 expansions took 7 s to find nothing. Cheaper means by more
  // than a quarter of min_gain since the last graph that counted: gains within the costs' noise,
  // one after the other, would otherwise keep a search going that keeps the input in the end
  // (DenseNet-121 with the index-level rules: 35 graphs instead of 23, every one 0.0-0.2%).
  // The same for the queue's promises: under costs that price fusion, a candidate's queued cost
  // is an estimate, and DenseNet-121's front promised 0.1-0.15% through all 100 expansions of
  // the budget while every graph built cost what the input did.
  int patience = 20;
  // Wall-clock limit in seconds, 0 for none. The only source of nondeterminism: the report
  // says when it triggered.
  double time_limit_s = 10;
  // The best graph is taken only when it costs less than (1 - min_gain) x the input; else the
  // input is the result. Measured costs carry a few percent of noise: on the zoo every rewrite
  // the search found promised 0.1-0.3% (one added reduce_mean, priced 0.14% cheaper on oneDNN,
  // ran ShuffleNet-v2 at 0.80x in ONNX Runtime), a gain no engine delivers.
  double min_gain = 0.01;
  // Queue entries kept; beyond it the costliest entries are dropped (bounds memory).
  int max_queue = 4096;
  // Estimated bytes of the search's own structures (search_memory.h), 0 for no bound: a budget
  // and queue that cannot fit are refused before the search starts.
  int64_t max_memory_bytes = 0;
  ApplyOptions apply;
  // When set, the cost of every graph the search builds (and of the input and the result) is this
  // function's, not the sum of node costs: e.g. the graph's layout-DP-optimal cost, for the joint
  // substitution and layout search (TASO's joint optimization; issue 16). Per-rewrite deltas from
  // the cost model then only order the queue. Errors reject the graph (the input's: the search).
  std::function<StatusOr<double>(const runtime::Graph&)> graph_cost;
};

enum class StopReason { kQueueEmpty, kBudget, kTimeLimit, kNoImprovement };
const char* StopReasonName(StopReason r);

struct RuleUse {
  std::string id;
  std::string text;
  int count = 0;
};

struct SearchReport {
  double cost_before_us = 0;
  double cost_after_us = 0;
  // Rules along the best graph's derivation: count descending, then id.
  std::vector<RuleUse> rules_applied;
  int rewrite_steps = 0;         // length of the best graph's derivation
  int64_t graphs_explored = 0;   // graphs expanded
  int64_t graphs_generated = 0;  // rewrites that produced a valid graph
  int64_t matches = 0;
  // Candidates for a graph already queued or built: recognized by what their derivation's
  // rewrites do (rewrites that commute, rules that make the same change) before they are
  // queued, or by their structural hash once built.
  int64_t duplicates = 0;
  int64_t pruned_by_alpha = 0;  // candidates costlier than alpha x best
  int64_t dropped_queue_full = 0;
  std::array<int64_t, kNumRejectReasons> rejected{};  // by RejectReason
  int64_t weight_only_nodes = 0;  // target nodes computed from weights only, over candidates
  double seconds = 0;             // wall time, measuring included
  double measure_seconds = 0;     // of which the cost model spent timing kernels
  StopReason stop = StopReason::kQueueEmpty;
  // The process's resident-set high-water mark when the search ended (base::PeakRssBytes: since
  // the process started, never reset, so it includes what the caller held and did before).
  int64_t peak_rss_bytes = 0;
};

// Returns the cheapest graph found (the input itself when nothing helps). `g` must have spec
// types (runtime::InferSpecTypes). Errors only when the input graph cannot be priced. The search
// owns `g`: a caller that moves its graph in lets the weights the result replaces (folded into
// new ones) be freed before the search returns.
StatusOr<runtime::Graph> Search(runtime::Graph g, const RuleSet& rules,
                                const runtime::CostModel& cost_model, const SearchOptions& options,
                                SearchReport* report);

}  // namespace verisub::rewriter
