// What every measured cost model (oneDNN on the CPU, cuDNN/cuBLAS on a GPU) shares: a cost table
// of known times, the policy for an instance the table lacks, and counts of what was answered,
// timed and estimated. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "runtime/cost/cost_table.h"

namespace verisub::runtime {

// What to do with an instance the table lacks.
enum class MissingCost {
  kMeasure,  // time it now and add it to the table
  // Estimate it, timing nothing (the table is unchanged): the table's time of the same kernel at
  // the nearest other shapes, scaled by the output's size, else the model's analytic estimate.
  kAnalytic,
  kError,  // fail, naming the instance: a table that must be complete
};
StatusOr<MissingCost> ParseMissingCost(const std::string& name);  // measure|analytic|error

struct MeasureStats {
  int64_t hits = 0;       // answered from the table
  int64_t measured = 0;   // timed now
  int64_t estimated = 0;  // analytic: opaque operators, failed kernels, or MissingCost::kAnalytic
  // Of the estimates under MissingCost::kAnalytic: scaled from the table's time of the same
  // kernel at other shapes (ScaledFromNearestShape).
  int64_t scaled = 0;
  double measure_seconds = 0;
};

// A table key's shapes taken out: "conv2d[group=1] [1,64,56,56],[64,64,3,3] -> [1,64,56,56]
// @out=nchw16c" has the form "conv2d[group=1] [#4],[#4] -> [#4] @out=nchw16c" (every list of
// integers replaced by its rank) and the dimensions 1,64,56,56,64,64,3,3,1,64,56,56.
struct KeyShapes {
  std::string form;
  std::vector<int64_t> dims;
  double size = 0;  // elements of the shapes after "->" (of every shape where there is none)
};
KeyShapes SplitKeyShapes(const std::string& key);

// The time (us) of `key`'s kernel estimated from `table`'s entries of the same form (the same
// kernel, parameters, fusion and layouts at other shapes): the entry whose dimensions differ from
// `key`'s in the fewest places (then: the nearest in size; then the first key), its time scaled
// by the ratio of the output sizes. A batch of 8 is priced from the batch of 1 timed earlier, a
// blocked layout stays cheaper than a plain one where it was measured so. nullopt: no such entry.
// `index` caches the table's keys by form (built at the first call, rebuilt when the table grew).
struct ShapeIndex {
  std::map<std::string, std::vector<std::pair<KeyShapes, double>>> by_form;
  int64_t table_size = -1;
};
std::optional<double> ScaledFromNearestShape(const CostTable& table, const std::string& key,
                                             ShapeIndex* index);

class MeasuredTable {
 public:
  MeasuredTable(MissingCost missing, CostTable table)
      : missing_(missing), table_(std::move(table)) {}

  // The table's entry for `key`, else `measure()` timed (seconds, runs) and stored (in µs),
  // following the missing-entry policy; `estimate` (µs) answers kAnalytic and a measurement that
  // failed (not stored, so that a later build can measure it).
  StatusOr<double> Cached(const std::string& key,
                          const std::function<StatusOr<double>(int* runs)>& measure,
                          double estimate);
  // The table's entry for `key` (counted as a hit), or nullopt: for a caller whose measurement
  // needs preparation that a cached answer does not.
  std::optional<double> Lookup(const std::string& key);
  // Counts an instance answered by an estimate without consulting the table.
  void CountEstimate();
  // Called after every measurement is stored (outside the table's lock), e.g. to save the table
  // as it grows, so that a run cut short keeps what it measured.
  void SetOnMeasured(std::function<void()> f);

  CostTable table() const;
  MeasureStats stats() const;

 private:
  const MissingCost missing_;
  mutable std::mutex mu_;
  CostTable table_;
  ShapeIndex shapes_;  // for kAnalytic
  MeasureStats stats_;
  std::function<void()> on_measured_;
};

}  // namespace verisub::runtime
