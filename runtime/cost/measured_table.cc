// MeasuredTable: the table, the missing-entry policy and the counts of a measured cost model.
#include "runtime/cost/measured_table.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

namespace verisub::runtime {

StatusOr<MissingCost> ParseMissingCost(const std::string& name) {
  if (name == "measure") return MissingCost::kMeasure;
  if (name == "analytic") return MissingCost::kAnalytic;
  if (name == "error") return MissingCost::kError;
  return InvalidArgument("unknown policy for missing costs '" + name +
                         "' (known: measure, analytic, error)");
}

KeyShapes SplitKeyShapes(const std::string& key) {
  KeyShapes k;
  const size_t arrow = key.find("->");
  double all = 0, after = 0;
  size_t i = 0, last_close = std::string::npos;
  while (i < key.size()) {
    // A shape follows a space or another shape and a comma (a parameter's list follows '=').
    const bool shape_place =
        i > 0 && (key[i - 1] == ' ' ||
                  (key[i - 1] == ',' && last_close != std::string::npos && last_close + 2 == i));
    const size_t close = key[i] == '[' && shape_place ? key.find(']', i) : std::string::npos;
    std::vector<int64_t> dims;
    bool list = close != std::string::npos;
    for (size_t p = i + 1; list && p < close;) {  // integers separated by commas
      char* end = nullptr;
      const long long d = std::strtoll(key.c_str() + p, &end, 10);
      const size_t q = static_cast<size_t>(end - key.c_str());
      list = q > p && q <= close && (q == close || key[q] == ',') && key[p] != ' ' && key[p] != '+';
      dims.push_back(d);
      p = q + 1;
    }
    if (!list) {
      k.form += key[i++];
      continue;
    }
    double elements = 1;
    for (int64_t d : dims) elements *= static_cast<double>(std::max<int64_t>(d, 1));
    all += elements;
    if (arrow != std::string::npos && i > arrow) after += elements;
    k.form += "[#" + std::to_string(dims.size()) + "]";
    k.dims.insert(k.dims.end(), dims.begin(), dims.end());
    last_close = close;
    i = close + 1;
  }
  k.size = arrow != std::string::npos && after > 0 ? after : all;
  return k;
}

std::optional<double> ScaledFromNearestShape(const CostTable& table, const std::string& key,
                                             ShapeIndex* index) {
  if (index->table_size != table.size()) {
    index->by_form.clear();
    for (const auto& [k, e] : table.entries()) {
      KeyShapes s = SplitKeyShapes(k);
      if (s.dims.empty() || s.size <= 0) continue;
      std::string form = s.form;
      index->by_form[form].emplace_back(std::move(s), e.time_us);
    }
    index->table_size = table.size();
  }
  const KeyShapes want = SplitKeyShapes(key);
  auto it = index->by_form.find(want.form);
  if (want.dims.empty() || want.size <= 0 || it == index->by_form.end()) return std::nullopt;
  const std::pair<KeyShapes, double>* best = nullptr;
  size_t best_differ = 0;
  double best_apart = 0;
  for (const auto& entry : it->second) {  // in key order: ties go to the first key
    size_t differ = 0;
    for (size_t d = 0; d < want.dims.size(); ++d) differ += entry.first.dims[d] != want.dims[d];
    const double apart = std::fabs(std::log(want.size / entry.first.size));
    if (!best || differ < best_differ || (differ == best_differ && apart < best_apart)) {
      best = &entry;
      best_differ = differ;
      best_apart = apart;
    }
  }
  return best->second * want.size / best->first.size;
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
    if (auto scaled = ScaledFromNearestShape(table_, key, &shapes_)) {
      ++stats_.scaled;
      return *scaled;
    }
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
