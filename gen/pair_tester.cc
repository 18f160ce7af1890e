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
#include "gen/enumeration_order.h"
#include "gen/graph_terms.h"
#include "specs/registry.h"

namespace verisub::gen {
namespace {

// Per thread: terms kept in double across buckets.
constexpr size_t kDoubleCacheBytes = size_t{128} << 20;

// One graph of a bucket.
struct Evaluated {
  Graph graph;
  OutputList outputs;
  uint64_t op_keys[kMaxGraphOutputs];  // OpTermKeys
  bool connected = true;               // the outputs form one group
  EnumerationOrder::Key order;
  const DoubleCache::Values* op_values[kMaxGraphOutputs];
};

struct Member {
  int graph;  // index into the bucket's evaluated graphs
  // Output tensor ids, in the order of the class representative's outputs.
  std::array<uint8_t, kMaxGraphOutputs> outputs;
};

struct PartitionResult {
  std::vector<std::string> texts;
  PairStats stats;
};

void AddPairStats(const PairStats& from, PairStats* to) {
  to->distinct_fingerprints += from.distinct_fingerprints;
  to->buckets += from.buckets;
  to->graphs_in_buckets += from.graphs_in_buckets;
  to->largest_bucket = std::max(to->largest_bucket, from.largest_bucket);
  to->graphs_not_evaluated += from.graphs_not_evaluated;
  to->terms_evaluated += from.terms_evaluated;
  to->terms_reused += from.terms_reused;
  to->classes += from.classes;
  to->double_mismatches += from.double_mismatches;
  to->largest_class = std::max(to->largest_class, from.largest_class);
  to->pairs += from.pairs;
  to->trivial_pairs += from.trivial_pairs;
  to->common_output_pairs += from.common_output_pairs;
  to->decomposable_pairs += from.decomposable_pairs;
  to->congruent_pairs += from.congruent_pairs;
  to->unorientable_pairs += from.unorientable_pairs;
  to->rules_before_dedup += from.rules_before_dedup;
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

// Tests the buckets of one thread; keeps its double cache and scratch space across buckets.
class BucketTester {
 public:
  explicit BucketTester(const SearchSpace& s)
      : s_(s), c_(*s.config), cache_(s, kDoubleCacheBytes), order_(s) {}

  // Graphs [begin, end) of `e` share a fingerprint.
  void Process(const Enumeration& e, size_t begin, size_t end, PartitionResult* out);

 private:
  const DoubleCache::Values* Value(const Evaluated& g, int id) const {
    return id < num_initial() ? cache_.Initial(id) : g.op_values[id - num_initial()];
  }
  int num_initial() const { return static_cast<int>(s_.initial.size()); }
  uint64_t Key(const Evaluated& g, int id) const { return TermKey(s_, g.op_keys, id); }
  bool SameValues(const Evaluated& x, int tx, const Evaluated& y, int ty) const;
  bool MatchOutputs(const Evaluated& rep, const Evaluated& g, Member* m) const;
  bool Congruent(const Evaluated& x, int tx, const Evaluated& y, int ty) const;
  void TryPair(const Member& x, const Member& y, PartitionResult* out);

  const SearchSpace& s_;
  const GenConfig& c_;
  DoubleCache cache_;
  EnumerationOrder order_;
  std::vector<Evaluated> graphs_;  // scratch, reused across buckets
  std::vector<int> kept_;
  std::vector<std::vector<Member>> classes_;
};

bool BucketTester::SameValues(const Evaluated& x, int tx, const Evaluated& y, int ty) const {
  const DoubleCache::Values& a = *Value(x, tx);
  const DoubleCache::Values& b = *Value(y, ty);
  for (size_t t = 0; t < a.size(); ++t)
    if (!Close(a[t], b[t], c_.tolerance)) return false;
  return true;
}

// Maps every output of `rep` to a distinct equal output of `g`.
bool BucketTester::MatchOutputs(const Evaluated& rep, const Evaluated& g, Member* m) const {
  const int n = rep.outputs.size;
  if (g.outputs.size != n) return false;
  bool taken[kMaxGraphOutputs] = {};
  for (int i = 0; i < n; ++i) {
    bool found = false;
    for (int j = 0; j < n && !found; ++j) {
      if (taken[j] || !SameValues(rep, rep.outputs.ids[i], g, g.outputs.ids[j])) continue;
      taken[j] = true;
      m->outputs[i] = g.outputs.ids[j];
      found = true;
    }
    if (!found) return false;
  }
  return true;
}

// Output tx of x and ty of y are the same operator applied to equal inputs: implied by the
// (smaller) equalities of the inputs.
bool BucketTester::Congruent(const Evaluated& x, int tx, const Evaluated& y, int ty) const {
  const int ni = num_initial();
  if (tx < ni || ty < ni || (tx - ty) % 2 != 0) return false;
  const GraphOp& ox = x.graph.ops[(tx - ni) / 2];
  const GraphOp& oy = y.graph.ops[(ty - ni) / 2];
  if (ox.inst != oy.inst) return false;
  // Operands in the same positions only: equal operands swapped would rest on commutativity,
  // which is not a smaller candidate.
  for (int i = 0; i < ox.arity(); ++i) {
    const int a = ox.in[i], b = oy.in[i];
    if (!SameValues(x, a, y, b)) return false;
    // A computed operand equal to an initial tensor is a smaller rule only through an identity
    // graph, and there are identity graphs for inputs only.
    if ((a < ni) != (b < ni)) {
      const int t = a < ni ? a : b;
      if (!c_.identity_graphs || !s_.initial[t].is_input) return false;
    }
  }
  return true;
}

void BucketTester::TryPair(const Member& x, const Member& y, PartitionResult* out) {
  PairStats& st = out->stats;
  ++st.pairs;
  const Evaluated& ex = graphs_[x.graph];
  const Evaluated& ey = graphs_[y.graph];
  const int n = ex.outputs.size;
  if (c_.drop_composite_pairs) {
    for (int i = 0; i < n; ++i)
      if (Key(ex, x.outputs[i]) == Key(ey, y.outputs[i])) {
        ++st.common_output_pairs;
        return;
      }
    bool all_congruent = true;
    for (int i = 0; i < n && all_congruent; ++i)
      all_congruent = Congruent(ex, x.outputs[i], ey, y.outputs[i]);
    if (all_congruent) {
      ++st.congruent_pairs;
      return;
    }
    if (n > 1) {
      uint32_t sx[kMaxGraphOutputs], sy[kMaxGraphOutputs];
      OutputOpSets(s_, ex.graph, x.outputs.data(), n, sx);
      OutputOpSets(s_, ey.graph, y.outputs.data(), n, sy);
      if (CountOutputGroups(sx, sy, n) > 1) {
        ++st.decomposable_pairs;
        return;
      }
    }
  }
  auto text = RuleText(s_, ex.graph, {x.outputs.begin(), x.outputs.begin() + n}, ey.graph,
                       {y.outputs.begin(), y.outputs.begin() + n});
  if (!text) {
    ++st.unorientable_pairs;
    return;
  }
  size_t arrow = text->find(" => ");
  if (text->compare(0, arrow, *text, arrow + 4, std::string::npos) == 0) {
    ++st.trivial_pairs;
    return;
  }
  ++st.rules_before_dedup;
  out->texts.push_back(std::move(*text));
}

void BucketTester::Process(const Enumeration& e, size_t begin, size_t end, PartitionResult* out) {
  PairStats& st = out->stats;
  cache_.Trim();
  const size_t n = end - begin;
  graphs_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Evaluated& ev = graphs_[i];
    ev.graph = e.codec.Decode(e.graphs[begin + i].code, e.arenas);
    ev.outputs = GraphOutputs(s_, ev.graph);
    OpTermKeys(s_, ev.graph, ev.op_keys);
    uint32_t sets[kMaxGraphOutputs];
    OutputOpSets(s_, ev.graph, ev.outputs.ids.data(), ev.outputs.size, sets);
    ev.connected = CountOutputGroups(sets, nullptr, ev.outputs.size) == 1;
  }
  kept_.clear();
  if (c_.drop_composite_pairs) {
    // A pair can only be kept if one side is connected and no output term is on both sides.
    auto shares_output = [&](const Evaluated& x, const Evaluated& y) {
      for (int i = 0; i < x.outputs.size; ++i)
        for (int j = 0; j < y.outputs.size; ++j)
          if (Key(x, x.outputs.ids[i]) == Key(y, y.outputs.ids[j])) return true;
      return false;
    };
    for (size_t g = 0; g < n; ++g) {
      bool needed = false;
      for (size_t h = 0; h < n && !needed; ++h)
        needed = h != g && (graphs_[g].connected || graphs_[h].connected) &&
                 !shares_output(graphs_[g], graphs_[h]);
      if (needed) kept_.push_back(static_cast<int>(g));
    }
    st.graphs_not_evaluated += n - kept_.size();
  } else {
    for (size_t g = 0; g < n; ++g) kept_.push_back(static_cast<int>(g));
  }
  if (kept_.empty()) return;
  // Classes and centers follow the order in which the enumeration built the graphs.
  for (int g : kept_) graphs_[g].order = order_.KeyOf(graphs_[g].graph);
  std::sort(kept_.begin(), kept_.end(),
            [&](int a, int b) { return graphs_[a].order < graphs_[b].order; });
  const uint64_t evaluated = cache_.evaluated(), reused = cache_.reused();
  for (int g : kept_) cache_.Evaluate(graphs_[g].graph, graphs_[g].op_keys, graphs_[g].op_values);
  st.terms_evaluated += cache_.evaluated() - evaluated;
  st.terms_reused += cache_.reused() - reused;

  classes_.clear();
  for (int g : kept_) {
    Member m{g, {}};
    bool placed = false;
    for (auto& cl : classes_) {
      if (MatchOutputs(graphs_[cl[0].graph], graphs_[g], &m)) {
        cl.push_back(m);
        placed = true;
        break;
      }
    }
    if (!placed) {
      if (!classes_.empty()) ++st.double_mismatches;
      m.outputs = graphs_[g].outputs.ids;
      classes_.push_back({m});
    }
  }
  st.classes += classes_.size();
  for (const auto& cl : classes_) {
    st.largest_class = std::max<uint64_t>(st.largest_class, cl.size());
    if (c_.all_pairs) {
      for (size_t p = 0; p < cl.size(); ++p)
        for (size_t q = p + 1; q < cl.size(); ++q) TryPair(cl[p], cl[q], out);
      continue;
    }
    size_t center = 0;  // the smallest graph, the first among equals
    for (size_t m = 1; m < cl.size(); ++m)
      if (graphs_[cl[m].graph].graph.ops.size() < graphs_[cl[center].graph].graph.ops.size())
        center = m;
    for (size_t m = 0; m < cl.size(); ++m)
      if (m != center) TryPair(cl[center], cl[m], out);
  }
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

std::optional<std::string> RuleText(const SearchSpace& s, const Graph& a,
                                    const std::vector<int>& a_outputs, const Graph& b,
                                    const std::vector<int>& b_outputs) {
  const int n = static_cast<int>(s.config->inputs.size());
  ruledb::PatternGraph pa = ToPattern(s, a, a_outputs), pb = ToPattern(s, b, b_outputs);
  std::optional<std::string> best;
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
      std::string text = ruledb::Canonicalize(r).ToText();
      if (!best || text < *best) best = std::move(text);
    } while (permute && std::next_permutation(perm.begin(), perm.end()));
  }
  return best;
}

CandidateTexts TestPairs(const SearchSpace& s, const Enumeration& e, int threads,
                         ProgressCounters* progress) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  const size_t num_partitions = e.partitions.size() - 1;
  if (progress) {
    uint64_t buckets = 0;
    for (size_t i = 0; i < e.graphs.size();) {
      size_t j = i + 1;
      while (j < e.graphs.size() && e.graphs[j].fingerprint == e.graphs[i].fingerprint) ++j;
      buckets += j - i >= 2;
      i = j;
    }
    progress->buckets_total = buckets;
  }

  std::vector<PartitionResult> results(num_partitions);
  tbb::enumerable_thread_specific<BucketTester> testers([&] { return BucketTester(s); });
  tbb::parallel_for(size_t{0}, num_partitions, [&](size_t p) {
    BucketTester& tester = testers.local();
    PartitionResult& res = results[p];
    PairStats& st = res.stats;
    const size_t end = e.partitions[p + 1];
    for (size_t i = e.partitions[p]; i < end;) {
      size_t j = i + 1;
      while (j < end && e.graphs[j].fingerprint == e.graphs[i].fingerprint) ++j;
      ++st.distinct_fingerprints;
      if (j - i >= 2) {
        ++st.buckets;
        st.graphs_in_buckets += j - i;
        st.largest_bucket = std::max<uint64_t>(st.largest_bucket, j - i);
        tester.Process(e, i, j, &res);
      }
      i = j;
    }
    std::sort(res.texts.begin(), res.texts.end());
    res.texts.erase(std::unique(res.texts.begin(), res.texts.end()), res.texts.end());
    if (progress) {
      progress->buckets_done += st.buckets;
      progress->candidates += st.rules_before_dedup;
    }
  });
  testers.clear();

  CandidateTexts out;
  size_t total = 0;
  for (const PartitionResult& r : results) total += r.texts.size();
  out.texts.reserve(total);
  for (PartitionResult& r : results) {
    AddPairStats(r.stats, &out.stats);
    for (std::string& t : r.texts) out.texts.push_back(std::move(t));
    std::vector<std::string>().swap(r.texts);
  }
  std::sort(out.texts.begin(), out.texts.end());
  out.texts.erase(std::unique(out.texts.begin(), out.texts.end()), out.texts.end());
  out.stats.candidates = out.texts.size();
  return out;
}

}  // namespace verisub::gen
