// What every measured cost model (oneDNN on the CPU, cuDNN/cuBLAS on a GPU) shares: a cost table
// of known times, the policy for an instance the table lacks, and counts of what was answered,
// timed and estimated. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"
#include "runtime/cost/cost_table.h"

namespace verisub::runtime {

// What to do with an instance the table lacks.
enum class MissingCost {
  kMeasure,   // time it now and add it to the table
  kAnalytic,  // the model's analytic estimate (nothing is timed; the table is unchanged)
  kError,     // fail, naming the instance: a table that must be complete
};
StatusOr<MissingCost> ParseMissingCost(const std::string& name);  // measure|analytic|error

struct MeasureStats {
  int64_t hits = 0;       // answered from the table
  int64_t measured = 0;   // timed now
  int64_t estimated = 0;  // analytic: opaque operators, failed kernels, or MissingCost::kAnalytic
  double measure_seconds = 0;
};

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
  MeasureStats stats_;
  std::function<void()> on_measured_;
};

}  // namespace verisub::runtime
