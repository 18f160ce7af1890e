// The backtracking search loop.
#include "rewriter/search.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <unordered_set>

#include "base/process_stats.h"
#include "rewriter/graph_key.h"
#include "rewriter/matcher.h"
#include "runtime/graph_hash.h"
#include "specs/registry.h"

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
    case StopReason::kNoImprovement:
      return "no_improvement";
  }
  return "?";
}

namespace {

// One rewrite step of a derivation; steps are shared between a graph and its descendants.
struct Derivation {
  int rule = -1;
  std::shared_ptr<const Derivation> parent;
};

// A graph taken from the queue and expanded; kept while candidates derived from it wait.
struct Expanded {
  Expanded(std::shared_ptr<const Graph> g, GraphKeys k, double c)
      : graph(std::move(g)), index(*graph), keys(std::move(k)), cost(c) {}
  std::shared_ptr<const Graph> graph;
  GraphIndex index;
  GraphKeys keys;
  double cost;  // its candidates' costs are this plus their deltas
};

// A queue entry is a delta: the graph its parent becomes when `match` is applied. Its cost is
// exact (RewritePlanner) when nodes are priced independently, so the queue orders candidates
// without building them; only the graphs taken from the queue are built, hashed and
// deduplicated. When the cost model prices fusion (CostModel::PricesFusion), a rewrite can change
// the cost of nodes it does not touch (a convolution's activation no longer fused): the delta
// then only orders the queue, and every graph built is priced whole before it can become the
// best or the base of its own candidates.
struct Entry {
  double cost = 0;
  int64_t seq = 0;                         // generation order: the tie breaker
  uint64_t key = 0;                        // GraphKeys::key() of the graph it stands for
  std::shared_ptr<const Expanded> parent;  // null: the input graph itself
  Match match;
  std::shared_ptr<const Derivation> derivation;
  bool operator<(const Entry& o) const {
    if (cost != o.cost) return cost < o.cost;
    return seq < o.seq;
  }
};

struct Best {
  double cost = 0;
  std::shared_ptr<const Graph> graph;
  std::shared_ptr<const Derivation> derivation;
};

}  // namespace

StatusOr<Graph> Search(Graph g, const RuleSet& rules, const runtime::CostModel& cost_model,
                       const SearchOptions& options, SearchReport* report) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  // Search time: wall time less the time the cost model spent timing kernels (once per machine).
  const double measuring_at_start = cost_model.SecondsMeasuring();
  auto elapsed = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count() -
           (cost_model.SecondsMeasuring() - measuring_at_start);
  };
  *report = SearchReport();
  CostEvaluator cost(&cost_model);
  const bool whole_graph_costs = cost_model.PricesFusion() || options.graph_cost != nullptr;
  // A built graph's cost: the caller's scorer, else the cost model's whole-graph sum.
  auto whole_cost = [&](const Graph& graph) {
    return options.graph_cost ? options.graph_cost(graph) : cost.GraphCost(graph);
  };
  runtime::GraphHasher hasher({.commutative = true});
  auto initial_cost = whole_cost(g);
  if (!initial_cost.ok()) return initial_cost.status();

  int64_t seq = 0;
  GraphKeys initial_keys = GraphKeys::ForInput(g);
  auto initial = std::make_shared<const Graph>(std::move(g));
  Best best{*initial_cost, initial, nullptr};
  std::set<Entry> queue{Entry{best.cost, seq++, initial_keys.key(), nullptr, Match(), nullptr}};
  std::unordered_set<uint64_t> seen;  // structural hashes of the graphs built
  // Keys (GraphKeys) of the graphs queued, expanded or built: a candidate with one of them is
  // the same graph again and is neither queued nor built.
  std::unordered_set<uint64_t> queued_keys{initial_keys.key()};
  report->cost_before_us = best.cost;
  report->stop = StopReason::kQueueEmpty;

  // Builds the graph of a queue entry; null when the rewrite is rejected (cycle, consumers) or
  // the graph was seen before.
  auto materialize = [&](const Entry& e) -> std::shared_ptr<const Expanded> {
    std::shared_ptr<const Graph> graph = initial;
    GraphKeys keys = initial_keys;
    if (e.parent) {
      const Expanded& p = *e.parent;
      RewritePlanner planner(*p.graph, p.index, rules, &cost, options.apply);
      const RewritePlan& plan = planner.Plan(e.match);
      if (plan.rejected != RejectReason::kNone) {  // as when it was queued: a cost-model error
        ++report->rejected[static_cast<int>(plan.rejected)];
        return nullptr;
      }
      ApplyResult res = BuildRewrite(*p.graph, p.index, e.match, plan);
      if (res.rejected != RejectReason::kNone) {
        ++report->rejected[static_cast<int>(res.rejected)];
        return nullptr;
      }
      graph = std::make_shared<const Graph>(std::move(res.graph));
      keys = p.keys.ForChild(*p.graph, plan, *graph);
    }
    if (!seen.insert(hasher.Hash(*graph)).second) {
      ++report->duplicates;
      return nullptr;
    }
    double graph_cost = e.cost;
    if (whole_graph_costs) {
      auto c = whole_cost(*graph);
      if (!c.ok()) {
        ++report->rejected[static_cast<int>(RejectReason::kCost)];
        return nullptr;
      }
      graph_cost = *c;
    }
    if (graph_cost < best.cost) best = Best{graph_cost, graph, e.derivation};
    return std::make_shared<const Expanded>(graph, std::move(keys), graph_cost);
  };

  bool out_of_time = false;
  int since_improvement = 0;  // graphs expanded since the best cost last fell by enough
  double best_seen = best.cost;
  while (!queue.empty()) {
    if (report->graphs_explored >= options.budget) {
      report->stop = StopReason::kBudget;
      break;
    }
    // Out of patience, and no queued candidate promises a gain that would count either.
    if (options.patience > 0 && since_improvement >= options.patience &&
        queue.begin()->cost >= (1 - options.min_gain / 4) * best_seen) {
      report->stop = StopReason::kNoImprovement;
      break;
    }
    if (options.time_limit_s > 0 && elapsed() > options.time_limit_s) out_of_time = true;
    if (out_of_time) break;
    Entry cur = std::move(queue.extract(queue.begin()).value());
    std::shared_ptr<const Expanded> expanded = materialize(cur);
    if (!expanded) continue;
    ++report->graphs_explored;
    if (best.cost < (1 - options.min_gain / 4) * best_seen) {
      best_seen = best.cost;
      since_improvement = 0;
    } else {
      ++since_improvement;
    }
    const std::shared_ptr<const Graph>& graph = expanded->graph;
    auto node_costs = cost.NodeCosts(*graph);
    if (!node_costs.ok()) return node_costs.status();
    RewritePlanner planner(*graph, expanded->index, rules, &cost, options.apply, &*node_costs);
    std::vector<Match> matches;
    for (int gn = 0; gn < graph->num_nodes() && !out_of_time; ++gn) {
      matches.clear();
      FindMatchesRootedAt(*graph, expanded->index, rules, gn, &matches);
      for (Match& m : matches) {
        if (options.time_limit_s > 0 && elapsed() > options.time_limit_s) {
          out_of_time = true;
          break;
        }
        ++report->matches;
        // A full queue keeps only candidates cheaper than its costliest entry: tell the plan,
        // so that a candidate headed for the bin is not even finished.
        const double alpha_limit = options.alpha * best.cost - expanded->cost;
        double limit = alpha_limit;
        if (static_cast<int>(queue.size()) >= options.max_queue)
          limit = std::min(limit, std::prev(queue.end())->cost - expanded->cost);
        const RewritePlan& plan = planner.Plan(m, limit);
        if (plan.rejected == RejectReason::kCostLimit) {
          if (plan.cost_delta < alpha_limit) {
            ++report->dropped_queue_full;
          } else {
            ++report->pruned_by_alpha;
          }
          continue;
        }
        if (plan.rejected != RejectReason::kNone) {
          ++report->rejected[static_cast<int>(plan.rejected)];
          continue;
        }
        const uint64_t key = expanded->keys.KeyAfter(*graph, expanded->index, plan);
        if (!queued_keys.insert(key).second) {
          ++report->duplicates;
          continue;
        }
        ++report->graphs_generated;
        report->weight_only_nodes += plan.weight_only_nodes;
        const int rule = m.rule;
        queue.insert(Entry{expanded->cost + plan.cost_delta, seq++, key, expanded, std::move(m),
                           std::make_shared<const Derivation>(Derivation{rule, cur.derivation})});
        if (static_cast<int>(queue.size()) > options.max_queue) {
          queued_keys.erase(std::prev(queue.end())->key);
          queue.erase(std::prev(queue.end()));
          ++report->dropped_queue_full;
        }
      }
    }
  }
  if (out_of_time) report->stop = StopReason::kTimeLimit;
  // Candidates cheaper than the best graph may still wait unbuilt: the cheapest one that builds
  // is the result, as if every candidate had been built when it was generated.
  while (!queue.empty() && queue.begin()->cost < best.cost) {
    if (materialize(queue.extract(queue.begin()).value())) break;
  }
  // A gain within the costs' noise is none: the input stands.
  if (best.derivation && best.cost > (1 - options.min_gain) * *initial_cost)
    best = Best{*initial_cost, initial, nullptr};

  std::map<int, int> counts;
  for (const Derivation* d = best.derivation.get(); d; d = d->parent.get()) {
    ++counts[d->rule];
    ++report->rewrite_steps;
  }
  for (const auto& [r, n] : counts)
    report->rules_applied.push_back({rules.rule(r).id, rules.rule(r).Text(), n});
  std::sort(report->rules_applied.begin(), report->rules_applied.end(),
            [](const RuleUse& a, const RuleUse& b) {
              return a.count != b.count ? a.count > b.count : a.id < b.id;
            });
  Graph result = *best.graph;
  // Only the result holds weights now: those folding replaces are freed as it goes.
  queue.clear();
  best = Best();
  initial.reset();
  VERISUB_RETURN_IF_ERROR(FinalizeGraph(&result));
  // The reported cost is recomputed from scratch, not accumulated along the derivation.
  auto final_cost = whole_cost(result);
  if (!final_cost.ok()) return final_cost.status();
  report->cost_after_us = *final_cost;
  report->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  report->measure_seconds = cost_model.SecondsMeasuring() - measuring_at_start;
  report->peak_rss_bytes = base::PeakRssBytes();
  return result;
}

}  // namespace verisub::rewriter
