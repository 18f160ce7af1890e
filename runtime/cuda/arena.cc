// Arena planning (see arena.h): greedy by size, best fit among the gaps left by the buffers
// live at the same time (the offset planning of TFLite's and ONNX Runtime's memory planners).
#include "runtime/cuda/arena.h"

#include <algorithm>
#include <numeric>

namespace verisub::runtime::cuda_backend {
namespace {

int64_t RoundUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

bool Overlap(const ArenaBuffer& a, const ArenaBuffer& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

ArenaPlan PlanArena(const std::vector<ArenaBuffer>& buffers, int64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const int64_t size = RoundUp(std::max<int64_t>(buffers[i].bytes, 1), alignment);
    std::vector<std::pair<int64_t, int64_t>> busy;  // [begin, end) of live neighbours
    for (size_t j : placed)
      if (Overlap(buffers[i], buffers[j]))
        busy.push_back(
            {plan.offsets[j],
             plan.offsets[j] + RoundUp(std::max<int64_t>(buffers[j].bytes, 1), alignment)});
    std::sort(busy.begin(), busy.end());
    int64_t best = -1, best_gap = 0, at = 0;
    for (const auto& [begin, end] : busy) {
      if (begin - at >= size && (best < 0 || begin - at < best_gap)) {
        best = at;
        best_gap = begin - at;
      }
      at = std::max(at, end);
    }
    plan.offsets[i] = best >= 0 ? best : at;
    plan.bytes = std::max(plan.bytes, plan.offsets[i] + size);
    placed.push_back(i);
  }
  return plan;
}

bool PlanIsValid(const std::vector<ArenaBuffer>& buffers, const ArenaPlan& plan) {
  if (plan.offsets.size() != buffers.size()) return false;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (plan.offsets[i] < 0 || plan.offsets[i] + buffers[i].bytes > plan.bytes) return false;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!Overlap(buffers[i], buffers[j]) || buffers[i].bytes == 0 || buffers[j].bytes == 0)
        continue;
      if (plan.offsets[i] < plan.offsets[j] + buffers[j].bytes &&
          plan.offsets[j] < plan.offsets[i] + buffers[i].bytes)
        return false;
    }
  }
  return true;
}

}  // namespace verisub::runtime::cuda_backend
