// Canonical polynomials over hash-consed atoms.
#include "verify/poly.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "base/status.h"

namespace verisub::verify {

Rational Rational::Make(int64_t n, int64_t d) {
  VERISUB_CHECK(d != 0);
  if (d < 0) n = -n, d = -d;
  int64_t g = std::gcd(n < 0 ? -n : n, d);
  if (g > 1) n /= g, d /= g;
  return {n, d};
}

namespace {

int64_t Checked(__int128 v) {
  VERISUB_CHECK(v <= INT64_MAX && v >= -INT64_MAX);
  return static_cast<int64_t>(v);
}

}  // namespace

Rational operator+(const Rational& a, const Rational& b) {
  if (a.den == b.den) return Rational::Make(Checked(__int128{a.num} + b.num), a.den);
  __int128 n = __int128{a.num} * b.den + __int128{b.num} * a.den;
  __int128 d = __int128{a.den} * b.den;
  return Rational::Make(Checked(n), Checked(d));
}

Rational operator*(const Rational& a, const Rational& b) {
  return Rational::Make(Checked(__int128{a.num} * b.num), Checked(__int128{a.den} * b.den));
}

namespace {

inline uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

// Table slots come from the high bits too (MurmurHash3's finalizer).
inline uint64_t Slot(uint64_t h) {
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace

template <class Eq>
int64_t PolyStore::IdTable::Find(uint64_t hash, Eq&& eq) const {
  if (slots_.empty()) return -1;
  size_t mask = slots_.size() - 1;
  for (size_t i = Slot(hash) & mask;; i = (i + 1) & mask) {
    if (slots_[i] == 0) return -1;
    if (hashes_[i] == hash && eq(slots_[i] - 1)) return slots_[i] - 1;
  }
}

void PolyStore::IdTable::Insert(uint64_t hash, uint32_t id) {
  if (2 * (used_ + 1) > slots_.size()) {
    std::vector<uint32_t> old_slots = std::move(slots_);
    std::vector<uint64_t> old_hashes = std::move(hashes_);
    size_t n = old_slots.empty() ? 1024 : 2 * old_slots.size();
    slots_.assign(n, 0);
    hashes_.assign(n, 0);
    used_ = 0;
    for (size_t i = 0; i < old_slots.size(); ++i)
      if (old_slots[i]) Insert(old_hashes[i], old_slots[i] - 1);
  }
  size_t mask = slots_.size() - 1;
  size_t i = Slot(hash) & mask;
  while (slots_[i] != 0) i = (i + 1) & mask;
  slots_[i] = id + 1;
  hashes_[i] = hash;
  ++used_;
}

PolyStore::PolyStore() { Clear(); }

void PolyStore::Clear() {
  atoms_.clear();
  atom_table_ = IdTable();
  mono_factors_.clear();
  monos_.clear();
  mono_table_ = IdTable();
  poly_terms_.clear();
  polys_.clear();
  poly_table_ = IdTable();
  InternMono(nullptr, 0);
  scratch_.clear();
  InternScratch();
  scratch_.push_back(Term{0, Rational{1, 1}});
  InternScratch();
}

PolyStore::Id PolyStore::InternScratch() {
  uint64_t h = scratch_.size();
  for (const Term& t : scratch_)
    h = Mix(Mix(Mix(h, t.mono), static_cast<uint64_t>(t.coef.num)),
            static_cast<uint64_t>(t.coef.den));
  int64_t found = poly_table_.Find(h, [&](uint32_t id) {
    const Span& sp = polys_[id];
    if (sp.size != scratch_.size()) return false;
    const Term* t = poly_terms_.data() + sp.begin;
    for (size_t i = 0; i < sp.size; ++i)
      if (t[i].mono != scratch_[i].mono || !(t[i].coef == scratch_[i].coef)) return false;
    return true;
  });
  if (found >= 0) {
    scratch_.clear();
    return static_cast<Id>(found);
  }
  Id id = static_cast<Id>(polys_.size());
  polys_.push_back(
      Span{static_cast<uint32_t>(poly_terms_.size()), static_cast<uint32_t>(scratch_.size())});
  poly_terms_.insert(poly_terms_.end(), scratch_.begin(), scratch_.end());
  poly_table_.Insert(h, id);
  scratch_.clear();
  return id;
}

uint32_t PolyStore::InternMono(const Factor* f, size_t n) {
  uint64_t h = n;
  for (size_t i = 0; i < n; ++i) h = Mix(Mix(h, f[i].first), f[i].second);
  int64_t found = mono_table_.Find(h, [&](uint32_t id) {
    const Span& sp = monos_[id];
    return sp.size == n && std::equal(f, f + n, mono_factors_.begin() + sp.begin);
  });
  if (found >= 0) return static_cast<uint32_t>(found);
  uint32_t id = static_cast<uint32_t>(monos_.size());
  monos_.push_back(Span{static_cast<uint32_t>(mono_factors_.size()), static_cast<uint32_t>(n)});
  mono_factors_.insert(mono_factors_.end(), f, f + n);
  mono_table_.Insert(h, id);
  return id;
}

uint32_t PolyStore::InternAtom(Atom a) {
  uint64_t h = Mix(static_cast<uint64_t>(a.kind), static_cast<uint64_t>(a.param));
  for (Id x : a.args) h = Mix(h, x);
  int64_t found = atom_table_.Find(h, [&](uint32_t id) {
    const Atom& b = atoms_[id];
    return b.kind == a.kind && b.param == a.param && b.args == a.args;
  });
  if (found >= 0) return static_cast<uint32_t>(found);
  uint32_t id = static_cast<uint32_t>(atoms_.size());
  atoms_.push_back(std::move(a));
  atom_table_.Insert(h, id);
  return id;
}

PolyStore::Id PolyStore::Constant(Rational c) {
  if (c.is_zero()) return Zero();
  scratch_.push_back(Term{0, c});
  return InternScratch();
}

PolyStore::Id PolyStore::Input(int tensor, int64_t index) {
  return Apply(AtomKind::kInput, (static_cast<int64_t>(tensor) << 40) | index, {});
}

PolyStore::Id PolyStore::Apply(AtomKind kind, int64_t param, std::vector<Id> args) {
  if (kind == AtomKind::kMax) {
    std::vector<Id> flat;
    for (Id a : args) {
      const Span sp = polys_[a];
      const Term* t = terms(a);
      if (sp.size == 1 && t[0].coef == Rational{1, 1} && monos_[t[0].mono].size == 1) {
        const Factor f = mono_factors_[monos_[t[0].mono].begin];
        if (f.second == 1 && atoms_[f.first].kind == AtomKind::kMax) {
          const std::vector<Id> inner = atoms_[f.first].args;
          flat.insert(flat.end(), inner.begin(), inner.end());
          continue;
        }
      }
      flat.push_back(a);
    }
    std::sort(flat.begin(), flat.end());
    flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
    if (flat.size() == 1) return flat[0];
    args = std::move(flat);
  }
  Factor f{InternAtom(Atom{kind, param, std::move(args)}), 1};
  uint32_t mono = InternMono(&f, 1);
  scratch_.push_back(Term{mono, Rational{1, 1}});
  return InternScratch();
}

PolyStore::Id PolyStore::MonoPoly(uint32_t mono) {
  scratch_.clear();
  scratch_.push_back(Term{mono, Rational{1, 1}});
  return InternScratch();
}

PolyStore::Id PolyStore::Power(Id p, uint32_t e) {
  Id r = One();
  for (uint32_t i = 0; i < e; ++i) r = Mul(r, p);
  return r;
}

PolyStore::Id PolyStore::Exp(Id p) {
  // Integer multiples up to this size become powers; larger ones stay one atom.
  constexpr int64_t kMaxPower = 64;
  const std::vector<Term> ts(terms(p), terms(p) + polys_[p].size);
  Id r = One();
  for (const Term& t : ts) {
    const Id m = MonoPoly(t.mono);
    const int64_t n = t.coef.num;
    Id factor;
    if (t.coef.den == 1 && n != 0 && n >= -kMaxPower && n <= kMaxPower) {
      Id e = Apply(AtomKind::kActivation, static_cast<int64_t>(specs::Activation::kExp), {m});
      if (n < 0) e = Apply(AtomKind::kReciprocal, 0, {e});
      factor = Power(e, static_cast<uint32_t>(n < 0 ? -n : n));
    } else {
      factor = Apply(AtomKind::kActivation, static_cast<int64_t>(specs::Activation::kExp),
                     {Scale(m, t.coef)});
    }
    r = Mul(r, factor);
  }
  return r;
}

PolyStore::Id PolyStore::Reciprocal(Id p) {
  if (polys_[p].size != 1) return Apply(AtomKind::kReciprocal, 0, {p});
  const Term t = terms(p)[0];
  const Span sp = monos_[t.mono];
  const std::vector<Factor> fs(mono_factors_.begin() + sp.begin,
                               mono_factors_.begin() + sp.begin + sp.size);
  Id r = Constant(Rational::Make(t.coef.den, t.coef.num));
  for (const auto& [atom, e] : fs) {
    Id inv;
    if (atoms_[atom].kind == AtomKind::kReciprocal) {
      inv = atoms_[atom].args[0];
    } else {
      const Factor f{atom, 1};
      inv = Apply(AtomKind::kReciprocal, 0, {MonoPoly(InternMono(&f, 1))});
    }
    r = Mul(r, Power(inv, e));
  }
  return r;
}

PolyStore::Id PolyStore::Add(Id a, Id b) {
  if (a == 0) return b;
  if (b == 0) return a;
  const Span xa = polys_[a], ya = polys_[b];
  const Term* x = terms(a);
  const Term* y = terms(b);
  scratch_.clear();
  size_t i = 0, j = 0;
  while (i < xa.size || j < ya.size) {
    if (j == ya.size || (i < xa.size && x[i].mono < y[j].mono)) {
      scratch_.push_back(x[i++]);
    } else if (i == xa.size || y[j].mono < x[i].mono) {
      scratch_.push_back(y[j++]);
    } else {
      Rational c = x[i].coef + y[j].coef;
      if (!c.is_zero()) scratch_.push_back(Term{x[i].mono, c});
      ++i, ++j;
    }
  }
  return InternScratch();
}

PolyStore::Id PolyStore::Scale(Id a, Rational c) {
  if (c.is_zero() || a == 0) return Zero();
  scratch_.assign(terms(a), terms(a) + polys_[a].size);
  for (Term& t : scratch_) t.coef = t.coef * c;
  return InternScratch();
}

PolyStore::Id PolyStore::Mul(Id a, Id b) {
  if (a == 0 || b == 0) return Zero();
  if (a == 1) return b;
  if (b == 1) return a;
  const uint32_t nx = polys_[a].size, ny = polys_[b].size;
  std::vector<Term> product;
  product.reserve(size_t{nx} * ny);
  for (uint32_t i = 0; i < nx; ++i)
    for (uint32_t j = 0; j < ny; ++j) {
      // Re-read through the arenas each time: interning a monomial may grow them.
      const Term tx = terms(a)[i], ty = terms(b)[j];
      const Span mx = monos_[tx.mono], my = monos_[ty.mono];
      scratch_mono_.clear();
      size_t p = 0, q = 0;
      while (p < mx.size || q < my.size) {
        const Factor* fx = mono_factors_.data() + mx.begin;
        const Factor* fy = mono_factors_.data() + my.begin;
        if (q == my.size || (p < mx.size && fx[p].first < fy[q].first)) {
          scratch_mono_.push_back(fx[p++]);
        } else if (p == mx.size || fy[q].first < fx[p].first) {
          scratch_mono_.push_back(fy[q++]);
        } else {
          scratch_mono_.emplace_back(fx[p].first, fx[p].second + fy[q].second);
          ++p, ++q;
        }
      }
      uint32_t mono = InternMono(scratch_mono_.data(), scratch_mono_.size());
      product.push_back(Term{mono, tx.coef * ty.coef});
    }
  std::sort(product.begin(), product.end(),
            [](const Term& l, const Term& r) { return l.mono < r.mono; });
  scratch_.clear();
  for (const Term& t : product) {
    if (!scratch_.empty() && scratch_.back().mono == t.mono)
      scratch_.back().coef = scratch_.back().coef + t.coef;
    else
      scratch_.push_back(t);
  }
  scratch_.erase(std::remove_if(scratch_.begin(), scratch_.end(),
                                [](const Term& t) { return t.coef.is_zero(); }),
                 scratch_.end());
  return InternScratch();
}

std::string PolyStore::MonoString(uint32_t m) const {
  std::string s;
  const Span sp = monos_[m];
  for (uint32_t k = 0; k < sp.size; ++k) {
    const auto& [atom, e] = mono_factors_[sp.begin + k];
    const Atom& a = atoms_[atom];
    if (!s.empty()) s += "*";
    switch (a.kind) {
      case AtomKind::kInput:
        s += "t" + std::to_string(a.param >> 40) + "_" +
             std::to_string(a.param & ((int64_t{1} << 40) - 1));
        break;
      case AtomKind::kActivation:
        s += "act" + std::to_string(a.param) + "(" + ToString(a.args[0]) + ")";
        break;
      case AtomKind::kMax:
        s += "max(";
        for (size_t i = 0; i < a.args.size(); ++i) s += (i ? ", " : "") + ToString(a.args[i]);
        s += ")";
        break;
      case AtomKind::kBnScale:
        s += "bn_scale(" + ToString(a.args[0]) + ")";
        break;
      case AtomKind::kReciprocal:
        s += "recip(" + ToString(a.args[0]) + ")";
        break;
      case AtomKind::kFunction: {
        s += "fn" + std::to_string(a.param) + "(";
        for (size_t i = 0; i < a.args.size(); ++i) s += (i ? ", " : "") + ToString(a.args[i]);
        s += ")";
        break;
      }
      case AtomKind::kConstant: {
        double v;
        std::memcpy(&v, &a.param, sizeof v);
        char buf[40];
        std::snprintf(buf, sizeof buf, "c(%.17g)", v);
        s += buf;
        break;
      }
    }
    if (e > 1) s += "^" + std::to_string(e);
  }
  return s.empty() ? "1" : s;
}

std::string PolyStore::ToString(Id p) const {
  if (polys_[p].size == 0) return "0";
  std::string s;
  for (uint32_t k = 0; k < polys_[p].size; ++k) {
    const Term& t = terms(p)[k];
    if (!s.empty()) s += " + ";
    bool unit = t.coef.num == 1 && t.coef.den == 1;
    if (!unit || t.mono == 0) {
      s += std::to_string(t.coef.num);
      if (t.coef.den != 1) s += "/" + std::to_string(t.coef.den);
      if (t.mono != 0) s += "*";
    }
    if (t.mono != 0) s += MonoString(t.mono);
  }
  return s;
}

z3::expr PolyStore::ToZ3(Id p, z3::context& ctx, std::unordered_map<Id, z3::expr>* cache) const {
  auto it = cache->find(p);
  if (it != cache->end()) return it->second;
  z3::expr sum = ctx.real_val(0);
  for (uint32_t k = 0; k < polys_[p].size; ++k) {
    const Term t = terms(p)[k];
    std::string c = std::to_string(t.coef.num) + "/" + std::to_string(t.coef.den);
    z3::expr term = ctx.real_val(c.c_str());
    const Span sp = monos_[t.mono];
    for (uint32_t f = 0; f < sp.size; ++f) {
      const auto [atom, e] = mono_factors_[sp.begin + f];
      const Atom& a = atoms_[atom];
      z3::expr v = ctx.real_val(0);
      switch (a.kind) {
        case AtomKind::kInput: {
          std::string name = "t" + std::to_string(a.param >> 40) + "_" +
                             std::to_string(a.param & ((int64_t{1} << 40) - 1));
          v = ctx.real_const(name.c_str());
          break;
        }
        case AtomKind::kActivation: {
          std::string name = "act" + std::to_string(a.param);
          v = ctx.function(name.c_str(), ctx.real_sort(),
                           ctx.real_sort())(ToZ3(a.args[0], ctx, cache));
          break;
        }
        case AtomKind::kMax: {
          v = ToZ3(a.args[0], ctx, cache);
          for (size_t i = 1; i < a.args.size(); ++i) {
            z3::expr r = ToZ3(a.args[i], ctx, cache);
            v = z3::ite(v >= r, v, r);
          }
          break;
        }
        case AtomKind::kBnScale: {
          std::string name = "bn_scale" + std::to_string(a.param);
          v = ctx.function(name.c_str(), ctx.real_sort(),
                           ctx.real_sort())(ToZ3(a.args[0], ctx, cache));
          break;
        }
        case AtomKind::kReciprocal: {
          v = ctx.function("recip", ctx.real_sort(), ctx.real_sort())(ToZ3(a.args[0], ctx, cache));
          break;
        }
        case AtomKind::kFunction: {
          z3::sort_vector domain(ctx);
          z3::expr_vector args(ctx);
          for (Id arg : a.args) {
            domain.push_back(ctx.real_sort());
            args.push_back(ToZ3(arg, ctx, cache));
          }
          const std::string name = "fn" + std::to_string(a.param);
          v = ctx.function(name.c_str(), domain, ctx.real_sort())(args);
          break;
        }
        case AtomKind::kConstant: {  // the double's exact value: mantissa * 2^exponent
          double d;
          std::memcpy(&d, &a.param, sizeof d);
          int e = 0;
          const double m = std::frexp(d, &e);  // d = m * 2^e, 0.5 <= |m| < 1
          const auto mantissa = static_cast<int64_t>(std::ldexp(m, 53));
          v = ctx.real_val(std::to_string(mantissa).c_str()) *
              z3::pw(ctx.real_val(2), ctx.real_val(e - 53));
          break;
        }
      }
      for (uint32_t n = 0; n < e; ++n) term = term * v;
    }
    sum = sum + term;
  }
  cache->emplace(p, sum);
  return sum;
}

}  // namespace verisub::verify
