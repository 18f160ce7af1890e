// Index-level normal forms (see index_level.h).
//
// Rendering is the representation: a factor is its canonical text, so equal factors are equal
// strings and a polynomial is a map from monomials (factor -> exponent) to exact coefficients.
// Coordinates are tokens in that text: `#n;` a free one (the output index #0;.. and the fresh
// coordinates of sums being built), `@j;` the index an opaque operator's arguments are written
// at (local to its key), `$L.j;` coordinate j bound by a sum of level L. A sum's level is one
// more than that of every sum written inside it, so renaming one sum's bound coordinates never
// touches another's.
#include "verify/index_level.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "ruledb/pattern_ranks.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/channel_scale.h"
#include "specs/ops/constants.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/elementwise.h"
#include "specs/ops/pooling.h"
#include "specs/ops/reduce_mean.h"
#include "specs/ops/transpose.h"
#include "specs/rank_probe.h"
#include "specs/registry.h"
#include "verify/encoding.h"
#include "verify/poly.h"

namespace verisub::verify {
namespace {

using specs::OpKind;
using Mono = std::map<std::string, int>;  // factor -> exponent
using Poly = std::map<Mono, Rational>;    // monomial -> coefficient, none zero

constexpr int kMaxBound = 6;  // bound coordinates of one sum (canonical naming tries n! orders)

std::string Var(int n) { return "#" + std::to_string(n) + ";"; }

std::string RenderRational(const Rational& r) {
  return r.den == 1 ? std::to_string(r.num) : std::to_string(r.num) + "/" + std::to_string(r.den);
}

std::string RenderMono(const Mono& m) {
  std::string s;
  for (const auto& [f, e] : m) {
    if (!s.empty()) s += "*";
    s += f;
    if (e != 1) s += "^" + std::to_string(e);
  }
  return s.empty() ? "1" : s;
}

std::string Render(const Poly& p) {
  if (p.empty()) return "0";
  std::string s;
  for (const auto& [m, c] : p) {
    if (!s.empty()) s += " + ";
    s += RenderRational(c) + "*" + RenderMono(m);
  }
  return s;
}

void AddTerm(Poly* p, const Mono& m, const Rational& c) {
  auto [it, fresh] = p->emplace(m, c);
  if (!fresh) {
    it->second = it->second + c;
    if (it->second.is_zero()) p->erase(it);
  }
}

// Replaces every occurrence of `from` in `s` by `to`.
std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// The highest level of a sum written in `s` (0: none).
int MaxLevel(const std::string& s) {
  int level = 0;
  for (size_t at = s.find('$'); at != std::string::npos; at = s.find('$', at + 1))
    level = std::max(level, std::atoi(s.c_str() + at + 1));
  return level;
}

// The function an activation is, named by the unary operator that computes it alone
// (specs::ops::UnaryActivation), so that a fused activation and that operator are one function;
// empty for none.
std::string ActivationFunction(specs::Activation a) {
  for (int k = 0; k < specs::kNumOpKinds; ++k)
    if (specs::ops::UnaryActivation(static_cast<OpKind>(k)) == a)
      return specs::GetOp(static_cast<OpKind>(k)).name;
  return "";
}

struct SumInfo {
  int level = 0, bound = 0;
  Mono body;  // coordinates $level.0; .. $level.(bound-1);
};

// Equal dimensions: a union-find over dimension names, `0in<i>.<d>` for axis d of input i and
// `1<side><node>.<output>.<d>` for an operator's output. The representative of a class is its
// least name, an input's where it has one, so both sides name equal dimensions alike.
class Dims {
 public:
  std::string Find(const std::string& x) {
    auto it = parent_.find(x);
    if (it == parent_.end() || it->second == x) return x;
    std::string root = Find(it->second);
    parent_[x] = root;
    return root;
  }
  // Returns whether the classes were apart.
  bool Union(const std::string& a, const std::string& b) {
    std::string x = Find(a), y = Find(b);
    if (x == y) return false;
    if (y < x) std::swap(x, y);
    parent_[y] = x;
    parent_.emplace(x, x);
    return true;
  }

 private:
  std::map<std::string, std::string> parent_;
};

class Normalizer {
 public:
  // The equalities of dimensions each side's operators need to type-check (the rule claims
  // equality where both sides do), and the broadcast dimensions of batched products they imply.
  // Call for both sides, each with its tag, before any Elem.
  void Constrain(const ruledb::PatternGraph& g, const ruledb::PatternRanks& ranks, char side) {
    auto rank_of = [&](ruledb::ValueRef v) { return ranks.Rank(v); };
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const ruledb::PatternNode& n = g.nodes[k];
      const ruledb::ValueRef out{static_cast<int>(k), 0};
      const int r = std::max(ranks.Rank(out), 0);
      auto same = [&](ruledb::ValueRef x) {  // the output has x's shape
        for (int d = 0; d < r; ++d) dims_.Union(DimName(out, d, side), DimName(x, d, side));
      };
      switch (n.op) {
        case OpKind::kEwAdd:
        case OpKind::kEwSub:
        case OpKind::kEwMul:
          same(n.inputs[0]);
          same(n.inputs[1]);
          break;
        case OpKind::kSmul:
          same(n.inputs[0]);
          break;
        case OpKind::kBiasAdd:
        case OpKind::kChannelScale: {
          same(n.inputs[0]);
          int axis = static_cast<int>(n.params[0]);
          if (axis >= 0 && axis < r)
            dims_.Union(DimName(n.inputs[1], 0, side), DimName(out, axis, side));
          break;
        }
        case OpKind::kTranspose: {
          std::vector<int> perm = specs::DecodePerm(n.params[specs::ops::kTransposePerm]);
          if (static_cast<int>(perm.size()) == r)
            for (int d = 0; d < r; ++d)
              dims_.Union(DimName(out, d, side), DimName(n.inputs[0], perm[d], side));
          break;
        }
        case OpKind::kMatmul: {
          ruledb::ValueRef a = n.inputs[0], b = n.inputs[1];
          int ra = rank_of(a), rb = rank_of(b);
          if (ra < 2 || rb < 2 || r < 2) break;
          dims_.Union(DimName(out, r - 2, side), DimName(a, ra - 2, side));
          dims_.Union(DimName(out, r - 1, side), DimName(b, rb - 1, side));
          dims_.Union(DimName(a, ra - 1, side), DimName(b, rb - 2, side));
          matmuls_.push_back({side, out, a, b, ra, rb, r});
          break;
        }
        case OpKind::kConstOnes:
          same(n.inputs[0]);
          break;
        case OpKind::kConv2d:
        case OpKind::kConv2dBias: {
          if (r != 4) break;
          ruledb::ValueRef x = n.inputs[0], w = n.inputs[1];
          dims_.Union(DimName(out, 0, side), DimName(x, 0, side));
          dims_.Union(DimName(out, 1, side), DimName(w, 0, side));
          if (n.params[specs::ops::kConvGroup] == 1)
            dims_.Union(DimName(w, 1, side), DimName(x, 1, side));
          if (n.params[specs::ops::kConvGroup] == specs::kDepthwiseGroup)
            dims_.Union(DimName(w, 1, side), Literal(1));
          if (n.op == OpKind::kConv2dBias)
            dims_.Union(DimName(n.inputs[2], 0, side), DimName(out, 1, side));
          if (n.params[specs::ops::kConvStrideH] == 1 && n.params[specs::ops::kConvStrideW] == 1 &&
              n.params[specs::ops::kConvPadding] == static_cast<int64_t>(specs::Padding::kSame)) {
            dims_.Union(DimName(out, 2, side), DimName(x, 2, side));
            dims_.Union(DimName(out, 3, side), DimName(x, 3, side));
          }
          break;
        }
        case OpKind::kPoolAvg:
        case OpKind::kPoolMax:
          if (r != 4) break;
          dims_.Union(DimName(out, 0, side), DimName(n.inputs[0], 0, side));
          dims_.Union(DimName(out, 1, side), DimName(n.inputs[0], 1, side));
          break;
        case OpKind::kConstPool:
        case OpKind::kConstIConv:
          // [C, 1 or C, kernel_h, kernel_w] for an input [N, C, H, W].
          if (r != 4) break;
          dims_.Union(DimName(out, 0, side), DimName(n.inputs[0], 1, side));
          dims_.Union(DimName(out, 1, side),
                      n.op == OpKind::kConstPool ? Literal(1) : DimName(n.inputs[0], 1, side));
          dims_.Union(DimName(out, 2, side), Literal(n.params[specs::ops::kConstKernelH]));
          dims_.Union(DimName(out, 3, side), Literal(n.params[specs::ops::kConstKernelW]));
          break;
        case OpKind::kConstIMatmul: {
          int rx = rank_of(n.inputs[0]);
          if (rx >= 1 && r == 2) {
            dims_.Union(DimName(out, 0, side), DimName(n.inputs[0], rx - 1, side));
            dims_.Union(DimName(out, 1, side), DimName(n.inputs[0], rx - 1, side));
          }
          break;
        }
        case OpKind::kReduceMean: {
          const bool keep = n.params[specs::ops::kReduceMeanKeepdims] != 0;
          for (int d = 0, o = 0; d < rank_of(n.inputs[0]) && o < r; ++d) {
            const bool reduced = specs::ops::ReducesAxis(n.params, d);
            if (!reduced) dims_.Union(DimName(out, o, side), DimName(n.inputs[0], d, side));
            if (reduced && keep) dims_.Union(DimName(out, o, side), Literal(1));
            o += !reduced || keep;
          }
          break;
        }
        default:
          if (specs::ops::UnaryActivation(n.op)) same(n.inputs[0]);
          break;
      }
    }
  }

  void SameShape(ruledb::ValueRef x, char xs, ruledb::ValueRef y, char ys, int rank) {
    for (int d = 0; d < rank; ++d) dims_.Union(DimName(x, d, xs), DimName(y, d, ys));
  }

  // After both sides: a batch dimension of a product equals its operands' where those are equal
  // (broadcasting leaves it alone), to a fixed point.
  void CloseBatchDims() {
    for (bool changed = true; changed;) {
      changed = false;
      for (const Product& m : matmuls_)
        for (int j = 0; j < m.r - 2; ++j) {
          int da = j - (m.r - m.ra), db = j - (m.r - m.rb);  // operand axes, negative: absent
          std::string o = DimName(m.out, j, m.side);
          if (da >= 0 && db >= 0 &&
              dims_.Find(DimName(m.a, da, m.side)) == dims_.Find(DimName(m.b, db, m.side)))
            changed |= dims_.Union(o, DimName(m.a, da, m.side));
          else if (da >= 0 && db < 0)
            changed |= dims_.Union(o, DimName(m.a, da, m.side));
          else if (db >= 0 && da < 0)
            changed |= dims_.Union(o, DimName(m.b, db, m.side));
        }
    }
  }

  // Whether every value of `g` has a rank (ruledb::PatternRanks); false outside the fragment.
  bool Ranked(const ruledb::PatternGraph& g, const ruledb::PatternRanks& ranks) {
    for (size_t k = 0; k < g.nodes.size(); ++k)
      for (int o = 0; o < specs::GetOp(g.nodes[k].op).num_outputs; ++o)
        if (ranks.Rank({static_cast<int>(k), o}) < 0)
          return Fail(specs::GetOp(g.nodes[k].op).name + " does not type-check at these ranks");
    return true;
  }

  // The element of value `v` of `g` (side `side`, as constrained) at index `idx`.
  bool Elem(const ruledb::PatternGraph& g, const ruledb::PatternRanks& ranks, char side,
            ruledb::ValueRef v, const std::vector<std::string>& idx_in, Poly* out) {
    auto rank_of = [&](ruledb::ValueRef r) { return ranks.Rank(r); };
    if (static_cast<int>(idx_in.size()) != rank_of(v)) return Fail("an index of the wrong rank");
    // An axis of dimension 1 has one coordinate (an access out of range is guarded to zero).
    std::vector<std::string> idx = idx_in;
    for (size_t d = 0; d < idx.size(); ++d)
      if (dims_.Find(DimName(v, static_cast<int>(d), side)) == Literal(1)) idx[d] = Literal(0);
    if (v.is_input()) {
      *out = Atom("Ein" + std::to_string(v.index) + Index(idx));
      return true;
    }
    const ruledb::PatternNode& n = g.nodes[v.node];
    auto elem = [&](int input, const std::vector<std::string>& at, Poly* p) {
      return Elem(g, ranks, side, n.inputs[input], at, p);
    };
    Poly a, b;
    const std::string& name = specs::GetOp(n.op).name;
    switch (n.op) {
      case OpKind::kEwAdd:
      case OpKind::kEwSub:
      case OpKind::kEwMul:
        if (!elem(0, idx, &a) || !elem(1, idx, &b)) return false;
        if (n.op == OpKind::kEwMul) {
          *out = Mul(a, b);
        } else {
          *out = a;
          for (const auto& [m, c] : b)
            AddTerm(out, m, n.op == OpKind::kEwSub ? c * Rational::Make(-1, 1) : c);
        }
        break;
      case OpKind::kSmul:
        if (!elem(0, idx, &a) || !elem(1, {}, &b)) return false;
        *out = Mul(a, b);
        break;
      case OpKind::kBiasAdd:
      case OpKind::kChannelScale: {
        int axis =
            static_cast<int>(n.params[n.op == OpKind::kBiasAdd ? specs::ops::kBiasAxis
                                                               : specs::ops::kChannelScaleAxis]);
        if (axis < 0 || axis >= static_cast<int>(idx.size())) return Fail("an axis out of range");
        if (!elem(0, idx, &a) || !elem(1, {idx[axis]}, &b)) return false;
        if (n.op == OpKind::kChannelScale) {
          *out = Mul(a, b);
        } else {
          *out = a;
          for (const auto& [m, c] : b) AddTerm(out, m, c);
        }
        break;
      }
      case OpKind::kTranspose: {
        std::vector<int> perm = specs::DecodePerm(n.params[specs::ops::kTransposePerm]);
        if (perm.size() != idx.size()) return Fail("a permutation of the wrong rank");
        std::vector<std::string> at(idx.size());
        for (size_t d = 0; d < perm.size(); ++d) at[perm[d]] = idx[d];
        if (!elem(0, at, out)) return false;
        break;
      }
      case OpKind::kMatmul: {
        // out[..., i, j] = sum over k of a[..., i, k] b[..., k, j]. A batch axis of an operand
        // whose dimension is not known equal to the output's may be a broadcast 1: its
        // coordinate is then `M(i,D)`, i modulo that dimension D (i where D is the output's, 0
        // where it is 1).
        const int ra = rank_of(n.inputs[0]), rb = rank_of(n.inputs[1]),
                  r = static_cast<int>(idx.size());
        const std::string k_dim = dims_.Find(DimName(n.inputs[0], ra - 1, side));
        const std::string k = k_dim == Literal(1) ? Literal(0) : Var(next_var_++);
        auto operand = [&](int which, int rank, std::vector<std::string> last_two) {
          std::vector<std::string> at;
          for (int d = 0; d < rank - 2; ++d) {
            const std::string& i = idx[d + (r - rank)];
            std::string dim = dims_.Find(DimName(n.inputs[which], d, side));
            at.push_back(
                dim == dims_.Find(DimName(v, d + (r - rank), side)) ? i : "M(" + i + dim + ")");
          }
          at.insert(at.end(), last_two.begin(), last_two.end());
          return at;
        };
        if (!elem(0, operand(0, ra, {idx[r - 2], k}), &a) ||
            !elem(1, operand(1, rb, {k, idx[r - 1]}), &b))
          return false;
        if (k == Literal(0)) {
          *out = Mul(a, b);
        } else if (!SumOver({{k, k_dim}}, Mul(a, b), out)) {
          return false;
        }
        if (!Activate(static_cast<specs::Activation>(n.params[0]), out)) return false;
        break;
      }
      case OpKind::kConstIMatmul:
        *out = Delta(idx[0], idx[1]);
        break;
      case OpKind::kConstOnes:
        *out = Poly{{Mono{}, Rational::Make(1, 1)}};
        break;
      case OpKind::kConstPool:
        *out = Poly{{Mono{}, Rational::Make(1, n.params[specs::ops::kConstKernelH] *
                                                   n.params[specs::ops::kConstKernelW])}};
        break;
      case OpKind::kConstIConv: {
        // The identity kernel: 1 at the centre of the window where the two channels agree.
        const int64_t kh = n.params[specs::ops::kConstKernelH],
                      kw = n.params[specs::ops::kConstKernelW];
        *out = Mul(Delta(idx[0], idx[1]),
                   Mul(Delta(idx[2], Literal((kh - 1) / 2)), Delta(idx[3], Literal((kw - 1) / 2))));
        break;
      }
      case OpKind::kConv2d:
      case OpKind::kConv2dBias:
      case OpKind::kPoolAvg: {
        if (!Window(g, ranks, side, v, idx, out)) return Opaque(g, ranks, side, v, idx, out);
        break;
      }
      case OpKind::kReduceMean: {
        // The mean over the reduced axes: 1/N times the sum; a kept axis of 1 is not read.
        const ruledb::ValueRef x = n.inputs[0];
        const int rx = rank_of(x);
        const bool keep = n.params[specs::ops::kReduceMeanKeepdims] != 0;
        std::vector<std::string> at;
        std::vector<std::pair<std::string, std::string>> bound;
        Mono scale;
        int64_t divisor = 1;
        for (int d = 0, o = 0; d < rx; ++d) {
          if (specs::ops::ReducesAxis(n.params, d)) {
            std::string dim = dims_.Find(DimName(x, d, side));
            if (dim == Literal(1)) {  // the mean of one element
              at.push_back(Literal(0));
            } else {
              bound.emplace_back(Var(next_var_++), dim);
              at.push_back(bound.back().first);
              if (int64_t k = LiteralValue(dim); k > 0)
                divisor *= k;
              else
                scale["R(" + dim + ")"] += 1;
            }
            o += keep;
          } else {
            if (o >= static_cast<int>(idx.size())) return Fail("reduce_mean of the wrong rank");
            at.push_back(idx[o++]);
          }
        }
        if (!elem(0, at, &a)) return false;
        if (bound.empty())
          b = a;
        else if (!SumOver(bound, a, &b))
          return false;
        *out = Mul(Poly{{scale, Rational::Make(1, divisor)}}, b);
        break;
      }
      default:
        if (std::optional<specs::Activation> act = specs::ops::UnaryActivation(n.op)) {
          if (!elem(0, idx, out) || !Activate(*act, out)) return false;
          break;
        }
        return Opaque(g, ranks, side, v, idx, out);
    }
    used_.insert("index:" + name);
    return true;
  }

  const std::string& error() const { return error_; }
  std::vector<std::string> used() const { return {used_.begin(), used_.end()}; }

 private:
  bool Fail(const std::string& why) {
    if (error_.empty()) error_ = why;
    return false;
  }

  static std::string Index(const std::vector<std::string>& idx) {
    std::string s = "[";
    for (const std::string& c : idx) s += c;
    return s + "]";
  }

  static Poly Atom(const std::string& factor) {
    return Poly{{Mono{{factor, 1}}, Rational::Make(1, 1)}};
  }

  bool Activate(specs::Activation act, Poly* p) {
    if (act == specs::Activation::kNone) return true;
    const std::string name = ActivationFunction(act);
    if (name.empty()) return Fail("an unknown activation");
    *p = Atom("F" + name + "(" + Render(*p) + ")");
    return true;
  }

  // An operator outside the fragment: one tensor per operator, parameters and argument normal
  // forms (so equal arguments make equal tensors); a fused activation is applied after it.
  bool Opaque(const ruledb::PatternGraph& g, const ruledb::PatternRanks& ranks, char side,
              ruledb::ValueRef v, const std::vector<std::string>& idx, Poly* out) {
    const ruledb::PatternNode& n = g.nodes[v.node];
    const specs::OpSpec& spec = specs::GetOp(n.op);
    specs::Params params = n.params;
    specs::Activation act = specs::Activation::kNone;
    for (const specs::ParamDesc& d : spec.params)
      if (d.name == "activation") {
        act = static_cast<specs::Activation>(params[d.slot]);
        params[d.slot] = static_cast<int64_t>(specs::Activation::kNone);
      }
    std::string key = "{" + FunctionName(n.op, params, v.index);
    for (const ruledb::ValueRef& in : n.inputs) {
      const int r = ranks.Rank(in);
      std::vector<std::string> at;
      for (int d = 0; d < r; ++d) at.push_back("@" + std::to_string(d) + ";");
      Poly p;
      if (!Elem(g, ranks, side, in, at, &p)) return false;
      key += "|" + Render(p);
    }
    *out = Atom("E" + key + "}" + Index(idx));
    return Activate(act, out);
  }

  // Monomial product; the sums among the factors merge into one.
  Mono MulMono(const Mono& x, const Mono& y) {
    Mono m = x;
    for (const auto& [f, e] : y) m[f] += e;
    return MergeSums(Cancel(std::move(m)));
  }

  Poly Mul(const Poly& x, const Poly& y) {
    Poly p;
    for (const auto& [mx, cx] : x)
      for (const auto& [my, cy] : y) AddTerm(&p, MulMono(mx, my), cx * cy);
    return p;
  }

  // A product of sums is one sum over all their bound coordinates (renamed apart).
  Mono MergeSums(const Mono& m) {
    int count = 0;
    for (const auto& [f, e] : m)
      if (f[0] == 'S') count += e;
    if (count < 2) return m;
    Mono rest, body;
    std::vector<std::string> bound;
    for (const auto& [f, e] : m) {
      if (f[0] != 'S') {
        rest[f] += e;
        continue;
      }
      for (int k = 0; k < e; ++k) Open(f, &bound, &body);
    }
    std::string sum;
    if (!Close(bound, body, &sum)) return m;  // too many coordinates: left as a product
    rest[sum] += 1;
    return rest;
  }

  // Adds sum `f`'s bound coordinates (renamed to fresh free ones) and its body's factors.
  void Open(const std::string& f, std::vector<std::string>* bound, Mono* body) {
    const SumInfo& s = sums_.at(f);
    std::vector<std::pair<std::string, std::string>> renames;
    for (int j = 0; j < s.bound; ++j) {
      renames.emplace_back("$" + std::to_string(s.level) + "." + std::to_string(j) + ";",
                           Var(next_var_++));
      bound->push_back(renames.back().second);
    }
    for (const auto& [factor, e] : s.body) {
      std::string g = factor;
      for (const auto& [from, to] : renames) g = ReplaceAll(g, from, to);
      (*body)[g] += e;
    }
  }

  // The canonical sum over `bound` (free coordinates of `body`, each of which it mentions).
  bool Close(const std::vector<std::string>& bound, const Mono& body, std::string* out) {
    if (static_cast<int>(bound.size()) > kMaxBound) return Fail("a sum over too many coordinates");
    int level = 1;
    for (const auto& [f, e] : body) level = std::max(level, MaxLevel(f) + 1);
    std::vector<int> order(bound.size());
    std::iota(order.begin(), order.end(), 0);
    std::string best;
    Mono best_body;
    do {
      Mono renamed;
      for (const auto& [f, e] : body) {
        std::string g = f;
        for (size_t j = 0; j < bound.size(); ++j)
          g = ReplaceAll(g, bound[order[j]],
                         "$" + std::to_string(level) + "." + std::to_string(j) + ";");
        renamed[g] += e;
      }
      std::string text = RenderMono(renamed);
      if (best.empty() || text < best) {
        best = std::move(text);
        best_body = std::move(renamed);
      }
    } while (std::next_permutation(order.begin(), order.end()));
    *out = "S" + std::to_string(level) + ":" + std::to_string(bound.size()) + "{" + best + "}";
    sums_.emplace(*out, SumInfo{level, static_cast<int>(bound.size()), std::move(best_body)});
    return true;
  }

  // The sum over the free coordinates `bound` (each with the name of its dimension) of `body`:
  // linear in it, the factors that do not depend on them outside, a Kronecker delta of a bound
  // coordinate substituted (the sum of f(k) delta(k, x) over k is f(x): x ranges over the same
  // identity's other axis), and a coordinate no factor mentions counted (its dimension N times
  // the rest).
  bool SumOver(const std::vector<std::pair<std::string, std::string>>& bound, const Poly& body,
               Poly* out) {
    out->clear();
    for (const auto& [m, c] : body) {
      Mono outside, inside;
      std::vector<std::string> vars;
      for (const auto& b : bound) vars.push_back(b.first);
      auto mentions = [](const std::string& f, const std::string& var) {
        return f.find(var) != std::string::npos;
      };
      for (const auto& [f, e] : m) {
        bool depends = std::any_of(bound.begin(), bound.end(),
                                   [&](const auto& b) { return mentions(f, b.first); });
        if (!depends) {
          outside[f] += e;
        } else if (f[0] == 'S') {
          for (int k = 0; k < e; ++k) Open(f, &vars, &inside);
        } else {
          inside[f] += e;
        }
      }
      // Deltas of a bound coordinate.
      for (bool again = true; again;) {
        again = false;
        for (const auto& [f, e] : inside) {
          std::string x, y;
          if (!ParseDelta(f, &x, &y)) continue;
          auto bx = std::find(vars.begin(), vars.end(), x),
               by = std::find(vars.begin(), vars.end(), y);
          if (bx == vars.end() && by == vars.end()) continue;
          const std::string gone = bx != vars.end() ? x : y, kept = bx != vars.end() ? y : x;
          Mono next;
          for (const auto& [g, k] : inside) {
            if (g == f) continue;
            std::string h = ReplaceAll(g, gone, kept);
            std::string p, q;
            if (ParseDelta(h, &p, &q)) {
              if (p == q) continue;  // delta(x, x) = 1
              h = DeltaFactor(p, q);
            }
            next[h] += k;
          }
          inside = std::move(next);
          vars.erase(std::find(vars.begin(), vars.end(), gone));
          again = true;
          break;
        }
      }
      // Factors that lost their bound coordinates move out; coordinates no factor mentions are
      // counted.
      Mono kept;
      for (const auto& [f, e] : inside) {
        if (std::any_of(vars.begin(), vars.end(),
                        [&](const std::string& v) { return mentions(f, v); }))
          kept[f] += e;
        else
          outside[f] += e;
      }
      std::vector<std::string> live;
      Rational coef = c;
      for (const std::string& v : vars) {
        if (std::any_of(kept.begin(), kept.end(),
                        [&](const auto& fe) { return mentions(fe.first, v); })) {
          live.push_back(v);
          continue;
        }
        auto given =
            std::find_if(bound.begin(), bound.end(), [&](const auto& b) { return b.first == v; });
        if (given == bound.end()) return Fail("a sum lost a coordinate of unknown range");
        if (int64_t k = LiteralValue(given->second); k > 0)
          coef = coef * Rational::Make(k, 1);
        else
          outside["N(" + given->second + ")"] += 1;
      }
      Mono term = outside;
      if (!live.empty()) {
        std::string sum;
        if (!Close(live, kept, &sum)) return false;
        term[sum] += 1;
      }
      AddTerm(out, MergeSums(Cancel(term)), coef);
    }
    return true;
  }

  // The value of a literal dimension name, else 0.
  static int64_t LiteralValue(const std::string& dim) {
    return dim.rfind("#K", 0) == 0 ? std::atoll(dim.c_str() + 2) : 0;
  }

  // A known dimension (a constant kernel's window), as a dimension name and a coordinate.
  static std::string Literal(int64_t k) { return "#K" + std::to_string(k); }

  // A convolution (groups 1 or depthwise) or an average pool at `idx` [n, o, y, x]:
  //   sum over c, a, b of G(Y) G(X) x[n, c, Y, X] w[o, c, a, b],   Y = y*stride - pad + a,
  // as coordinate tokens (`Y(y,a,s<stride>,<same|valid>,<window>)`, the window a dimension name),
  // G the indicator that Y lies inside the input (padding=same only: a valid window never
  // leaves it), and the activation after. False outside what this models (other groups).
  bool Window(const ruledb::PatternGraph& g, const ruledb::PatternRanks& ranks, char side,
              ruledb::ValueRef v, const std::vector<std::string>& idx, Poly* out) {
    const ruledb::PatternNode& n = g.nodes[v.node];
    if (idx.size() != 4) return false;
    const bool pool = n.op == OpKind::kPoolAvg;
    const ruledb::ValueRef x = n.inputs[0];
    int64_t sh, sw, padding, activation;
    std::string kh, kw;
    if (pool) {
      sh = n.params[specs::ops::kPoolStrideH];
      sw = n.params[specs::ops::kPoolStrideW];
      padding = n.params[specs::ops::kPoolPadding];
      activation = n.params[specs::ops::kPoolActivation];
      kh = Literal(n.params[specs::ops::kPoolKernelH]);
      kw = Literal(n.params[specs::ops::kPoolKernelW]);
    } else {
      const int64_t group = n.params[specs::ops::kConvGroup];
      if (group != 1 && group != specs::kDepthwiseGroup) return false;
      sh = n.params[specs::ops::kConvStrideH];
      sw = n.params[specs::ops::kConvStrideW];
      padding = n.params[specs::ops::kConvPadding];
      activation = n.params[specs::ops::kConvActivation];
      kh = dims_.Find(DimName(n.inputs[1], 2, side));
      kw = dims_.Find(DimName(n.inputs[1], 3, side));
    }
    const bool same = padding == static_cast<int64_t>(specs::Padding::kSame);
    // A window of one position has one offset, 0.
    const std::string a = kh == Literal(1) ? Literal(0) : Var(next_var_++);
    const std::string b = kw == Literal(1) ? Literal(0) : Var(next_var_++);
    // The input coordinate o*stride - pad + k (pad (window-1)/2 for same, else 0), plainly where
    // that is o or k: a window of 1 pads nothing.
    auto coord = [&](const std::string& o, const std::string& k, int64_t stride,
                     const std::string& window) {
      const bool unpadded = !same || window == Literal(1);
      if (unpadded && k == Literal(0) && stride == 1) return o;
      if (unpadded && o == Literal(0)) return k;
      return "Y(" + o + "," + k + ",s" + std::to_string(stride) + (same ? ",same," : ",valid,") +
             window + ")";
    };
    const std::string y = coord(idx[2], a, sh, kh), xx = coord(idx[3], b, sw, kw);
    // Where the coordinate may leave the input (padding), G(coordinate | input dimension) says
    // whether it lies inside; not for an output coordinate of an output as tall as the input, or 0.
    Mono guard;
    auto guard_axis = [&](const std::string& c, int axis) {
      const std::string in_dim = dims_.Find(DimName(x, axis, side));
      if (c == Literal(0)) return;
      if (c == idx[axis] && dims_.Find(DimName(v, axis, side)) == in_dim) return;
      guard["G(" + c + "|" + in_dim + ")"] = 1;
    };
    if (same) {
      guard_axis(y, 2);
      guard_axis(xx, 3);
    }
    std::vector<std::pair<std::string, std::string>> bound;
    if (a != Literal(0)) bound.emplace_back(a, kh);
    if (b != Literal(0)) bound.emplace_back(b, kw);
    Poly xe, we, body;
    auto elem = [&](ruledb::ValueRef in, const std::vector<std::string>& at, Poly* p) {
      return Elem(g, ranks, side, in, at, p);
    };
    if (pool) {
      if (!elem(x, {idx[0], idx[1], y, xx}, &xe)) return false;
      body = Mul(Poly{{guard, Rational::Make(1, n.params[specs::ops::kPoolKernelH] *
                                                    n.params[specs::ops::kPoolKernelW])}},
                 xe);
    } else if (n.params[specs::ops::kConvGroup] == 1) {
      const std::string c_dim = dims_.Find(DimName(x, 1, side));
      const std::string c = c_dim == Literal(1) ? Literal(0) : Var(next_var_++);
      if (c != Literal(0)) bound.emplace_back(c, c_dim);
      if (!elem(x, {idx[0], c, y, xx}, &xe) || !elem(n.inputs[1], {idx[1], c, a, b}, &we))
        return false;
      body = Mul(Poly{{guard, Rational::Make(1, 1)}}, Mul(xe, we));
    } else {
      // Depthwise: output channel o reads input channel o / (O / C), o itself where O is C.
      const std::string o_dim = dims_.Find(DimName(n.inputs[1], 0, side)),
                        c_dim = dims_.Find(DimName(x, 1, side));
      // (o / O with C = 1 is 0.)
      const std::string channel = o_dim == c_dim ? idx[1]
                                  : c_dim == Literal(1)
                                      ? Literal(0)
                                      : "Q(" + idx[1] + "|" + o_dim + "|" + c_dim + ")";
      if (!elem(x, {idx[0], channel, y, xx}, &xe) ||
          !elem(n.inputs[1], {idx[1], Literal(0), a, b}, &we))
        return false;
      body = Mul(Poly{{guard, Rational::Make(1, 1)}}, Mul(xe, we));
    }
    if (bound.empty())
      *out = body;
    else if (!SumOver(bound, body, out))
      return false;
    if (n.op == OpKind::kConv2dBias) {
      Poly bias;
      if (!elem(n.inputs[2], {idx[1]}, &bias)) return false;
      for (const auto& [m, c] : bias) AddTerm(out, m, c);
    }
    return Activate(static_cast<specs::Activation>(activation), out);
  }

  // A dimension times its reciprocal is 1.
  static Mono Cancel(Mono m) {
    for (auto it = m.begin(); it != m.end();) {
      if (it->first.rfind("N(", 0) == 0) {
        auto r = m.find("R(" + it->first.substr(2));
        if (r != m.end()) {
          int k = std::min(it->second, r->second);
          it->second -= k;
          r->second -= k;
          if (r->second == 0) m.erase(r);
          if (it->second == 0) {
            it = m.erase(it);
            continue;
          }
        }
      }
      ++it;
    }
    return m;
  }

  static std::string DeltaFactor(const std::string& x, const std::string& y) {
    return x < y ? "D(" + x + "|" + y + ")" : "D(" + y + "|" + x + ")";
  }

  static bool ParseDelta(const std::string& f, std::string* x, std::string* y) {
    if (f.rfind("D(", 0) != 0 || f.back() != ')') return false;
    size_t bar = f.find('|');
    if (bar == std::string::npos || f.find('|', bar + 1) != std::string::npos) return false;
    *x = f.substr(2, bar - 2);
    *y = f.substr(bar + 1, f.size() - bar - 2);
    return true;
  }

  // The element of an identity matrix.
  static Poly Delta(const std::string& x, const std::string& y) {
    if (x == y) return Poly{{Mono{}, Rational::Make(1, 1)}};
    return Atom(DeltaFactor(x, y));
  }

  static std::string DimName(ruledb::ValueRef v, int d, char side) {
    return v.is_input() ? "0in" + std::to_string(v.index) + "." + std::to_string(d)
                        : std::string("1") + side + std::to_string(v.node) + "." +
                              std::to_string(v.index) + "." + std::to_string(d);
  }

  struct Product {
    char side;
    ruledb::ValueRef out, a, b;
    int ra, rb, r;
  };

  Dims dims_;
  std::vector<Product> matmuls_;
  int next_var_ = 1000;  // fresh coordinates; #0;.. index the outputs
  std::map<std::string, SumInfo> sums_;
  std::set<std::string> used_;
  std::string error_;
};

std::vector<std::string> OutputIndex(int rank) {
  std::vector<std::string> idx;
  for (int d = 0; d < rank; ++d) idx.push_back(Var(d));
  return idx;
}

}  // namespace

std::string IndexNormalForm(const ruledb::PatternGraph& g, const std::vector<int>& input_ranks,
                            int output, std::string* error) {
  Normalizer n;
  const ruledb::PatternRanks ranks(g, input_ranks);
  Poly p;
  const ruledb::ValueRef v = g.outputs.at(output);
  if (!n.Ranked(g, ranks)) {
    *error = n.error();
    return "";
  }
  n.Constrain(g, ranks, 's');
  n.CloseBatchDims();
  if (!n.Elem(g, ranks, 's', v, OutputIndex(ranks.Rank(v)), &p)) {
    *error = n.error();
    return "";
  }
  return Render(p);
}

IndexLevelResult ProveAtIndexLevel(const ruledb::Rule& rule, const std::vector<int>& input_ranks) {
  IndexLevelResult r;
  if (rule.src.outputs.size() != rule.dst.outputs.size() || rule.src.outputs.empty()) {
    r.reason = "source and target have different numbers of outputs";
    return r;
  }
  Normalizer n;
  const ruledb::PatternRanks src_ranks(rule.src, input_ranks), dst_ranks(rule.dst, input_ranks);
  if (!n.Ranked(rule.src, src_ranks) || !n.Ranked(rule.dst, dst_ranks)) {
    r.reason = n.error();
    return r;
  }
  n.Constrain(rule.src, src_ranks, 's');
  n.Constrain(rule.dst, dst_ranks, 'd');
  for (size_t o = 0; o < rule.src.outputs.size(); ++o) {
    const int rs = src_ranks.Rank(rule.src.outputs[o]), rd = dst_ranks.Rank(rule.dst.outputs[o]);
    if (rs != rd) {
      r.reason = "output " + std::to_string(o) + " has rank " + std::to_string(rs) + " vs " +
                 std::to_string(rd);
      return r;
    }
    // The outputs compared have equal shapes (the claim; evaluation checks the types agree).
    n.SameShape(rule.src.outputs[o], 's', rule.dst.outputs[o], 'd', rs);
  }
  n.CloseBatchDims();
  for (size_t o = 0; o < rule.src.outputs.size(); ++o) {
    const ruledb::ValueRef s = rule.src.outputs[o], d = rule.dst.outputs[o];
    Poly ps, pd;
    if (!n.Elem(rule.src, src_ranks, 's', s, OutputIndex(src_ranks.Rank(s)), &ps) ||
        !n.Elem(rule.dst, dst_ranks, 'd', d, OutputIndex(dst_ranks.Rank(d)), &pd)) {
      r.reason = n.error();
      return r;
    }
    if (ps != pd) {
      r.reason = "output " + std::to_string(o) + ": normal forms differ: " + Render(ps) + " vs " +
                 Render(pd);
      return r;
    }
  }
  r.proved = true;
  r.used = n.used();
  return r;
}

std::vector<std::vector<int>> CandidateRankTuples(const ruledb::Rule& rule) {
  std::vector<std::vector<int>> out;
  const int n = rule.num_inputs;
  std::vector<int> t(n, 0);
  Normalizer probe;
  while (true) {
    if (probe.Ranked(rule.src, ruledb::PatternRanks(rule.src, t)) &&
        probe.Ranked(rule.dst, ruledb::PatternRanks(rule.dst, t)))
      out.push_back(t);
    int i = n - 1;
    while (i >= 0 && t[i] == specs::kProbeMaxRank) t[i--] = 0;
    if (i < 0) break;
    ++t[i];
  }
  return out;
}

}  // namespace verisub::verify
