// Differential fuzzing of the rewriter at scale: random graphs (tests/rewriter/random_graphs.h),
// each optimized under several search settings, must keep their interface (input and output
// names, order, shapes) and compute the same outputs in the reference executor. Graphs run in
// parallel (TBB); graph i is built from seed first_seed + i alone, so a failure replays from its
// seed whatever the thread count, and results merge in seed order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "rewriter/optimize.h"
#include "rewriter/rule_set.h"

namespace verisub::rewriter::testing {

struct DiffFuzzSetting {
  std::string name;
  OptimizeOptions options;
};

// The settings `make fuzz` runs: the product's defaults and an aggressive search (wider alpha,
// `aggressive_budget` graphs). Neither has a time limit, so a seed always gives the same search.
std::vector<DiffFuzzSetting> DefaultAndAggressiveSettings(int aggressive_budget);

struct DiffFuzzOptions {
  uint64_t first_seed = 1;
  int64_t graphs = 10000;
  int threads = 0;  // 0: one per core
  std::vector<DiffFuzzSetting> settings;
  // Where a failing graph goes as ONNX (diff_fuzz_seed<S>_<setting>.onnx); empty: not written.
  std::string failures_dir;
  // Graphs per parallel round; after each round the results merge and `progress` is called.
  int64_t round = 256;
};

struct DiffFuzzFailure {
  uint64_t seed = 0;
  std::string setting;
  std::string why;
  std::string replay;  // the written model, or why it could not be written
};

struct DiffFuzzReport {
  int64_t seeds = 0;      // seeds drawn
  int64_t graphs = 0;     // graphs built and run (a seed may give an empty graph)
  int64_t optimized = 0;  // (graph, setting) runs that Optimize accepted
  int64_t compared = 0;   // runs whose outputs compared equal
  int64_t rewritten = 0;  // graphs that at least one setting rewrote (a rule applied)
  int64_t cheaper = 0;    // graphs that at least one setting made cheaper
  std::map<std::string, int64_t> rewritten_by_setting;
  // Applications of each rule (id) along the results' derivations, over all runs.
  std::map<std::string, int64_t> rule_uses;
  std::vector<DiffFuzzFailure> failures;
  double optimize_cpu_s = 0;  // summed over threads
  std::map<std::string, double> optimize_cpu_s_by_setting;
  double compare_cpu_s = 0;
  double wall_s = 0;
};

// Runs the graphs; `progress` (may be empty) sees the report after every merged round.
// Errors only for bad options (no settings, an unwritable failures directory).
Status RunDiffFuzz(const RuleSet& rules, const DiffFuzzOptions& options, DiffFuzzReport* report,
                   const std::function<void(const DiffFuzzReport&)>& progress = {});

}  // namespace verisub::rewriter::testing
