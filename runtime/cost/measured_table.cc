// MeasuredTable: the table, the missing-entry policy and the counts of a measured cost model.
#include "runtime/cost/measured_table.h"

#include <chrono>

namespace verisub::runtime {

StatusOr<MissingCost> ParseMissingCost(const std::string& name) {
  if (name == "measure") return MissingCost::kMeasure;
  if (name == "analytic") return MissingCost::kAnalytic;
  if (name == "error") return MissingCost::kError;
  return InvalidArgument("unknown policy for missing costs '" + name +
                         "' (known: measure, analytic, error)");
}

StatusOr<double> MeasuredTable::Cached(const std::string& key,
                                       const std::function<StatusOr<double>(int* runs)>& measure,
                                       double estimate) {
  std::unique_lock<std::mutex> lock(mu_);
  if (auto t = table_.Find(key)) {
    ++stats_.hits;
    return *t;
  }
  if (missing_ == MissingCost::kAnalytic) {
    ++stats_.estimated;
    return estimate;
  }
  if (missing_ == MissingCost::kError)
    return NotFound("the cost table has no entry for '" + key +
                    "' (measure it: --cost-missing measure)");
  const auto start = std::chrono::steady_clock::now();
  int runs = 0;
  auto t = measure(&runs);
  stats_.measure_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!t.ok()) {
    ++stats_.estimated;
    return estimate;
  }
  ++stats_.measured;
  table_.Insert(key, *t * 1e6, runs);
  const double us = *table_.Find(key);
  const std::function<void()> after = on_measured_;
  lock.unlock();
  if (after) after();
  return us;
}

std::optional<double> MeasuredTable::Lookup(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto t = table_.Find(key);
  if (t) ++stats_.hits;
  return t;
}

void MeasuredTable::SetOnMeasured(std::function<void()> f) {
  std::lock_guard<std::mutex> lock(mu_);
  on_measured_ = std::move(f);
}

void MeasuredTable::CountEstimate() {
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.estimated;
}

CostTable MeasuredTable::table() const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_;
}

MeasureStats MeasuredTable::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace verisub::runtime
