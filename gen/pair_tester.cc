// Testing same-fingerprint graphs in double and turning equal pairs into rules.
#include "gen/pair_tester.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

#include "gen/double_cache.h"
#include "specs/registry.h"

namespace verisub::gen {
namespace {

struct Member {
  int graph;                 // index into the bucket
  std::vector<int> outputs;  // output tensor ids, in the order of the class representative's
};

struct Evaluated {
  Graph graph;
  std::vector<int> outputs;
  std::vector<uint64_t> keys;                      // TermKeys
  bool connected = true;                           // the outputs form one group
  bool needed = true;                              // some pair with it may be kept
  std::vector<const DoubleCache::Values*> values;  // per tensor id, per test
};

// Maps every output of `rep` to a distinct equal output of `g`.
bool MatchOutputs(const Evaluated& rep, const Evaluated& g, double tol, std::vector<int>* order) {
  size_t n = rep.outputs.size();
  if (g.outputs.size() != n) return false;
  std::vector<bool> taken(n, false);
  order->clear();
  for (size_t i = 0; i < n; ++i) {
    bool found = false;
    for (size_t j = 0; j < n && !found; ++j) {
      if (taken[j]) continue;
      bool all = true;
      for (size_t t = 0; t < rep.values[i]->size() && all; ++t)
        all = Close((*rep.values[rep.outputs[i]])[t], (*g.values[g.outputs[j]])[t], tol);
      if (all) {
        taken[j] = true;
        order->push_back(g.outputs[j]);
        found = true;
      }
    }
    if (!found) return false;
  }
  return true;
}

bool InputsSubset(const ruledb::PatternGraph& small, const ruledb::PatternGraph& big, int n) {
  std::vector<bool> in_big(n, false);
  auto mark = [&](const ruledb::ValueRef& v, std::vector<bool>* m) {
    if (v.is_input()) (*m)[v.index] = true;
  };
  for (const auto& node : big.nodes)
    for (const auto& v : node.inputs) mark(v, &in_big);
  for (const auto& v : big.outputs) mark(v, &in_big);
  std::vector<bool> in_small(n, false);
  for (const auto& node : small.nodes)
    for (const auto& v : node.inputs) mark(v, &in_small);
  for (const auto& v : small.outputs) mark(v, &in_small);
  for (int i = 0; i < n; ++i)
    if (in_small[i] && !in_big[i]) return false;
  return true;
}

struct BucketResult {
  std::vector<std::pair<std::string, ruledb::Rule>> rules;
  PairStats stats;
};

BucketResult ProcessBucket(const SearchSpace& s, const Enumeration& e, size_t begin, size_t end,
                           DoubleCache* cache) {
  BucketResult out;
  const GenConfig& c = *s.config;
  cache->Trim();
  std::vector<Evaluated> graphs;
  for (size_t i = begin; i < end; ++i) {
    const GraphEntry& ge = e.graphs[i];
    Evaluated ev;
    ev.graph = DecodeGraph(e.arenas[ge.task].data() + ge.offset);
    ev.outputs = GraphOutputs(s, ev.graph);
    ev.keys = TermKeys(s, ev.graph);
    ev.connected = CountOutputGroups(OutputOpSets(s, ev.graph, ev.outputs), {}) == 1;
    graphs.push_back(std::move(ev));
  }
  if (c.drop_composite_pairs) {
    // A pair can only be kept if one side is connected and no output term is on both sides.
    auto shares_output = [&](const Evaluated& x, const Evaluated& y) {
      for (int i : x.outputs)
        for (int j : y.outputs)
          if (x.keys[i] == y.keys[j]) return true;
      return false;
    };
    for (size_t g = 0; g < graphs.size(); ++g) {
      bool needed = false;
      for (size_t h = 0; h < graphs.size() && !needed; ++h)
        needed = h != g && (graphs[g].connected || graphs[h].connected) &&
                 !shares_output(graphs[g], graphs[h]);
      graphs[g].needed = needed;
    }
    std::vector<Evaluated> kept;
    for (Evaluated& ev : graphs)
      if (ev.needed) kept.push_back(std::move(ev));
    out.stats.graphs_not_evaluated = graphs.size() - kept.size();
    graphs = std::move(kept);
  }
  for (Evaluated& ev : graphs) ev.values = cache->Evaluate(ev.graph, ev.keys);
  // Output i of x and of y are the same operator applied to equal inputs: implied by the
  // (smaller) equalities of the inputs.
  const int num_initial = static_cast<int>(s.initial.size());
  auto same_values = [&](const Evaluated& x, int tx, const Evaluated& y, int ty) {
    for (size_t t = 0; t < x.values[tx]->size(); ++t)
      if (!Close((*x.values[tx])[t], (*y.values[ty])[t], c.tolerance)) return false;
    return true;
  };
  auto congruent = [&](const Evaluated& x, int tx, const Evaluated& y, int ty) {
    if (tx < num_initial || ty < num_initial || (tx - ty) % 2 != 0) return false;
    const GraphOp& ox = x.graph.ops[(tx - num_initial) / 2];
    const GraphOp& oy = y.graph.ops[(ty - num_initial) / 2];
    if (ox.inst != oy.inst) return false;
    const specs::OpSpec& op = specs::GetOp(c.ops[ox.inst].kind);
    // Operands in the same positions only: equal operands swapped would rest on
    // commutativity, which is not a smaller candidate.
    for (int i = 0; i < op.num_inputs; ++i) {
      const int a = ox.in[i], b = oy.in[i];
      if (!same_values(x, a, y, b)) return false;
      // A computed operand equal to an initial tensor is a smaller rule only through an
      // identity graph, and there are identity graphs for inputs only.
      if ((a < num_initial) != (b < num_initial)) {
        const int t = a < num_initial ? a : b;
        if (!c.identity_graphs || !s.initial[t].is_input) return false;
      }
    }
    return true;
  };
  std::vector<std::vector<Member>> classes;
  std::vector<int> order;
  for (size_t g = 0; g < graphs.size(); ++g) {
    bool placed = false;
    for (auto& cl : classes) {
      if (MatchOutputs(graphs[cl[0].graph], graphs[g], c.tolerance, &order)) {
        cl.push_back({static_cast<int>(g), order});
        placed = true;
        break;
      }
    }
    if (!placed) {
      if (!classes.empty()) ++out.stats.double_mismatches;
      classes.push_back({{static_cast<int>(g), graphs[g].outputs}});
    }
  }
  out.stats.classes = classes.size();
  auto try_pair = [&](const Member& x, const Member& y) {
    ++out.stats.pairs;
    const Graph& gx = graphs[x.graph].graph;
    const Graph& gy = graphs[y.graph].graph;
    if (c.drop_composite_pairs) {
      for (size_t i = 0; i < x.outputs.size(); ++i)
        if (graphs[x.graph].keys[x.outputs[i]] == graphs[y.graph].keys[y.outputs[i]]) {
          ++out.stats.common_output_pairs;
          return;
        }
      bool all_congruent = true;
      for (size_t i = 0; i < x.outputs.size() && all_congruent; ++i)
        all_congruent = congruent(graphs[x.graph], x.outputs[i], graphs[y.graph], y.outputs[i]);
      if (all_congruent) {
        ++out.stats.congruent_pairs;
        return;
      }
      if (x.outputs.size() > 1 &&
          CountOutputGroups(OutputOpSets(s, gx, x.outputs), OutputOpSets(s, gy, y.outputs)) > 1) {
        ++out.stats.decomposable_pairs;
        return;
      }
    }
    auto rule = MakeRule(s, gx, x.outputs, gy, y.outputs);
    if (!rule) {
      ++out.stats.unorientable_pairs;
      return;
    }
    std::string text = rule->ToText();
    size_t arrow = text.find(" => ");
    if (text.compare(0, arrow, text, arrow + 4, std::string::npos) == 0) {
      ++out.stats.trivial_pairs;
      return;
    }
    out.rules.emplace_back(std::move(text), std::move(*rule));
  };
  for (const auto& cl : classes) {
    out.stats.largest_class = std::max<uint64_t>(out.stats.largest_class, cl.size());
    if (c.all_pairs) {
      for (size_t p = 0; p < cl.size(); ++p)
        for (size_t q = p + 1; q < cl.size(); ++q) try_pair(cl[p], cl[q]);
      continue;
    }
    size_t center = 0;  // the smallest graph, the first among equals
    for (size_t m = 1; m < cl.size(); ++m)
      if (graphs[cl[m].graph].graph.ops.size() < graphs[cl[center].graph].graph.ops.size())
        center = m;
    for (size_t m = 0; m < cl.size(); ++m)
      if (m != center) try_pair(cl[center], cl[m]);
  }
  return out;
}

void AddPairStats(const PairStats& from, PairStats* to) {
  to->graphs_not_evaluated += from.graphs_not_evaluated;
  to->classes += from.classes;
  to->double_mismatches += from.double_mismatches;
  to->largest_class = std::max(to->largest_class, from.largest_class);
  to->pairs += from.pairs;
  to->trivial_pairs += from.trivial_pairs;
  to->common_output_pairs += from.common_output_pairs;
  to->decomposable_pairs += from.decomposable_pairs;
  to->congruent_pairs += from.congruent_pairs;
  to->unorientable_pairs += from.unorientable_pairs;
}

}  // namespace

bool Close(const specs::Tensor<double>& x, const specs::Tensor<double>& y, double tolerance) {
  if (!(x.type == y.type) || x.data.size() != y.data.size()) return false;
  for (size_t i = 0; i < x.data.size(); ++i) {
    double a = x.data[i], b = y.data[i];
    double scale = std::max({1.0, std::fabs(a), std::fabs(b)});
    if (!(std::fabs(a - b) <= tolerance * scale)) return false;
  }
  return true;
}

std::optional<ruledb::Rule> MakeRule(const SearchSpace& s, const Graph& a,
                                     const std::vector<int>& a_outputs, const Graph& b,
                                     const std::vector<int>& b_outputs) {
  const int n = static_cast<int>(s.config->inputs.size());
  ruledb::PatternGraph pa = ToPattern(s, a, a_outputs), pb = ToPattern(s, b, b_outputs);
  std::optional<ruledb::Rule> best;
  std::string best_text;
  std::vector<int> perm(a_outputs.size());
  for (int side = 0; side < 2; ++side) {
    const ruledb::PatternGraph& src = side == 0 ? pa : pb;
    const ruledb::PatternGraph& dst = side == 0 ? pb : pa;
    if (!InputsSubset(dst, src, n)) continue;
    std::iota(perm.begin(), perm.end(), 0);
    // Output order is not part of a rule's meaning: pick the order with the smallest text.
    const bool permute = perm.size() <= 4;
    do {
      ruledb::Rule r;
      r.num_inputs = n;
      r.src = src;
      r.dst = dst;
      for (size_t i = 0; i < perm.size(); ++i) {
        r.src.outputs[i] = src.outputs[perm[i]];
        r.dst.outputs[i] = dst.outputs[perm[i]];
      }
      ruledb::Rule canon = ruledb::Canonicalize(r);
      std::string text = canon.ToText();
      if (!best || text < best_text) {
        best = std::move(canon);
        best_text = std::move(text);
      }
    } while (permute && std::next_permutation(perm.begin(), perm.end()));
  }
  return best;
}

Candidates TestPairs(const SearchSpace& s, const Enumeration& e, int threads,
                     ProgressCounters* progress) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  Candidates out;
  std::vector<std::pair<size_t, size_t>> buckets;
  for (size_t i = 0; i < e.graphs.size();) {
    size_t j = i + 1;
    while (j < e.graphs.size() && e.graphs[j].fingerprint == e.graphs[i].fingerprint) ++j;
    ++out.stats.distinct_fingerprints;
    if (j - i >= 2) {
      buckets.emplace_back(i, j);
      out.stats.graphs_in_buckets += j - i;
      out.stats.largest_bucket = std::max<uint64_t>(out.stats.largest_bucket, j - i);
    }
    i = j;
  }
  out.stats.buckets = buckets.size();
  if (progress) progress->buckets_total = buckets.size();

  // Fixed chunks of buckets (not one result per bucket, which would cost memory; not per
  // thread, which would make the merge order depend on scheduling).
  constexpr size_t kChunk = 512;
  const size_t num_chunks = (buckets.size() + kChunk - 1) / kChunk;
  std::vector<BucketResult> results(num_chunks);
  tbb::enumerable_thread_specific<DoubleCache> caches([&] { return DoubleCache(s, 30000); });
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, num_chunks, 1), [&](const tbb::blocked_range<size_t>& range) {
        for (size_t ch = range.begin(); ch != range.end(); ++ch) {
          BucketResult& res = results[ch];
          size_t end = std::min(buckets.size(), (ch + 1) * kChunk);
          for (size_t b = ch * kChunk; b < end; ++b) {
            BucketResult r =
                ProcessBucket(s, e, buckets[b].first, buckets[b].second, &caches.local());
            AddPairStats(r.stats, &res.stats);
            for (auto& pr : r.rules) res.rules.push_back(std::move(pr));
          }
          if (progress) {
            progress->buckets_done += end - ch * kChunk;
            progress->candidates += res.rules.size();
          }
        }
      });

  std::vector<std::pair<std::string, ruledb::Rule>> all;
  for (BucketResult& r : results) {
    AddPairStats(r.stats, &out.stats);
    for (auto& pr : r.rules) all.push_back(std::move(pr));
    std::vector<std::pair<std::string, ruledb::Rule>>().swap(r.rules);
  }
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  all.erase(std::unique(all.begin(), all.end(),
                        [](const auto& x, const auto& y) { return x.first == y.first; }),
            all.end());
  out.rules.reserve(all.size());
  for (auto& pr : all) out.rules.push_back(std::move(pr.second));
  out.stats.candidates = out.rules.size();
  return out;
}

}  // namespace verisub::gen
