// The layout DP: states per cut in flat keys (one 16-bit word per live value: stored format in
// the low 4 bits, converted copies as a format bit set above), an open-addressing index per cut,
// and back pointers kept per cut for the backtracking.
#include "rewriter/layout_dp.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "rewriter/layout_order.h"

namespace verisub::rewriter {
namespace {

// One word of a state key: a live value's stored format and its converted copies.
using Word = uint16_t;
static_assert(kNumFormats <= 12, "a state word holds 4 bits of format and 12 of copies");
constexpr unsigned kStoredBits = 4;
constexpr unsigned kStoredMask = (1u << kStoredBits) - 1;

inline int Stored(Word b) { return b & kStoredMask; }
inline unsigned Copies(Word b) { return b >> kStoredBits; }  // bit l: a copy in format l exists
inline unsigned Available(Word b) { return Copies(b) | (1u << Stored(b)); }
inline Format StoredFormat(Word b) { return Format::FromIndex(Stored(b)); }

// Hash of the `width` words of a key, each masked by `mask` (all bits: the key; kStoredMask: its
// stored formats only).
inline uint64_t HashKey(const Word* key, int width, Word mask = static_cast<Word>(~0u)) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < width; ++i) {
    h = (h ^ static_cast<uint64_t>(key[i] & mask)) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  return h;
}

// The states of one cut: keys back to back, cost and back pointer per state, and a hash index.
class StateTable {
 public:
  explicit StateTable(int width) { Reset(width); }

  // Empty, for keys of `width` words; the buffers keep their capacity (one table per step of
  // the DP, a thousand steps per graph).
  void Reset(int width) {
    width_ = width;
    keys_.clear();
    hash_.clear();
    cost_.clear();
    prev_.clear();
    choice_.clear();
    index_.assign(64, -1);
  }

  int size() const { return static_cast<int>(cost_.size()); }
  int width() const { return width_; }
  const Word* key(int s) const { return keys_.data() + static_cast<size_t>(s) * width_; }

  // The state with this key, or -1.
  int Find(const Word* key) const {
    uint64_t h = Hash(key);
    for (size_t slot = h & (index_.size() - 1);; slot = (slot + 1) & (index_.size() - 1)) {
      int s = index_[slot];
      if (s < 0) return -1;
      if (hash_[s] == h && std::memcmp(this->key(s), key, Bytes()) == 0) return s;
    }
  }

  // Keeps the cheaper of an existing state and this one (the first on a tie).
  void Relax(const Word* key, double cost, int prev, int choice) {
    uint64_t h = Hash(key);
    size_t slot = h & (index_.size() - 1);
    for (;; slot = (slot + 1) & (index_.size() - 1)) {
      int s = index_[slot];
      if (s < 0) break;
      if (hash_[s] == h && std::memcmp(this->key(s), key, Bytes()) == 0) {
        if (cost < cost_[s]) {
          cost_[s] = cost;
          prev_[s] = prev;
          choice_[s] = choice;
        }
        return;
      }
    }
    index_[slot] = size();
    keys_.insert(keys_.end(), key, key + width_);
    hash_.push_back(h);
    cost_.push_back(cost);
    prev_.push_back(prev);
    choice_.push_back(choice);
    if (2 * static_cast<size_t>(size()) > index_.size()) Grow();
  }

  // Appends without the index (compacted tables are only read in order).
  void Append(const Word* key, double cost, int prev, int choice) {
    keys_.insert(keys_.end(), key, key + width_);
    hash_.push_back(0);
    cost_.push_back(cost);
    prev_.push_back(prev);
    choice_.push_back(choice);
  }

  std::vector<double> cost_;
  std::vector<int> prev_, choice_;

 private:
  size_t Bytes() const { return static_cast<size_t>(width_) * sizeof(Word); }
  uint64_t Hash(const Word* key) const { return HashKey(key, width_); }
  void Grow() {
    index_.assign(index_.size() * 2, -1);
    for (int s = 0; s < size(); ++s) {
      size_t slot = hash_[s] & (index_.size() - 1);
      while (index_[slot] >= 0) slot = (slot + 1) & (index_.size() - 1);
      index_[slot] = s;
    }
  }

  int width_;
  std::vector<Word> keys_;
  std::vector<uint64_t> hash_;
  std::vector<int> index_;
};

// Order of states by (cost, index): a strict total order, so no two states can drop each other.
bool Before(const StateTable& t, int a, int b) {
  return t.cost_[a] < t.cost_[b] || (t.cost_[a] == t.cost_[b] && a < b);
}

// Conversions a state with word `a` makes so that every format available in `b` is available.
double ExtraConversions(const LayoutProblemValue& v, Word a, Word b) {
  unsigned need = Available(b) & ~Available(a);
  double extra = 0;
  for (int l = 0; need; ++l, need >>= 1)
    if (need & 1) extra += v.Conversion(StoredFormat(a), Format::FromIndex(l));
  return extra;
}

class Solver {
 public:
  Solver(const LayoutProblem& p, const LayoutDpOptions& o, LayoutDpReport* r)
      : p_(p), options_(o), report_(*r) {}

  LayoutSolution Run(const std::vector<int>& order);

 private:
  void PruneDominated(const StateTable& t, const std::vector<int>& cut, std::vector<char>* keep);
  void PruneThreshold(const StateTable& t, std::vector<char>* keep);
  void PrunePareto(const StateTable& t, const std::vector<int>& cut,
                   const std::vector<int>& touched, std::vector<char>* keep);
  void PruneBeam(const StateTable& t, std::vector<char>* keep);

  const LayoutProblem& p_;
  const LayoutDpOptions& options_;
  LayoutDpReport& report_;
  // Scratch of the pruning rules, kept across steps.
  std::vector<uint64_t> stored_hash_;
  std::vector<int> idx_, kept_, leaders_;
  std::vector<std::vector<Word>> seen_;
  std::vector<Word> probe_;
};

void Solver::PruneDominated(const StateTable& t, const std::vector<int>& cut,
                            std::vector<char>* keep) {
  const int w = t.width();
  bool any_copies = false;
  for (int s = 0; s < t.size() && !any_copies; ++s)
    for (int i = 0; i < w && !any_copies; ++i) any_copies = Copies(t.key(s)[i]) != 0;
  if (!any_copies) return;  // keys equal their stored layouts: no two share them
  // Group by stored layouts, each group by (cost, index): sorted by a hash of the stored layouts,
  // then (cost, index); states whose hashes meet but whose layouts differ are never compared.
  stored_hash_.resize(t.size());
  for (int s = 0; s < t.size(); ++s) stored_hash_[s] = HashKey(t.key(s), w, kStoredMask);
  auto same_stored = [&](int a, int b) {
    const Word *ka = t.key(a), *kb = t.key(b);
    for (int i = 0; i < w; ++i)
      if (Stored(ka[i]) != Stored(kb[i])) return false;
    return true;
  };
  idx_.clear();
  for (int s = 0; s < t.size(); ++s)
    if ((*keep)[s]) idx_.push_back(s);
  std::sort(idx_.begin(), idx_.end(), [&](int a, int b) {
    return stored_hash_[a] != stored_hash_[b] ? stored_hash_[a] < stored_hash_[b]
                                              : Before(t, a, b);
  });
  constexpr int kMaxComparisons = 16;  // per state: bounds the work, never the exactness
  for (size_t g = 0; g < idx_.size();) {
    size_t end = g;
    while (end < idx_.size() && stored_hash_[idx_[end]] == stored_hash_[idx_[g]]) ++end;
    kept_.clear();
    for (size_t j = g; j < end; ++j) {
      const int sj = idx_[j];
      bool dropped = false;
      int compared = 0;
      for (size_t k = 0; k < kept_.size() && compared < kMaxComparisons && !dropped; ++k) {
        const int si = kept_[k];
        if (!same_stored(si, sj)) continue;
        ++compared;
        const Word *ki = t.key(si), *kj = t.key(sj);
        double reach = t.cost_[si];
        for (int i = 0; i < w && reach <= t.cost_[sj]; ++i)
          if (ki[i] != kj[i]) reach += ExtraConversions(p_.values[cut[i]], ki[i], kj[i]);
        dropped = reach <= t.cost_[sj];
      }
      if (dropped) {
        (*keep)[sj] = 0;
        ++report_.pruned_dominated;
      } else {
        kept_.push_back(sj);
      }
    }
    g = end;
  }
}

void Solver::PruneThreshold(const StateTable& t, std::vector<char>* keep) {
  double best = kInfiniteCost;
  for (int s = 0; s < t.size(); ++s)
    if ((*keep)[s]) best = std::min(best, t.cost_[s]);
  const double limit = best * options_.threshold;
  for (int s = 0; s < t.size(); ++s)
    if ((*keep)[s] && t.cost_[s] > limit) {
      (*keep)[s] = 0;
      ++report_.pruned_threshold;
    }
}

void Solver::PrunePareto(const StateTable& t, const std::vector<int>& cut,
                         const std::vector<int>& touched, std::vector<char>* keep) {
  const int w = t.width();
  std::vector<int>& idx = idx_;
  idx.clear();
  for (int s = 0; s < t.size(); ++s)
    if ((*keep)[s]) idx.push_back(s);
  if (idx.size() < 2) return;
  std::sort(idx.begin(), idx.end(), [&](int a, int b) { return Before(t, a, b); });
  // The words seen at each touched position (few: formats and copies of one value).
  std::vector<std::vector<Word>>& seen = seen_;
  if (seen.size() < touched.size()) seen.resize(touched.size());
  for (size_t k = 0; k < touched.size(); ++k) {
    seen[k].clear();
    for (int s : idx) {
      Word b = t.key(s)[touched[k]];
      if (std::find(seen[k].begin(), seen[k].end(), b) == seen[k].end()) seen[k].push_back(b);
    }
  }
  std::vector<Word>& probe = probe_;
  probe.resize(w);
  constexpr size_t kLeaders = 8;  // the cheapest kept states, candidates for the wide rule
  std::vector<int>& leaders = leaders_;
  leaders.clear();
  for (int sj : idx) {
    const Word* kj = t.key(sj);
    bool dropped = false;
    for (size_t k = 0; k < touched.size() && !dropped; ++k) {
      const int pos = touched[k];
      const LayoutProblemValue& v = p_.values[cut[pos]];
      for (Word a : seen[k]) {
        if (Stored(a) == Stored(kj[pos])) continue;  // the dominated rule's business
        double extra = ExtraConversions(v, a, kj[pos]);
        if (!std::isfinite(extra)) continue;
        std::copy(kj, kj + w, probe.begin());
        probe[pos] = a;
        int si = t.Find(probe.data());
        if (si < 0 || !(*keep)[si] || !Before(t, si, sj)) continue;
        if (t.cost_[si] + extra <= t.cost_[sj]) {
          dropped = true;
          break;
        }
      }
    }
    // Several values at once: one of the cheapest kept states converts every value that
    // differs (beyond the single touched ones above, states also differ where earlier steps
    // branched).
    for (size_t k = 0; k < leaders.size() && !dropped; ++k) {
      const int si = leaders[k];
      const Word* ki = t.key(si);
      double extra = t.cost_[si];
      for (int pos = 0; pos < w && extra <= t.cost_[sj]; ++pos)
        if (ki[pos] != kj[pos]) extra += ExtraConversions(p_.values[cut[pos]], ki[pos], kj[pos]);
      dropped = extra <= t.cost_[sj];
    }
    if (dropped) {
      (*keep)[sj] = 0;
      ++report_.pruned_pareto;
    } else if (leaders.size() < kLeaders) {
      leaders.push_back(sj);
    }
  }
}

void Solver::PruneBeam(const StateTable& t, std::vector<char>* keep) {
  std::vector<int> idx;
  for (int s = 0; s < t.size(); ++s)
    if ((*keep)[s]) idx.push_back(s);
  if (static_cast<int>(idx.size()) <= options_.max_states) return;
  std::nth_element(idx.begin(), idx.begin() + options_.max_states, idx.end(),
                   [&](int a, int b) { return Before(t, a, b); });
  for (size_t k = options_.max_states; k < idx.size(); ++k) (*keep)[idx[k]] = 0;
  report_.pruned_beam += static_cast<int64_t>(idx.size()) - options_.max_states;
  ++report_.beam_cuts;
}

LayoutSolution Solver::Run(const std::vector<int>& order) {
  const int n = static_cast<int>(order.size());
  const int nv = static_cast<int>(p_.values.size());
  std::vector<std::vector<int>> cuts = CutValues(p_, order);
  // Back pointers per cut after compaction: cut i + 1's states point into cut i's.
  std::vector<std::vector<int>> prev(n + 1), choice(n + 1);
  std::vector<int> pos(nv, -1);
  // Per value, its reads as (position in the order, layouts that reader may need), sorted by
  // position: a converted copy matters only while a later reader may read its layout, so the
  // copy bits of the others are cleared and states that differ only in them merge (exact).
  std::vector<std::vector<std::pair<int, unsigned>>> reads(nv);
  for (int i = 0; i < n; ++i) {
    const LayoutProblemNode& node = p_.nodes[order[i]];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      unsigned layouts = 0;
      for (const LayoutChoice& ch : node.choices) layouts |= 1u << ch.inputs[k].index();
      reads[node.inputs[k]].emplace_back(i, layouts);
    }
  }
  auto useful_after = [&](int v, int i) {
    unsigned m = p_.values[v].graph_output ? 1u << Format().index() : 0;
    for (const auto& [at, layouts] : reads[v])
      if (at > i) m |= layouts;
    return m;
  };

  // Cut 0: every live value is a graph input, stored plain with no copies.
  StateTable cur(static_cast<int>(cuts[0].size()));
  {
    std::vector<Word> key(cuts[0].size(), static_cast<Word>(Format().index()));
    cur.Append(key.data(), 0, -1, -1);
  }
  int64_t states_sum = 1;
  report_.peak_states = 1;

  std::vector<Word> work, next_key;
  StateTable next(0), compact(0);  // one of each, reset every step
  for (int i = 0; i < n; ++i) {
    const LayoutProblemNode& node = p_.nodes[order[i]];
    const std::vector<int>& from = cuts[i];
    const std::vector<int>& to = cuts[i + 1];
    for (size_t k = 0; k < from.size(); ++k) pos[from[k]] = static_cast<int>(k);
    std::vector<int> in_pos(node.inputs.size());
    for (size_t k = 0; k < node.inputs.size(); ++k) in_pos[k] = pos[node.inputs[k]];
    // Where each byte of the next key comes from: >= 0 a byte of the current key, else output
    // slot -1 - src.
    std::vector<int> src(to.size());
    std::vector<int> touched;  // positions in the next cut of values this node read or wrote
    for (size_t k = 0; k < to.size(); ++k) {
      int v = to[k];
      auto out = std::find(node.outputs.begin(), node.outputs.end(), v);
      bool read = std::find(node.inputs.begin(), node.inputs.end(), v) != node.inputs.end();
      src[k] =
          out != node.outputs.end() ? -1 - static_cast<int>(out - node.outputs.begin()) : pos[v];
      if (out != node.outputs.end() || read) touched.push_back(static_cast<int>(k));
    }
    for (size_t k = 0; k < from.size(); ++k) pos[from[k]] = -1;
    std::vector<Word> keep_bits(to.size());  // stored format and the copies still useful
    for (size_t k = 0; k < to.size(); ++k)
      keep_bits[k] = static_cast<Word>(kStoredMask | (useful_after(to[k], i) << kStoredBits));

    next.Reset(static_cast<int>(to.size()));
    work.resize(from.size());
    next_key.resize(to.size());
    for (int s = 0; s < cur.size(); ++s) {
      const Word* key = cur.key(s);
      for (int c = 0; c < static_cast<int>(node.choices.size()); ++c) {
        const LayoutChoice& ch = node.choices[c];
        ++report_.transitions;
        std::copy(key, key + from.size(), work.begin());
        double cost = cur.cost_[s] + ch.cost_us;
        for (size_t k = 0; k < in_pos.size(); ++k) {
          Word& b = work[in_pos[k]];
          const int l = ch.inputs[k].index();
          if (l == Stored(b) || (Copies(b) >> l & 1)) continue;
          cost += p_.values[node.inputs[k]].Conversion(StoredFormat(b), ch.inputs[k]);
          b = static_cast<Word>(b | (1u << (kStoredBits + l)));
        }
        for (size_t k = 0; k < to.size(); ++k)
          next_key[k] = src[k] >= 0 ? static_cast<Word>(work[src[k]] & keep_bits[k])
                                    : static_cast<Word>(ch.outputs[-1 - src[k]].index());
        next.Relax(next_key.data(), cost, s, c);
      }
    }

    std::vector<char> keep(next.size(), 1);
    if (options_.prune_dominated) PruneDominated(next, to, &keep);
    if (options_.threshold > 0) PruneThreshold(next, &keep);
    if (options_.pareto) PrunePareto(next, to, touched, &keep);
    if (options_.max_states > 0) PruneBeam(next, &keep);

    compact.Reset(static_cast<int>(to.size()));
    for (int s = 0; s < next.size(); ++s)
      if (keep[s]) compact.Append(next.key(s), next.cost_[s], next.prev_[s], next.choice_[s]);
    prev[i + 1] = compact.prev_;
    choice[i + 1] = compact.choice_;
    std::swap(cur, compact);
    states_sum += cur.size();
    report_.peak_states = std::max(report_.peak_states, cur.size());
  }

  // Deliver graph outputs plain, then take the cheapest final state.
  const std::vector<int>& last = cuts[n];
  int best = -1;
  double best_cost = kInfiniteCost;
  for (int s = 0; s < cur.size(); ++s) {
    double cost = cur.cost_[s];
    for (size_t k = 0; k < last.size(); ++k) {
      Word b = cur.key(s)[k];
      if (!(Available(b) & (1u << Format().index())))
        cost += p_.values[last[k]].Conversion(StoredFormat(b), Format());
    }
    if (best < 0 || cost < best_cost) {
      best = s;
      best_cost = cost;
    }
  }
  VERISUB_CHECK(best >= 0);
  LayoutSolution sol;
  sol.choice.assign(n, 0);
  for (int i = n, s = best; i > 0; --i) {
    sol.choice[order[i - 1]] = choice[i][s];
    s = prev[i][s];
  }
  sol.cost_us = EvaluateChoices(p_, sol.choice);
  VERISUB_CHECK(std::abs(sol.cost_us - best_cost) <= 1e-6 * std::max(1.0, std::abs(best_cost)));
  report_.mean_states = static_cast<double>(states_sum) / (n + 1);
  return sol;
}

}  // namespace

StatusOr<LayoutSolution> SolveLayoutProblem(const LayoutProblem& p, const LayoutDpOptions& options,
                                            LayoutDpReport* report) {
  VERISUB_RETURN_IF_ERROR(CheckLayoutProblem(p));
  if (options.threshold > 0 && options.threshold < 1)
    return InvalidArgument("layout DP: threshold " + std::to_string(options.threshold) +
                           " is below 1 (it would drop the best state)");
  LayoutDpReport local;
  LayoutDpReport& r = report ? *report : local;
  r = LayoutDpReport();
  auto start = std::chrono::steady_clock::now();
  r.nodes = static_cast<int>(p.nodes.size());
  r.values = static_cast<int>(p.values.size());
  std::vector<int> given = GivenOrder(p);
  std::vector<int> order = options.narrow_order ? NarrowestOrder(p) : given;
  r.given_max_cut_width = MaxCutWidth(p, given);
  r.max_cut_width = MaxCutWidth(p, order);
  r.used_greedy_order = order != given;
  LayoutSolution sol = Solver(p, options, &r).Run(order);
  r.exact = r.pruned_threshold == 0 && r.pruned_pareto == 0 && r.pruned_beam == 0;
  r.cost_us = sol.cost_us;
  std::vector<int> plain(p.nodes.size());
  r.cost_plain_us = 0;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    plain[i] = PlainChoice(p.nodes[i]);
    if (plain[i] < 0) r.cost_plain_us = kInfiniteCost;
  }
  if (r.cost_plain_us == 0) r.cost_plain_us = EvaluateChoices(p, plain);
  r.lower_bound_us = 0;
  for (const LayoutProblemNode& n : p.nodes) {
    double cheapest = kInfiniteCost;
    for (const LayoutChoice& c : n.choices) cheapest = std::min(cheapest, c.cost_us);
    r.lower_bound_us += cheapest;
  }
  r.time_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return sol;
}

}  // namespace verisub::rewriter
