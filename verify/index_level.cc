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
#include <cctype>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

#include "ruledb/pattern_ranks.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/channel_scale.h"
#include "specs/ops/concat.h"
#include "specs/ops/constants.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/elementwise.h"
#include "specs/ops/enlarge.h"
#include "specs/ops/pooling.h"
#include "specs/ops/reduce_mean.h"
#include "specs/ops/slice.h"
#include "specs/ops/softmax.h"
#include "specs/ops/split.h"
#include "specs/ops/transpose.h"
#include "specs/rank_probe.h"
#include "specs/registry.h"
#include "verify/encoding.h"
#include "verify/index_dims.h"
#include "verify/poly.h"
#include "verify/split_trees.h"

namespace verisub::verify {
namespace {

using specs::OpKind;
using Mono = std::map<std::string, int>;  // factor -> exponent
using Poly = std::map<Mono, Rational>;    // monomial -> coefficient, none zero

constexpr int kMaxBound = 6;  // bound coordinates of one sum (canonical naming tries n! orders)
constexpr size_t kMaxOutputPieces = 64;  // comparisons of one output, one per piece

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
  Mono body;                        // coordinates $level.0; .. $level.(bound-1);
  std::vector<std::string> ranges;  // with pieces: the dimension each coordinate ranges over
};

// A coordinate with pieces: `P(v:L1,L2)` is L1 + L2 + v (the dimensions of the pieces before
// it, each a class without parts), a plain coordinate variable v its own piece.
struct Coord {
  std::vector<std::string> before;
  std::string var;
};

bool IsVariable(const std::string& c) {
  return c.size() > 2 && (c[0] == '#' || c[0] == '@') && c.back() == ';' &&
         c.find_first_of("(|:,") == std::string::npos;
}

// The first element of a piece (every piece has one), as the coordinate of an axis of 1.
constexpr char kFirst[] = "#K0";

bool ParseCoord(const std::string& c, Coord* out) {
  out->before.clear();
  if (c.rfind("P(", 0) != 0) {
    out->var = c;
    return IsVariable(c) || c == kFirst;
  }
  if (c.back() != ')') return false;
  const std::string inner = c.substr(2, c.size() - 3);
  const size_t colon = inner.find(':');
  if (colon == std::string::npos) return false;
  out->var = inner.substr(0, colon);
  for (size_t at = colon + 1; at <= inner.size();) {
    size_t comma = inner.find(',', at);
    if (comma == std::string::npos) comma = inner.size();
    out->before.push_back(inner.substr(at, comma - at));
    at = comma + 1;
  }
  return IsVariable(out->var) || out->var == kFirst;
}

std::string CoordText(const std::vector<std::string>& before, const std::string& var) {
  if (before.empty()) return var;
  std::string s = "P(" + var + ":";
  for (size_t j = 0; j < before.size(); ++j) s += (j ? "," : "") + before[j];
  return s + ")";
}

class Normalizer {
 public:
  // `pieces`: concat and split have element definitions (coordinates split into pieces where a
  // dimension is a sum of parts); else they are opaque tensors like any operator outside.
  explicit Normalizer(bool pieces = false) : pieces_(pieces) {}

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
          WindowDims(out, x, DimName(w, 2, side), DimName(w, 3, side),
                     n.params[specs::ops::kConvStrideH], n.params[specs::ops::kConvStrideW],
                     n.params[specs::ops::kConvPadding], side);
          break;
        }
        case OpKind::kPoolAvg:
        case OpKind::kPoolMax:
          if (r != 4) break;
          dims_.Union(DimName(out, 0, side), DimName(n.inputs[0], 0, side));
          dims_.Union(DimName(out, 1, side), DimName(n.inputs[0], 1, side));
          WindowDims(out, n.inputs[0], Literal(n.params[specs::ops::kPoolKernelH]),
                     Literal(n.params[specs::ops::kPoolKernelW]),
                     n.params[specs::ops::kPoolStrideH], n.params[specs::ops::kPoolStrideW],
                     n.params[specs::ops::kPoolPadding], side);
          break;
        case OpKind::kEnlarge:
          if (r != 4) break;
          dims_.Union(DimName(out, 0, side), DimName(n.inputs[0], 0, side));
          dims_.Union(DimName(out, 1, side), DimName(n.inputs[0], 1, side));
          dims_.Union(DimName(out, 2, side), Literal(n.params[specs::ops::kEnlargeKernelH]));
          dims_.Union(DimName(out, 3, side), Literal(n.params[specs::ops::kEnlargeKernelW]));
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
        case OpKind::kConcat:
        case OpKind::kSplit: {
          if (!pieces_) break;
          // Every axis but the concat's agrees; along it the whole is the sum of the parts (a
          // split's left part is its input's tree's, settled with the trees).
          const int axis = static_cast<int>(n.params[0]);
          const bool concat = n.op == OpKind::kConcat;
          const ruledb::ValueRef whole = concat ? out : n.inputs[0],
                                 left = concat ? n.inputs[0] : out,
                                 right = concat ? n.inputs[1] : ruledb::ValueRef{out.node, 1};
          for (int d = 0; d < r; ++d)
            if (d != axis) {
              dims_.Union(DimName(whole, d, side), DimName(left, d, side));
              dims_.Union(DimName(whole, d, side), DimName(right, d, side));
            }
          if (axis < r)
            parts_.insert({DimName(whole, axis, side), DimName(left, axis, side),
                           DimName(right, axis, side)});
          break;
        }
        case OpKind::kSoftmax:
        case OpKind::kSlice:
          // Softmax keeps its input's shape. A slice is opaque, but its dimensions name the parts
          // of concatenations of its outputs.
          if (!pieces_ && n.op == OpKind::kSlice) break;
          for (int d = 0; d < r; ++d)
            if (n.op == OpKind::kSoftmax || d != n.params[specs::ops::kSliceAxis])
              dims_.Union(DimName(out, d, side), DimName(n.inputs[0], d, side));
          break;
        default:
          if (specs::ops::UnaryActivation(n.op) ||
              (pieces_ && specs::GetOp(n.op).shape_rule == specs::ops::UnaryShape))
            same(n.inputs[0]);
          break;
      }
    }
  }

  // With pieces: the split trees of both sides (`Trees`), the left part of each split tied to
  // its input's tree (where both sides type-check, a split's input has one tree along its axis:
  // trees that met must agree), and sums reconciled (A + B = A + C makes B = C; sums of equal
  // parts are equal), to a fixed point.
  bool SettleTrees(const ruledb::PatternGraph& src, const ruledb::PatternRanks& src_ranks,
                   const ruledb::PatternGraph& dst, const ruledb::PatternRanks& dst_ranks) {
    for (int round = 0; round < 16; ++round) {
      split_trees_.StartRound();
      std::string why;
      if (!split_trees_.Build(src, src_ranks, 's', &why) ||
          !split_trees_.Build(dst, dst_ranks, 'd', &why))
        return Fail(why);
      bool changed = split_trees_.changed();
      for (const auto& [w1, l1, r1] : parts_)
        for (const auto& [w2, l2, r2] : parts_) {
          const bool same_left = dims_.Find(l1) == dims_.Find(l2),
                     same_right = dims_.Find(r1) == dims_.Find(r2);
          if (same_left && same_right) changed |= dims_.Union(w1, w2);
          if (dims_.Find(w1) != dims_.Find(w2)) continue;
          if (same_left) changed |= dims_.Union(r1, r2);
          if (dims_.Find(r1) == dims_.Find(r2)) changed |= dims_.Union(l1, l2);
        }
      CloseBatchDims();
      if (!changed) return true;
    }
    return Fail("the split trees do not settle");
  }

  // Whether output `s` of the source and `d` of the target have the same split trees (both sides
  // type-checking, their types agree only then; concat associativity differs here alone).
  bool SameOutputTrees(ruledb::ValueRef s, ruledb::ValueRef d) {
    std::string why;
    return split_trees_.SameEverywhere(s, d, &why) || Fail(why);
  }

  // The pieces of dimension `dim`: the classes without parts it is the sum of, in order.
  bool Pieces(const std::string& dim, std::vector<std::string>* out, int depth = 0) {
    if (depth > 8) return Fail("dimension parts nest too deep");
    const std::string d = dims_.Find(dim);
    std::optional<std::vector<std::string>> found;
    for (const auto& [w, l, r] : parts_) {
      if (dims_.Find(w) != d) continue;
      std::vector<std::string> s;
      if (!Pieces(l, &s, depth + 1) || !Pieces(r, &s, depth + 1)) return false;
      if (found && *found != s) return Fail("a dimension is split two ways");
      found = std::move(s);
    }
    if (!found) found = std::vector<std::string>{d};
    out->insert(out->end(), found->begin(), found->end());
    return true;
  }

  // Whether coordinate `c` covers consecutive pieces of `seq`: the pieces before it are the first
  // of `seq`, and its variable ranges over the `count` that follow.
  bool Locate(const Coord& c, const std::vector<std::string>& seq, size_t* count) {
    const size_t m = c.before.size();
    if (c.var == kFirst) {
      // The first element of the piece after those before it.
      if (m >= seq.size() || !std::equal(c.before.begin(), c.before.end(), seq.begin()))
        return false;
      *count = 1;
      return true;
    }
    auto range = range_.find(c.var);
    std::vector<std::string> own;
    if (range == range_.end() || !Pieces(range->second, &own)) return false;
    if (m + own.size() > seq.size() || !std::equal(c.before.begin(), c.before.end(), seq.begin()) ||
        !std::equal(own.begin(), own.end(), seq.begin() + m))
      return false;
    *count = own.size();
    return true;
  }

  bool HasParts(const std::string& dim) {
    const std::string d = dims_.Find(dim);
    return std::any_of(parts_.begin(), parts_.end(),
                       [&](const auto& p) { return dims_.Find(std::get<0>(p)) == d; });
  }

  bool AxisPieces(ruledb::ValueRef v, char side, int d, std::vector<std::string>* out) {
    return Pieces(DimName(v, d, side), out);
  }

  // Sets the range of a coordinate variable (a dimension name).
  void SetRange(const std::string& var, const std::string& dim) { range_[var] = dims_.Find(dim); }

  // The range of output coordinate `var`: axis `d` of value `v`.
  void SetOutputRange(const std::string& var, ruledb::ValueRef v, char side, int d) {
    SetRange(var, DimName(v, d, side));
  }

  void SameShape(ruledb::ValueRef x, char xs, ruledb::ValueRef y, char ys, int rank) {
    for (int d = 0; d < rank; ++d) dims_.Union(DimName(x, d, xs), DimName(y, d, ys));
  }

  // The spatial output dimensions of a window (a convolution or a pool) over input `x` with
  // windows `kh`, `kw` (dimension names): the input's at stride 1 with padding same; else a
  // function of the input, window, stride and padding, so two windows alike over equal inputs
  // have equal outputs (CloseBatchDims).
  void WindowDims(ruledb::ValueRef out, ruledb::ValueRef x, const std::string& kh,
                  const std::string& kw, int64_t sh, int64_t sw, int64_t padding, char side) {
    const bool same = padding == static_cast<int64_t>(specs::Padding::kSame);
    const std::string k[2] = {kh, kw};
    const int64_t s[2] = {sh, sw};
    for (int j = 0; j < 2; ++j) {
      if (same && s[j] == 1) dims_.Union(DimName(out, 2 + j, side), DimName(x, 2 + j, side));
      windows_.push_back({DimName(out, 2 + j, side), DimName(x, 2 + j, side), k[j], s[j],
                          same || k[j] == Literal(1)});
      if (!same && dims_.Find(k[j]) == dims_.Find(DimName(x, 2 + j, side)))
        dims_.Union(DimName(out, 2 + j, side), Literal(1));
    }
  }

  // After both sides: a batch dimension of a product equals its operands' where those are equal
  // (broadcasting leaves it alone), and windows alike over equal inputs have equal outputs, to a
  // fixed point.
  void CloseBatchDims() {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < windows_.size(); ++i)
        for (size_t j = i + 1; j < windows_.size(); ++j) {
          const WindowDim& p = windows_[i];
          const WindowDim& q = windows_[j];
          if (p.stride == q.stride && p.padded == q.padded &&
              dims_.Find(p.in) == dims_.Find(q.in) &&
              (p.padded || dims_.Find(p.window) == dims_.Find(q.window)))
            changed |= dims_.Union(p.out, q.out);
        }
      // A valid window as large as its input has one position.
      for (const WindowDim& w : windows_)
        if (!w.padded && dims_.Find(w.window) == dims_.Find(w.in))
          changed |= dims_.Union(w.out, Literal(1));
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
        // With pieces, a sum over a dimension with parts is one sum per piece.
        std::vector<std::string> k_pieces = {k_dim};
        if (pieces_ && (k_pieces.clear(), !Pieces(k_dim, &k_pieces))) return false;
        out->clear();
        for (size_t m = 0; m < k_pieces.size(); ++m) {
          const std::string var = k_dim == Literal(1) ? Literal(0) : Var(next_var_++);
          if (var != Literal(0)) SetRange(var, k_pieces[m]);
          const std::string k = CoordText({k_pieces.begin(), k_pieces.begin() + m}, var);
          Poly part;
          if (!elem(0, operand(0, ra, {idx[r - 2], k}), &a) ||
              !elem(1, operand(1, rb, {k, idx[r - 1]}), &b))
            return false;
          if (var == Literal(0)) {
            part = Mul(a, b);
          } else if (!SumOver({{var, k_pieces[m]}}, Mul(a, b), &part)) {
            return false;
          }
          for (const auto& [mono, c] : part) AddTerm(out, mono, c);
        }
        if (!Activate(static_cast<specs::Activation>(n.params[0]), out)) return false;
        break;
      }
      case OpKind::kConstIMatmul:
        *out = Delta(idx[0], idx[1]);
        break;
      case OpKind::kEnlarge: {
        // A kernel zero-padded to kernel_h x kernel_w, centred: an axis already that size reads
        // its own coordinate, an axis of 1 reads 0 where the coordinate is the centre; another
        // size (a shifted coordinate) stays opaque.
        std::vector<std::string> at = idx;
        Poly centre{{Mono{}, Rational::Make(1, 1)}};
        for (int j = 0; j < 2; ++j) {
          const int64_t k =
              n.params[j == 0 ? specs::ops::kEnlargeKernelH : specs::ops::kEnlargeKernelW];
          const std::string in = dims_.Find(DimName(n.inputs[0], 2 + j, side));
          if (in == Literal(k)) continue;
          if (in != Literal(1) || k % 2 == 0) return Opaque(g, ranks, side, v, idx, out);
          at[2 + j] = Literal(0);
          centre = Mul(centre, Delta(idx[2 + j], Literal((k - 1) / 2)));
        }
        if (!elem(0, at, &a)) return false;
        *out = Mul(centre, a);
        break;
      }
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
      case OpKind::kPoolMax: {
        // The maximum over the window's positions inside the input (padding is ignored, and the
        // centre is always inside, so the window is never empty). Decided where it is one
        // element: a window of 1, or with padding same an input axis of 1 (only the centre is
        // inside), or a value the same at every position of the window; else opaque.
        if (idx.size() != 4) return Fail("pool_max of the wrong rank");
        const bool same =
            n.params[specs::ops::kPoolPadding] == static_cast<int64_t>(specs::Padding::kSame);
        std::vector<std::string> at = {idx[0], idx[1], "", ""}, taps;
        for (int j = 0; j < 2; ++j) {
          const int64_t k = n.params[j == 0 ? specs::ops::kPoolKernelH : specs::ops::kPoolKernelW];
          const int64_t stride =
              n.params[j == 0 ? specs::ops::kPoolStrideH : specs::ops::kPoolStrideW];
          const std::string in = dims_.Find(DimName(n.inputs[0], 2 + j, side));
          std::string tap = Literal(0);
          if (k > 1 && same && in == Literal(1)) {
            tap = Literal((k - 1) / 2);
          } else if (k > 1) {
            tap = Var(next_var_++);
            SetRange(tap, Literal(k));
            taps.push_back(tap);
          }
          at[2 + j] = CanonCoords("Y(" + idx[2 + j] + "," + tap + ",s" + std::to_string(stride) +
                                  (same ? ",same," : ",valid,") + Literal(k) + ")");
        }
        if (!elem(0, at, out)) return false;
        const std::string text = Render(*out);
        for (const std::string& tap : taps)
          if (text.find(tap) != std::string::npos) return Opaque(g, ranks, side, v, idx, out);
        if (!Activate(static_cast<specs::Activation>(n.params[specs::ops::kPoolActivation]), out))
          return false;
        break;
      }
      case OpKind::kSoftmax: {
        // exp(x[i]) / (the sum over k of exp(x[i with k on the axis])): one slice along the axis
        // (per piece of the axis where it has parts); an axis of 1 gives 1.
        const int axis = static_cast<int>(n.params[specs::ops::kSoftmaxAxis]);
        if (axis < 0 || axis >= static_cast<int>(idx.size())) return Fail("an axis out of range");
        const std::string dim = dims_.Find(DimName(v, axis, side));
        if (dim == Literal(1)) {
          *out = Poly{{Mono{}, Rational::Make(1, 1)}};
          break;
        }
        std::vector<std::string> k_pieces = {dim};
        if (pieces_ && (k_pieces.clear(), !Pieces(dim, &k_pieces))) return false;
        Poly total;
        for (size_t m = 0; m < k_pieces.size(); ++m) {
          const std::string var = Var(next_var_++);
          SetRange(var, k_pieces[m]);
          std::vector<std::string> at = idx;
          at[axis] = CoordText({k_pieces.begin(), k_pieces.begin() + m}, var);
          Poly part;
          if (!elem(0, at, &a) || !Activate(specs::Activation::kExp, &a) ||
              !SumOver({{var, k_pieces[m]}}, a, &part))
            return false;
          for (const auto& [mono, c] : part) AddTerm(&total, mono, c);
        }
        if (!elem(0, idx, out) || !Activate(specs::Activation::kExp, out) ||
            !Activate(specs::Activation::kRecip, &total))
          return false;
        *out = Mul(*out, total);
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
              if (pieces_ && HasParts(dim)) return Fail("a mean over a dimension with parts");
              bound.emplace_back(Var(next_var_++), dim);
              SetRange(bound.back().first, dim);
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
      case OpKind::kConcat: {
        // a's element where the coordinate lies in a's pieces, b's (shifted past them) where it
        // lies in b's; a coordinate across both stays an opaque concat.
        if (!pieces_) return Opaque(g, ranks, side, v, idx, out);
        const int axis = static_cast<int>(n.params[specs::ops::kConcatAxis]);
        std::vector<std::string> left, seq;
        Coord c;
        if (!Pieces(DimName(n.inputs[0], axis, side), &left) ||
            !Pieces(DimName(n.inputs[1], axis, side), &seq))
          return false;
        seq.insert(seq.begin(), left.begin(), left.end());
        size_t count = 0;
        if (!ParseCoord(idx[axis], &c) || !Locate(c, seq, &count))
          return Opaque(g, ranks, side, v, idx, out);
        std::vector<std::string> at = idx;
        if (c.before.size() + count <= left.size()) {
          if (!elem(0, at, out)) return false;
        } else if (c.before.size() >= left.size()) {
          at[axis] = CoordText({c.before.begin() + left.size(), c.before.end()}, c.var);
          if (!elem(1, at, out)) return false;
        } else {
          return Opaque(g, ranks, side, v, idx, out);
        }
        break;
      }
      case OpKind::kSplit: {
        // The left part reads its input where it is; the right one past the left part's pieces
        // (the left part's dimension is the input's tree's, settled before).
        if (!pieces_) return Opaque(g, ranks, side, v, idx, out);
        const int axis = static_cast<int>(n.params[specs::ops::kSplitAxis]);
        std::vector<std::string> at = idx;
        if (v.index == 1) {
          Coord c;
          std::vector<std::string> before;
          if (!ParseCoord(idx[axis], &c))
            return Fail("a split read at a coordinate without pieces");
          if (!Pieces(DimName({v.node, 0}, axis, side), &before)) return false;
          before.insert(before.end(), c.before.begin(), c.before.end());
          at[axis] = CoordText(before, c.var);
        }
        if (!elem(0, at, out)) return false;
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
    // f(g x) = g f(x) for an indicator g where f(0) = 0: the indicators every term has move out.
    Mono common;
    if (ZeroAtZero(act) && !p->empty()) {
      common = p->begin()->first;
      for (auto it = common.begin(); it != common.end();)
        it = it->first.rfind("G(", 0) == 0 ? std::next(it) : common.erase(it);
      for (const auto& [m, c] : *p)
        for (auto it = common.begin(); it != common.end();)
          it = m.count(it->first) ? std::next(it) : common.erase(it);
    }
    Poly rest;
    for (const auto& [m, c] : *p) {
      Mono r = m;
      for (const auto& [f, e] : common) r.erase(f);
      AddTerm(&rest, r, c);
    }
    *p = Poly{{common, Rational::Make(1, 1)}};
    *p = Mul(*p, Atom("F" + name + "(" + Render(rest) + ")"));
    return true;
  }

  static bool ZeroAtZero(specs::Activation act) {
    using A = specs::Activation;
    switch (act) {
      case A::kRelu:
      case A::kTanh:
      case A::kRelu6:
      case A::kHardSwish:
      case A::kSilu:
      case A::kGelu:
      case A::kGeluTanh:
      case A::kErf:
      case A::kSqrt:
        return true;
      default:
        return false;
    }
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
      std::map<std::string, std::string> outer;  // the ranges of an enclosing opaque's
      for (int d = 0; d < r; ++d) {
        at.push_back("@" + std::to_string(d) + ";");
        if (auto it = range_.find(at.back()); it != range_.end()) outer.insert(*it);
        SetRange(at.back(), DimName(in, d, side));
      }
      Poly p;
      const bool ok = Elem(g, ranks, side, in, at, &p);
      for (int d = 0; d < r; ++d) range_.erase(at[d]);
      for (const auto& kv : outer) range_.insert(kv);
      if (!ok) return false;
      key += "|" + Render(p);
      // With pieces, an argument may read a part of a tensor's axis (a split's), so the same
      // text over another range is another tensor: the ranges are part of the key.
      for (int d = 0; d < r && pieces_; ++d)
        key += (d ? "," : "<") + dims_.Find(DimName(in, d, side)) + (d + 1 == r ? ">" : "");
    }
    *out = Atom("E" + key + "}" + Index(idx));
    return Activate(act, out);
  }

  // Monomial product; the sums among the factors merge into one.
  Mono MulMono(const Mono& x, const Mono& y) {
    Mono m = x;
    for (const auto& [f, e] : y) m[f] += e;
    // Indicators and Kronecker deltas are 0 or 1: their powers are themselves.
    for (auto& [f, e] : m)
      if (f.rfind("G(", 0) == 0 || f.rfind("D(", 0) == 0) e = 1;
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
      if (!s.ranges.empty()) range_[renames.back().second] = s.ranges[j];
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
    // With pieces a coordinate may range over a part of the dimension its tensors have, so the
    // ranges are part of the sum.
    if (pieces_)
      for (const std::string& b : bound)
        if (!range_.count(b)) return Fail("a sum over a coordinate of unknown range");
    std::string best;
    Mono best_body;
    std::vector<std::string> best_ranges;
    bool ambiguous = false;  // two orders with one text and different ranges
    const bool known = std::all_of(bound.begin(), bound.end(),
                                   [&](const std::string& b) { return range_.count(b) > 0; });
    do {
      Mono renamed;
      for (const auto& [f, e] : body) {
        std::string g = f;
        for (size_t j = 0; j < bound.size(); ++j)
          g = ReplaceAll(g, bound[order[j]],
                         "$" + std::to_string(level) + "." + std::to_string(j) + ";");
        renamed[g] += e;
      }
      // The ranges are kept (for the coordinates Open makes) wherever they are known; with
      // pieces they are part of the text too.
      std::vector<std::string> ranges;
      std::string text;
      for (size_t j = 0; j < bound.size() && known; ++j) {
        ranges.push_back(dims_.Find(range_.at(bound[order[j]])));
        if (pieces_) text += (j ? "," : "<") + ranges.back();
      }
      if (pieces_) text += ">";
      text += "{" + RenderMono(renamed) + "}";
      if (text == best && ranges != best_ranges) ambiguous = true;
      if (best.empty() || text < best) {
        best = std::move(text);
        best_body = std::move(renamed);
        best_ranges = std::move(ranges);
        ambiguous = false;
      }
    } while (std::next_permutation(order.begin(), order.end()));
    *out = "S" + std::to_string(level) + ":" + std::to_string(bound.size()) + best;
    if (ambiguous) best_ranges.clear();
    auto [it, fresh] = sums_.emplace(
        *out, SumInfo{level, static_cast<int>(bound.size()), std::move(best_body), best_ranges});
    // One text, two sums whose coordinates range differently (the text does not say): their
    // ranges are not known.
    if (!fresh && it->second.ranges != best_ranges) it->second.ranges.clear();
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
      bool vanishes = false;  // a delta of coordinates in different pieces
      for (bool again = true; again && !vanishes;) {
        again = false;
        for (const auto& [f, e] : inside) {
          std::string x, y;
          if (!ParseDelta(f, &x, &y)) continue;
          auto bx = std::find(vars.begin(), vars.end(), x),
               by = std::find(vars.begin(), vars.end(), y);
          if (bx == vars.end() && by == vars.end()) continue;
          std::string gone = bx != vars.end() ? x : y, kept = bx != vars.end() ? y : x;
          if (pieces_ && !Substitutes(gone, kept)) {
            // The other coordinate, where it is bound too, may range over the first's range.
            if (bx == vars.end() || by == vars.end() || !Substitutes(y, x)) continue;
            std::swap(gone, kept);
          }
          Mono next;
          bool zero = false;
          for (const auto& [g, k] : inside) {
            if (g == f) continue;
            std::string h = SimplifyFactor(ReplaceAll(g, gone, kept));
            if (h.empty()) continue;  // an indicator that holds everywhere: 1
            std::string p, q;
            if (ParseDelta(h, &p, &q)) {
              const Poly d = Delta(p, q);
              if (d.empty()) zero = true;
              if (d.empty() || d.begin()->first.empty()) continue;  // 0, or delta(x, x) = 1
              h = d.begin()->first.begin()->first;
            }
            next[h] += k;
          }
          if (zero) {
            vanishes = true;
            break;
          }
          inside = std::move(next);
          vars.erase(std::find(vars.begin(), vars.end(), gone));
          again = true;
          break;
        }
      }
      if (vanishes) continue;
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
        // Its dimension: as given, or the range an opened sum's coordinate was made with.
        auto given =
            std::find_if(bound.begin(), bound.end(), [&](const auto& b) { return b.first == v; });
        auto opened = range_.find(v);
        if (given == bound.end() && opened == range_.end())
          return Fail("a sum lost a coordinate of unknown range");
        const std::string dim = given != bound.end() ? given->second : dims_.Find(opened->second);
        if (int64_t k = LiteralValue(dim); k > 0)
          coef = coef * Rational::Make(k, 1);
        else
          outside["N(" + dim + ")"] += 1;
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
  static std::string Literal(int64_t k) { return LiteralDim(k); }

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
    if (pieces_ && (HasParts(kh) || HasParts(kw))) return Fail("a window with parts");
    if (a != Literal(0)) SetRange(a, kh);
    if (b != Literal(0)) SetRange(b, kw);
    // The input coordinate o*stride - pad + k (pad (window-1)/2 for same, else 0), in the
    // canonical form CanonCoords gives it (o itself, k itself or `V(o,stride)` where that is what
    // it is).
    auto coord = [&](const std::string& o, const std::string& k, int64_t stride,
                     const std::string& window) {
      return CanonCoords("Y(" + o + "," + k + ",s" + std::to_string(stride) +
                         (same ? ",same," : ",valid,") + window + ")");
    };
    const std::string y = coord(idx[2], a, sh, kh), xx = coord(idx[3], b, sw, kw);
    // Where the coordinate may leave the input (padding), G(coordinate | input dimension) says
    // whether it lies inside; not for an output coordinate of an output as tall as the input, or 0.
    Mono guard;
    auto guard_axis = [&](const std::string& c, int axis) {
      const std::string in_dim = dims_.Find(DimName(x, axis, side));
      if (c == Literal(0)) return;
      if (c == idx[axis] && dims_.Find(DimName(v, axis, side)) == in_dim) return;
      const std::string g = SimplifyFactor("G(" + c + "|" + in_dim + ")");
      if (!g.empty()) guard[g] = 1;
    };
    if (same) {
      guard_axis(y, 2);
      guard_axis(xx, 3);
    }
    using Bound = std::vector<std::pair<std::string, std::string>>;
    Bound bound;
    if (a != Literal(0)) bound.emplace_back(a, kh);
    if (b != Literal(0)) bound.emplace_back(b, kw);
    Poly xe, we, body;
    // The sums of the element: one, or one per piece of the input channels.
    std::vector<std::pair<Bound, Poly>> terms;
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
      std::vector<std::string> c_pieces = {c_dim};
      if (pieces_ && (c_pieces.clear(), !Pieces(c_dim, &c_pieces))) return false;
      for (size_t m = 0; m < c_pieces.size(); ++m) {
        const std::string var = c_dim == Literal(1) ? Literal(0) : Var(next_var_++);
        if (var != Literal(0)) SetRange(var, c_pieces[m]);
        const std::string c = CoordText({c_pieces.begin(), c_pieces.begin() + m}, var);
        Bound with_c = bound;
        if (var != Literal(0)) with_c.emplace_back(var, c_pieces[m]);
        if (!elem(x, {idx[0], c, y, xx}, &xe) || !elem(n.inputs[1], {idx[1], c, a, b}, &we))
          return false;
        terms.emplace_back(std::move(with_c),
                           Mul(Poly{{guard, Rational::Make(1, 1)}}, Mul(xe, we)));
      }
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
    if (terms.empty()) terms.emplace_back(bound, body);
    out->clear();
    for (const auto& [over, term] : terms) {
      Poly sum = term;
      if (!over.empty() && !SumOver(over, term, &sum)) return false;
      for (const auto& [mono, c] : sum) AddTerm(out, mono, c);
    }
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
  // The element of an identity matrix. Coordinates with pieces: equal offsets compare their
  // variables; a coordinate whose pieces all lie before the other's is never equal to it.
  Poly Delta(const std::string& x, const std::string& y) {
    if (x == y) return Poly{{Mono{}, Rational::Make(1, 1)}};
    if (x.rfind("#K", 0) == 0 && y.rfind("#K", 0) == 0) return Poly{};  // two other integers
    Coord cx, cy;
    if (pieces_ && ParseCoord(x, &cx) && ParseCoord(y, &cy) &&
        (!cx.before.empty() || !cy.before.empty())) {
      if (cx.before == cy.before) return Delta(cx.var, cy.var);
      if (Below(cx, cy) || Below(cy, cx)) return Poly{};
    }
    return Atom(DeltaFactor(x, y));
  }

  // Whether coordinate a is below coordinate b wherever both are in range: a's pieces end where
  // b's pieces before it start, or earlier.
  bool Below(const Coord& a, const Coord& b) {
    auto range = range_.find(a.var);
    std::vector<std::string> end = a.before;
    if (range == range_.end() || !Pieces(range->second, &end)) return false;
    return end.size() <= b.before.size() && std::equal(end.begin(), end.end(), b.before.begin());
  }

  // A factor after a substitution: its window coordinates in canonical form (CanonCoords), and
  // an indicator 1 (returned as "") where the type rules put its coordinate inside
  // (InsideWindow: a window's centre, an unpadded window's read), where it is an integer below a
  // literal dimension, or a coordinate variable in a dimension its range is tied to: all exact,
  // not assumptions about shapes. Any other factor is returned as it is.
  std::string SimplifyFactor(std::string f) {
    f = CanonCoords(f);
    if (f.rfind("G(", 0) != 0 || f.back() != ')') return f;
    const std::string inner = f.substr(2, f.size() - 3);
    const size_t bar = inner.rfind('|');
    if (bar == std::string::npos) return f;
    const std::string var = inner.substr(0, bar);
    if (InsideWindow(var, inner.substr(bar + 1))) return "";
    // An integer in a dimension of known size: 1 inside (0 outside is left as it is).
    if (var.rfind("#K", 0) == 0 && LiteralValue(inner.substr(bar + 1)) > LiteralValue(var))
      return "";
    auto range = range_.find(var);
    if (!IsVariable(var) || range == range_.end()) return f;
    return dims_.Find(range->second) == dims_.Find(inner.substr(bar + 1)) ? "" : f;
  }

  // Whether coordinate `c` lies inside dimension `dim` by the type rules (the windows' records,
  // `windows_`): a window's centre `V(o,S)` (padding same, or a window of 1) with o ranging over
  // that window's (dim-1)/S + 1 output positions, so S*o <= dim-1; or an unpadded window's read
  // `Y(o,k,s<S>,valid,K)` (S*o + k) with o over the output of a valid window of stride S over
  // `dim` (or 0) and k over at most that window, so S*o + k <= S*((dim-K)/S) + K-1 <= dim-1.
  bool InsideWindow(const std::string& c, const std::string& dim) {
    std::vector<std::string> args;
    if (SplitCall(c, 'V', &args) && args.size() == 2) {
      auto range = range_.find(args[0]);
      if (!IsVariable(args[0]) || range == range_.end()) return false;
      const std::string o_range = dims_.Find(range->second);
      const int64_t stride = std::atoll(args[1].c_str());
      return std::any_of(windows_.begin(), windows_.end(), [&](const WindowDim& w) {
        return w.padded && w.stride == stride && dims_.Find(w.in) == dims_.Find(dim) &&
               dims_.Find(w.out) == o_range;
      });
    }
    if (!SplitCall(c, 'Y', &args) || args.size() != 5 || args[3] != "valid") return false;
    const std::string &o = args[0], &k = args[1];
    const int64_t stride = std::atoll(args[2].c_str() + 1);
    auto range_of = [&](const std::string& var) -> std::string {
      auto it = range_.find(var);
      return IsVariable(var) && it != range_.end() ? dims_.Find(it->second) : "";
    };
    const std::string o_range = range_of(o), k_range = range_of(k);
    if (o != Literal(0) && o_range.empty()) return false;
    for (const WindowDim& w : windows_) {
      if (w.padded || w.stride != stride || dims_.Find(w.in) != dims_.Find(dim)) continue;
      if (o != Literal(0) && dims_.Find(w.out) != o_range) continue;
      const std::string window = dims_.Find(w.window);
      const int64_t size = LiteralValue(window);
      const bool fits = k.rfind("#K", 0) == 0 ? size > 0 && LiteralValue(k) < size
                        : k_range.empty()
                            ? false
                            : k_range == window || (size > 0 && LiteralValue(k_range) > 0 &&
                                                    LiteralValue(k_range) <= size);
      if (fits) return true;
    }
    return false;
  }

  // Window coordinates in canonical form, innermost first. `Y(o,k,s<S>,<pad>,K)` is the input
  // coordinate S*o - P + k of a window K (P = (K-1)/2 with padding same, else 0), `V(o,S)` is S*o.
  // Identities: the centre of an odd window with padding same, and the first offset of an
  // unpadded one (valid, or a window of 1), read S*o; a window read at the output coordinate 0
  // reads the same input coordinates at any stride; a window read at S*o with stride T is read
  // at o with stride S*T; V(o,1) = o, V(0,S) = 0, V(V(o,S),T) = V(o,S*T); an unpadded window at
  // output 0 reads its offset k.
  static std::string CanonCoords(std::string f) {
    for (size_t at = f.size(); at-- > 0;) {
      if ((f[at] != 'Y' && f[at] != 'V') || at + 1 >= f.size() || f[at + 1] != '(') continue;
      if (at > 0 && std::isalpha(static_cast<unsigned char>(f[at - 1]))) continue;
      size_t end = at + 1;  // the parenthesis matching f[at + 1]
      for (int depth = 0; end < f.size(); ++end) {
        if (f[end] == '(') ++depth;
        if (f[end] == ')' && --depth == 0) break;
      }
      std::vector<std::string> args;
      if (end >= f.size() || !SplitCall(f.substr(at, end + 1 - at), f[at], &args))
        break;  // unbalanced: not ours
      const std::string text = f[at] == 'Y' ? CanonWindow(args) : CanonScaled(args);
      if (!text.empty()) f.replace(at, end + 1 - at, text);
    }
    return f;
  }

  // S*o for `V(o,S)`'s arguments; empty when they are not two.
  static std::string CanonScaled(const std::vector<std::string>& args) {
    if (args.size() != 2) return "";
    int64_t s = std::atoll(args[1].c_str());
    std::string o = args[0];
    std::vector<std::string> inner;
    if (SplitCall(o, 'V', &inner) && inner.size() == 2) {
      s *= std::atoll(inner[1].c_str());
      o = inner[0];
    }
    if (s == 1 || o == Literal(0)) return o;
    return "V(" + o + "," + std::to_string(s) + ")";
  }

  static std::string CanonWindow(const std::vector<std::string>& args) {
    if (args.size() != 5 || args[2].empty() || args[2][0] != 's') return "";
    std::string o = args[0];
    const std::string& k = args[1];
    int64_t s = std::atoll(args[2].c_str() + 1);
    const bool same = args[3] == "same";
    const std::string& window = args[4];
    std::vector<std::string> inner;
    if (SplitCall(o, 'V', &inner) && inner.size() == 2) {
      s *= std::atoll(inner[1].c_str());
      o = inner[0];
    }
    if (o == Literal(0)) s = 1;
    const int64_t kv = LiteralValue(window);
    const bool unpadded = !same || window == Literal(1);
    const bool centre = same && kv % 2 == 1 && k == Literal((kv - 1) / 2);
    if (centre || (unpadded && k == Literal(0))) return CanonScaled({o, std::to_string(s)});
    if (unpadded && o == Literal(0)) return k;
    // A padded window read at an unpadded one's coordinate s'*o' + k' with s*k' its padding
    // (K-1)/2: s*s'*o' + k, the unpadded read at o' with stride s*s'.
    if (same && kv % 2 == 1 && SplitCall(o, 'Y', &inner) && inner.size() == 5 &&
        inner[3] == "valid" && inner[1].rfind("#K", 0) == 0 &&
        s * LiteralValue(inner[1]) == (kv - 1) / 2)
      return CanonWindow({inner[0], k, "s" + std::to_string(s * std::atoll(inner[2].c_str() + 1)),
                          "valid", window});
    // An unpadded window read at an unpadded one's coordinate, at stride 1: s'*o' + k' + k, the
    // same with the two offsets swapped; the least first (the windows go with their offsets).
    if (!same && s == 1 && SplitCall(o, 'Y', &inner) && inner.size() == 5 && inner[3] == "valid" &&
        k < inner[1])
      return CanonWindow({CanonWindow({inner[0], k, inner[2], "valid", window}), inner[1], "s1",
                          "valid", inner[4]});
    return "Y(" + o + "," + k + ",s" + std::to_string(s) + "," + (unpadded ? "valid" : "same") +
           "," + window + ")";
  }

  // Whether `text` is exactly `<name>(...)`; its top-level arguments.
  static bool SplitCall(const std::string& text, char name, std::vector<std::string>* args) {
    args->clear();
    if (text.size() < 3 || text[0] != name || text[1] != '(' || text.back() != ')') return false;
    int depth = 0;
    size_t start = 2;
    for (size_t i = 2; i + 1 < text.size(); ++i) {
      const char c = text[i];
      if (c == '(') ++depth;
      if (c == ')' && --depth < 0) return false;
      if (c == ',' && depth == 0) {
        args->push_back(text.substr(start, i - start));
        start = i + 1;
      }
    }
    if (depth != 0) return false;
    args->push_back(text.substr(start, text.size() - 1 - start));
    return true;
  }

  // Whether the sum over bound coordinate `gone` of f(gone) delta(gone, kept) is f(kept): kept
  // ranges over gone's range (or is a literal inside it).
  bool Substitutes(const std::string& gone, const std::string& kept) {
    auto g = range_.find(gone), k = range_.find(kept);
    if (g == range_.end()) return false;
    if (kept.rfind("#K", 0) == 0) return LiteralValue(kept) < LiteralValue(g->second);
    return k != range_.end() && IsVariable(kept) && dims_.Find(k->second) == dims_.Find(g->second);
  }

  // A spatial axis of a window's output: its input axis, window, stride, and whether its size
  // is (H-1)/stride + 1 whatever the window (padding same, or a window of 1).
  struct WindowDim {
    std::string out, in, window;
    int64_t stride;
    bool padded;
  };

  struct Product {
    char side;
    ruledb::ValueRef out, a, b;
    int ra, rb, r;
  };

  const bool pieces_;
  Dims dims_;
  std::vector<Product> matmuls_;
  std::vector<WindowDim> windows_;
  // With pieces: dimensions that are sums (whole, left part, right part; dimension names), the
  // split trees of the values, and the range of each coordinate variable.
  std::set<std::tuple<std::string, std::string, std::string>> parts_;
  SplitTrees split_trees_{&dims_};
  std::map<std::string, std::string> range_;
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

namespace {

// The rule at `input_ranks`, with concat and split defined (`pieces`) or opaque.
IndexLevelResult ProveWith(const ruledb::Rule& rule, const std::vector<int>& input_ranks,
                           bool pieces) {
  IndexLevelResult r;
  if (rule.src.outputs.size() != rule.dst.outputs.size() || rule.src.outputs.empty()) {
    r.reason = "source and target have different numbers of outputs";
    return r;
  }
  Normalizer n(pieces);
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
  if (pieces && !n.SettleTrees(rule.src, src_ranks, rule.dst, dst_ranks)) {
    r.reason = n.error();
    return r;
  }
  for (size_t o = 0; o < rule.src.outputs.size(); ++o) {
    const ruledb::ValueRef s = rule.src.outputs[o], d = rule.dst.outputs[o];
    const int rank = src_ranks.Rank(s);
    // With pieces, one comparison per piece of the output's axes (the split trees equal too).
    std::vector<std::vector<std::string>> axis_pieces(rank);
    size_t combos = 1;
    for (int a = 0; a < rank && pieces; ++a) {
      if (!n.AxisPieces(s, 's', a, &axis_pieces[a])) {
        r.reason = n.error();
        return r;
      }
      combos *= axis_pieces[a].size();
    }
    if (combos > kMaxOutputPieces || (pieces && !n.SameOutputTrees(s, d))) {
      r.reason = combos > kMaxOutputPieces ? "too many pieces" : n.error();
      return r;
    }
    for (size_t combo = 0; combo < combos; ++combo) {
      std::vector<std::string> idx = OutputIndex(rank);
      for (int a = 0; a < rank && !pieces; ++a) n.SetOutputRange(idx[a], s, 's', a);
      for (size_t a = rank, rest = combo; pieces && a-- > 0;) {
        const std::vector<std::string>& p = axis_pieces[a];
        const size_t m = rest % p.size();
        rest /= p.size();
        n.SetRange(idx[a], p[m]);
        idx[a] = CoordText({p.begin(), p.begin() + m}, idx[a]);
      }
      Poly ps, pd;
      if (!n.Elem(rule.src, src_ranks, 's', s, idx, &ps) ||
          !n.Elem(rule.dst, dst_ranks, 'd', d, idx, &pd)) {
        r.reason = n.error();
        return r;
      }
      if (ps != pd) {
        r.reason = "output " + std::to_string(o) + ": normal forms differ: " + Render(ps) + " vs " +
                   Render(pd);
        return r;
      }
    }
  }
  r.proved = true;
  r.used = n.used();
  return r;
}

bool HasConcatOrSplit(const ruledb::PatternGraph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [](const ruledb::PatternNode& n) {
    return n.op == OpKind::kConcat || n.op == OpKind::kSplit;
  });
}

}  // namespace

IndexLevelResult ProveAtIndexLevel(const ruledb::Rule& rule, const std::vector<int>& input_ranks) {
  // Concat and split defined first; where that decides nothing, opaque as before (what the
  // pieces cannot place, such as a concat read across both its parts inside an opaque operator,
  // may still be congruent).
  if (HasConcatOrSplit(rule.src) || HasConcatOrSplit(rule.dst)) {
    IndexLevelResult r = ProveWith(rule, input_ranks, true);
    if (r.proved) return r;
    IndexLevelResult opaque = ProveWith(rule, input_ranks, false);
    if (!opaque.proved) opaque.reason = "with pieces: " + r.reason + "; opaque: " + opaque.reason;
    return opaque;
  }
  return ProveWith(rule, input_ranks, false);
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
