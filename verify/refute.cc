// Refutation by evaluation: shape search (base combinations, perturbations) and comparison.
#include "verify/refute.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "ruledb/pattern_eval.h"
#include "specs/evaluate.h"
#include "specs/semantics.h"

namespace verisub::verify {

using ruledb::PatternGraph;
using specs::Shape;
using specs::TensorType;

std::vector<Shape> DefaultBaseShapes() {
  return {Shape{2, 4},       Shape{4, 4},       Shape{2, 4, 5, 5}, Shape{4, 4, 3, 3},
          Shape{4, 4, 1, 3}, Shape{4, 4, 3, 1}, Shape{4, 1, 3, 3}, Shape{}};
}

namespace {

using Assignment = std::vector<Shape>;

// SplitMix64: a portable, seedable stream (std::uniform_*_distribution is not the same across
// standard libraries, and outcomes must be reproducible).
struct SplitMix {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int64_t Uniform(int64_t lo, int64_t hi) {  // in [lo, hi]
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  double Symmetric() {  // in [-1, 1)
    return static_cast<double>(Next() >> 11) * 0x1.0p-52 - 1.0;
  }
};

uint64_t Mix(uint64_t a, uint64_t b) {
  SplitMix m{a ^ (b * 0x9e3779b97f4a7c15ull)};
  return m.Next();
}

uint64_t HashText(const std::string& s) {  // FNV-1a
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Type checks of both sides of a rule, restricted to the nodes that depend only on the first k
// inputs (so a partial assignment can be rejected early).
class TypeChecker {
 public:
  explicit TypeChecker(const ruledb::Rule& rule) : sides_{&rule.src, &rule.dst} {
    for (int s = 0; s < 2; ++s) {
      const PatternGraph& g = *sides_[s];
      for (const ruledb::PatternNode& n : g.nodes) {
        int d = -1;
        for (const ruledb::ValueRef& v : n.inputs)
          d = std::max(d, v.is_input() ? v.index : depends_[s][v.node]);
        depends_[s].push_back(d);
      }
    }
  }

  bool Check(const Assignment& shapes, int k) const {
    // Scratch reused between calls (a rule's shape search makes thousands).
    std::vector<TensorType>& inputs = inputs_;
    inputs.resize(k);
    for (int i = 0; i < k; ++i) inputs[i] = TensorType(shapes[i]);
    for (int s = 0; s < 2; ++s) {
      const PatternGraph& g = *sides_[s];
      std::vector<std::array<TensorType, specs::kMaxOpOutputs>>& types = types_;
      types.resize(g.nodes.size());
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (depends_[s][i] >= k) continue;
        const ruledb::PatternNode& n = g.nodes[i];
        const TensorType* in[specs::kMaxOpInputs];
        for (size_t a = 0; a < n.inputs.size(); ++a) {
          const ruledb::ValueRef& v = n.inputs[a];
          in[a] = v.is_input() ? &inputs[v.index] : &types[v.node][v.index];
        }
        if (!specs::InferTypes(n.op, n.params, in, types[i].data()).ok()) return false;
      }
    }
    return true;
  }

 private:
  const PatternGraph* sides_[2];
  std::vector<int> depends_[2];  // per node: the highest input index it depends on
  mutable std::vector<TensorType> inputs_;
  mutable std::vector<std::array<TensorType, specs::kMaxOpOutputs>> types_;
};

// Depth-first over the inputs, each taking every base shape (of its rank, when the rule has
// input ranks), pruned by partial type checks.
void FindBases(const TypeChecker& tc, const std::vector<Shape>& catalog,
               const std::vector<int>& ranks, size_t k, Assignment* current, int max_bases,
               int* budget, std::vector<Assignment>* out) {
  if (k == current->size()) {
    out->push_back(*current);
    return;
  }
  for (const Shape& s : catalog) {
    if (static_cast<int>(out->size()) >= max_bases || *budget <= 0) return;
    if (!ranks.empty() && s.rank != ranks[k]) continue;
    --*budget;
    (*current)[k] = s;
    if (tc.Check(*current, static_cast<int>(k) + 1))
      FindBases(tc, catalog, ranks, k + 1, current, max_bases, budget, out);
  }
}

// Slots of an assignment: (input, dimension) pairs.
using Slot = std::pair<int, int>;

std::vector<Slot> SlotsWithValue(const Assignment& a, int64_t value) {
  std::vector<Slot> out;
  for (size_t i = 0; i < a.size(); ++i)
    for (int d = 0; d < a[i].rank; ++d)
      if (a[i][d] == value) out.emplace_back(static_cast<int>(i), d);
  return out;
}

// The most generic assignment reachable from `base` by untying dimensions: equal dimensions of
// the base may be tied by the shape rules (an ewadd's operands) or equal by coincidence (the
// generator's channels and widths are both 4). Greedily, each dimension, alone or with one or
// two others of its value, moves to a value no other dimension has (or to 1 or 3, for kernel
// windows that must be odd and at most 3) when both sides still type-check. Identities that hold
// only because of a coincidence fail there.
Assignment Untie(const TypeChecker& tc, const Assignment& base, int max_dim, int* budget) {
  Assignment a = base;
  const int n = static_cast<int>(a.size());
  auto unused = [&](int64_t v) {
    for (const Shape& s : a)
      for (int d = 0; d < s.rank; ++d)
        if (s[d] == v) return false;
    return true;
  };
  auto try_move = [&](const std::vector<Slot>& move) {
    std::vector<int64_t> values;
    for (int64_t v = 2; v <= max_dim; ++v)
      if (unused(v)) {
        values.push_back(v);
        break;
      }
    values.push_back(1);
    values.push_back(3);
    const int64_t old = a[move[0].first][move[0].second];
    for (int64_t v : values) {
      if (v == old || *budget <= 0) continue;
      --*budget;
      for (const Slot& s : move) a[s.first][s.second] = v;
      if (tc.Check(a, n)) return true;
      for (const Slot& s : move) a[s.first][s.second] = old;
    }
    return false;
  };
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < a[i].rank; ++d) {
      std::vector<Slot> group = SlotsWithValue(a, a[i][d]);
      if (group.size() < 2) continue;
      std::vector<Slot> others;
      for (const Slot& s : group)
        if (s != Slot{i, d}) others.push_back(s);
      bool moved = try_move({{i, d}});
      for (size_t x = 0; !moved && x < others.size(); ++x)
        moved = others.size() > 1 && try_move({{i, d}, others[x]});
      for (size_t x = 0; !moved && x < others.size(); ++x)
        for (size_t y = x + 1; !moved && y < others.size(); ++y)
          moved = others.size() > 2 && try_move({{i, d}, others[x], others[y]});
    }
  }
  return a;
}

// A random variant of `base`: the dimensions are grouped by value; each group either moves to
// one new value, or splits in two parts with a new value each.
Assignment Perturb(const Assignment& base, bool split, int max_dim, SplitMix* rng) {
  std::map<int64_t, std::vector<Slot>> groups;
  for (size_t i = 0; i < base.size(); ++i)
    for (int d = 0; d < base[i].rank; ++d) groups[base[i][d]].emplace_back(i, d);
  Assignment out = base;
  for (const auto& [value, slots] : groups) {
    int64_t v0 = rng->Uniform(1, max_dim), v1 = rng->Uniform(1, max_dim);
    for (const auto& [i, d] : slots) out[i][d] = split && (rng->Next() & 1) ? v1 : v0;
  }
  return out;
}

std::string AssignmentString(const Assignment& a) {
  std::string s;
  for (size_t i = 0; i < a.size(); ++i)
    s += (i ? " " : "") + ruledb::InputName(static_cast<int>(i)) + " " + a[i].ToString();
  return s;
}

enum class CaseOutcome { kAgree, kDiffer, kInconclusive };

CaseOutcome EvaluateCase(const ruledb::Rule& rule, const Assignment& shapes, uint64_t seed,
                         double range, double tolerance, std::string* detail) {
  using T = specs::Tensor<double>;
  SplitMix rng{seed};
  std::vector<T> inputs(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    inputs[i].type = TensorType(shapes[i]);
    inputs[i].data.resize(shapes[i].NumElements());
    for (double& x : inputs[i].data) x = range * rng.Symmetric();
  }
  specs::DoubleSemantics sem;
  auto src = ruledb::EvalPattern(sem, rule.src, inputs);
  auto dst = ruledb::EvalPattern(sem, rule.dst, inputs);
  if (!src.ok() || !dst.ok() || src->size() != dst->size()) return CaseOutcome::kInconclusive;
  for (size_t o = 0; o < src->size(); ++o) {
    const T& a = (*src)[o];
    const T& b = (*dst)[o];
    if (!(a.type == b.type)) {
      *detail = "output " + std::to_string(o) + " has type " + a.type.ToString() + " vs " +
                b.type.ToString();
      return CaseOutcome::kDiffer;
    }
  }
  // Non-finite values (e.g. a square root of a negative input) make the case say nothing.
  for (size_t o = 0; o < src->size(); ++o)
    for (const T* t : {&(*src)[o], &(*dst)[o]})
      for (double x : t->data)
        if (!std::isfinite(x)) return CaseOutcome::kInconclusive;
  for (size_t o = 0; o < src->size(); ++o) {
    const T& a = (*src)[o];
    const T& b = (*dst)[o];
    for (size_t e = 0; e < a.data.size(); ++e) {
      double x = a.data[e], y = b.data[e];
      if (std::fabs(x - y) <= tolerance * std::max({1.0, std::fabs(x), std::fabs(y)})) continue;
      char buf[160];
      std::snprintf(buf, sizeof buf, "output %zu element %zu: %.4g vs %.4g", o, e, x, y);
      *detail = buf;
      return CaseOutcome::kDiffer;
    }
  }
  return CaseOutcome::kAgree;
}

// The starting points: well-typed combinations of base shapes, one per combination of input
// ranks first (a rule may hold for 2-D tensors only), in the order found, then the others.
std::vector<Assignment> Bases(const ruledb::Rule& rule, const RefuteOptions& options,
                              const TypeChecker& tc) {
  std::vector<Shape> catalog;
  for (const Shape& s : options.base_shapes.empty() ? DefaultBaseShapes() : options.base_shapes)
    if (std::find(catalog.begin(), catalog.end(), s) == catalog.end()) catalog.push_back(s);
  std::vector<Assignment> found;
  Assignment current(rule.num_inputs);
  int budget = 4096;  // type checks of partial assignments
  FindBases(tc, catalog, rule.input_ranks, 0, &current, 8 * options.max_bases, &budget, &found);
  std::vector<Assignment> bases;
  std::vector<bool> taken(found.size(), false);
  std::set<std::vector<int>> rank_sets;
  for (size_t i = 0; i < found.size(); ++i) {
    std::vector<int> ranks;
    for (const Shape& s : found[i]) ranks.push_back(s.rank);
    taken[i] = rank_sets.insert(ranks).second;
    if (taken[i]) bases.push_back(found[i]);
  }
  for (size_t i = 0; i < found.size(); ++i)
    if (!taken[i]) bases.push_back(found[i]);
  if (static_cast<int>(bases.size()) > options.max_bases) bases.resize(options.max_bases);
  return bases;
}

}  // namespace

std::vector<std::vector<int>> WellTypedRankTuples(const ruledb::Rule& rule,
                                                  const RefuteOptions& options, int max_tuples) {
  std::vector<std::vector<int>> out;
  if (rule.num_inputs <= 0) return out;
  TypeChecker tc(rule);
  for (const Assignment& a : Bases(rule, options, tc)) {
    std::vector<int> ranks;
    for (const Shape& s : a) ranks.push_back(s.rank);
    if (static_cast<int>(out.size()) >= max_tuples) break;
    if (std::find(out.begin(), out.end(), ranks) == out.end()) out.push_back(std::move(ranks));
  }
  return out;
}

struct Refuter::State {
  State(const ruledb::Rule& r, const RefuteOptions& o)
      : rule(r), options(o), tc(rule), rng{Mix(o.seed, HashText(rule.ToText()))} {
    rule_seed = rng.state;
    if (options.enabled && rule.num_inputs > 0) bases = Bases(rule, options, tc);
  }

  // Appends the next case of the sequence to `cases`; false when the sequence has ended.
  // Generic points first (most false candidates are identities of a coincidence), then the
  // bases themselves, then random variants, half of them with dimensions of at most 3 (a batched
  // matmul breaks some rules only when one batch dimension is 1 and another 2).
  bool Generate() {
    while (true) {
      Assignment a;
      if (phase == 0 || phase == 1) {
        if (position >= bases.size()) {
          ++phase;
          position = 0;
          continue;
        }
        a = phase == 0 ? Untie(tc, bases[position], options.max_dim, &untie_budget)
                       : bases[position];
        ++position;
      } else {
        if (position >= static_cast<size_t>(options.max_variants)) return false;
        const int t = static_cast<int>(position++);
        int max_dim = (t / 4) % 2 == 0 ? options.max_dim : std::min(3, options.max_dim);
        a = Perturb(bases[t % bases.size()], t % 2 == 1, max_dim, &rng);
        if (seen.count(Key(a)) || !tc.Check(a, rule.num_inputs)) continue;
      }
      if (!seen.insert(Key(a)).second) continue;
      bool small = true;
      for (const Shape& s : a) small = small && s.NumElements() <= options.max_elements;
      if (!small) continue;
      cases.push_back({std::move(a), Mix(rule_seed, seen.size())});
      return true;
    }
  }

  static std::vector<int64_t> Key(const Assignment& a) {
    std::vector<int64_t> k;
    for (const Shape& s : a) {
      k.push_back(s.rank);
      for (int d = 0; d < s.rank; ++d) k.push_back(s[d]);
    }
    return k;
  }

  const ruledb::Rule rule;
  const RefuteOptions options;
  TypeChecker tc;
  SplitMix rng;
  uint64_t rule_seed = 0;
  std::vector<Assignment> bases;
  std::set<std::vector<int64_t>> seen;
  int untie_budget = 2048;
  int phase = 0;
  size_t position = 0;                                 // in the current phase
  std::vector<std::pair<Assignment, uint64_t>> cases;  // the sequence so far, with input seeds
  size_t next = 0;                                     // first case not evaluated
  Refutation result;
};

Refuter::Refuter(const ruledb::Rule& rule, const RefuteOptions& options)
    : state_(std::make_unique<State>(rule, options)) {}

Refuter::~Refuter() = default;

int Refuter::next_case() const { return static_cast<int>(state_->next); }

const Refutation& Refuter::Run(int end_case, bool evaluate) {
  State& st = *state_;
  if (st.bases.empty()) return st.result;
  while (!st.result.refuted && static_cast<int>(st.next) < end_case) {
    if (st.next == st.cases.size() && !st.Generate()) break;
    const int index = static_cast<int>(st.next);
    const auto& [a, seed] = st.cases[st.next++];
    if (!evaluate) continue;
    std::string detail;
    const double range =
        index >= st.options.max_cases && index % 2 == 1 ? st.options.wide_range : 1.0;
    CaseOutcome out = EvaluateCase(st.rule, a, seed, range, st.options.tolerance, &detail);
    ++st.result.cases;
    if (out != CaseOutcome::kDiffer) continue;
    st.result.refuted = true;
    char values[48] = "";
    if (range != 1.0) std::snprintf(values, sizeof values, " (values in [-%g, %g])", range, range);
    st.result.reason = std::string(kRefutationReasonPrefix) + ": inputs " + AssignmentString(a) +
                       values + ": " + detail;
  }
  return st.result;
}

Refutation RefuteByEvaluation(const ruledb::Rule& rule, const RefuteOptions& options,
                              int first_case, int end_case) {
  if (end_case < 0) end_case = options.max_cases;
  if (!options.enabled || rule.num_inputs <= 0 || first_case >= end_case) return {};
  Refuter refuter(rule, options);
  refuter.Run(first_case, /*evaluate=*/false);
  return refuter.Run(end_case);
}

}  // namespace verisub::verify
