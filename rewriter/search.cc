// The backtracking search loop.
#include "rewriter/search.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <unordered_set>

#include "rewriter/graph_hash.h"
#include "rewriter/matcher.h"

namespace verisub::rewriter {

using runtime::Graph;

const char* StopReasonName(StopReason r) {
  switch (r) {
    case StopReason::kQueueEmpty:
      return "queue_empty";
    case StopReason::kBudget:
      return "budget";
    case StopReason::kTimeLimit:
      return "time_limit";
  }
  return "?";
}

int64_t PeakRssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    return std::strtoll(line.c_str() + 6, nullptr, 10) * 1024;
  }
  return 0;
}

void ResetPeakRss() {
  std::ofstream out("/proc/self/clear_refs");
  if (out) out << "5";  // resets VmHWM to the current RSS (Linux 4.0+)
}

namespace {

// One rewrite step of a derivation; steps are shared between a graph and its descendants.
struct Derivation {
  int rule = -1;
  std::shared_ptr<const Derivation> parent;
};

struct Entry {
  double cost = 0;
  uint64_t hash = 0;
  int64_t seq = 0;  // generation order: the last tie breaker
  std::shared_ptr<const Graph> graph;
  std::shared_ptr<const Derivation> derivation;
  bool operator<(const Entry& o) const {
    if (cost != o.cost) return cost < o.cost;
    if (hash != o.hash) return hash < o.hash;
    return seq < o.seq;
  }
};

}  // namespace

StatusOr<Graph> Search(const Graph& g, const RuleSet& rules, const runtime::CostModel& cost_model,
                       const SearchOptions& options, SearchReport* report) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  *report = SearchReport();
  ResetPeakRss();
  CostEvaluator cost(&cost_model);
  GraphHasher hasher;
  auto initial_cost = cost.GraphCost(g);
  if (!initial_cost.ok()) return initial_cost.status();

  int64_t seq = 0;
  Entry best{*initial_cost, hasher.Hash(g), seq++, std::make_shared<const Graph>(g), nullptr};
  std::set<Entry> queue{best};
  std::unordered_set<uint64_t> seen{best.hash};
  report->cost_before_us = best.cost;
  report->stop = StopReason::kQueueEmpty;
  bool out_of_time = false;

  while (!queue.empty() && !out_of_time) {
    if (report->graphs_explored >= options.budget) {
      report->stop = StopReason::kBudget;
      break;
    }
    Entry cur = *queue.begin();
    queue.erase(queue.begin());
    ++report->graphs_explored;
    const Graph& cg = *cur.graph;
    GraphIndex index(cg);
    for (int r = 0; r < rules.size() && !out_of_time; ++r) {
      for (const Match& m : FindMatches(cg, index, rules, r)) {
        if (options.time_limit_s > 0 && elapsed() > options.time_limit_s) {
          out_of_time = true;
          break;
        }
        ++report->matches;
        ApplyResult res = ApplyMatch(cg, index, rules, m, &cost, options.apply,
                                     options.alpha * best.cost - cur.cost);
        if (res.rejected == RejectReason::kCostLimit) {
          ++report->pruned_by_alpha;
          continue;
        }
        if (res.rejected != RejectReason::kNone) {
          ++report->rejected[static_cast<int>(res.rejected)];
          continue;
        }
        ++report->graphs_generated;
        report->weight_only_nodes += res.weight_only_nodes;
        double c = cur.cost + res.cost_delta;
        if (c >= options.alpha * best.cost) {
          ++report->pruned_by_alpha;
          continue;
        }
        uint64_t h = hasher.Hash(res.graph);
        if (!seen.insert(h).second) {
          ++report->duplicates;
          continue;
        }
        Entry e{c, h, seq++, std::make_shared<const Graph>(std::move(res.graph)),
                std::make_shared<const Derivation>(Derivation{r, cur.derivation})};
        if (e.cost < best.cost) best = e;
        queue.insert(std::move(e));
        if (static_cast<int>(queue.size()) > options.max_queue) {
          queue.erase(std::prev(queue.end()));
          ++report->dropped_queue_full;
        }
      }
    }
  }
  if (out_of_time) report->stop = StopReason::kTimeLimit;

  std::map<int, int> counts;
  for (const Derivation* d = best.derivation.get(); d; d = d->parent.get()) {
    ++counts[d->rule];
    ++report->rewrite_steps;
  }
  for (const auto& [r, n] : counts)
    report->rules_applied.push_back({rules.rule(r).id, rules.rule(r).text, n});
  std::sort(report->rules_applied.begin(), report->rules_applied.end(),
            [](const RuleUse& a, const RuleUse& b) {
              return a.count != b.count ? a.count > b.count : a.id < b.id;
            });
  Graph result = *best.graph;
  VERISUB_RETURN_IF_ERROR(FinalizeGraph(&result));
  // The reported cost is recomputed from scratch, not accumulated along the derivation.
  auto final_cost = cost.GraphCost(result);
  if (!final_cost.ok()) return final_cost.status();
  report->cost_after_us = *final_cost;
  report->seconds = elapsed();
  report->peak_rss_bytes = PeakRssBytes();
  return result;
}

}  // namespace verisub::rewriter
