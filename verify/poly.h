// Canonical polynomials for symbolic execution of the reference kernels: an element is a sparse
// polynomial with rational coefficients over atoms, where an atom is an input element or an
// uninterpreted application (activation, max, batchnorm scale) of canonical polynomials. Every
// polynomial and atom is hash-consed in a PolyStore, so equal expressions have equal ids and
// most axiom checks are an integer comparison, no solver.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "specs/params.h"

namespace verisub::verify {

// An exact rational with 64-bit parts; overflow is an internal error (coefficients of small
// kernels stay tiny).
struct Rational {
  int64_t num = 0, den = 1;
  static Rational Make(int64_t n, int64_t d);
  bool operator==(const Rational& o) const { return num == o.num && den == o.den; }
  bool is_zero() const { return num == 0; }
};
Rational operator+(const Rational& a, const Rational& b);
Rational operator*(const Rational& a, const Rational& b);

// kFunction: an uninterpreted function named by `param` of its arguments (the sub-operator
// level's sqrt, log, abs, comparisons, select; fusion's lowering check); kConstant: a real number
// that is no small rational, `param` its double's bits, no arguments.
enum class AtomKind : int {
  kInput,
  kActivation,
  kMax,
  kBnScale,
  kReciprocal,
  kFunction,
  kConstant
};

class PolyStore {
 public:
  using Id = uint32_t;  // a polynomial

  PolyStore();
  Id Zero() const { return 0; }
  Id One() const { return 1; }
  Id Constant(Rational c);
  // Element `index` of tensor variable `tensor`.
  Id Input(int tensor, int64_t index);
  // An uninterpreted application: activation `param` of one argument, max of two or more
  // (nested maxima flattened, arguments sorted and deduplicated: max is associative, commutative
  // and idempotent; the max of one argument is that argument), batchnorm scale with `param` =
  // epsilon's bits, reciprocal of one, function `param` of any, a constant of none.
  Id Apply(AtomKind kind, int64_t param, std::vector<Id> args);

  Id Add(Id a, Id b);
  Id Mul(Id a, Id b);
  Id Scale(Id a, Rational c);
  // e^p, as a product over p's terms c*m of exp(m)^c for an integer c (exp(m)'s reciprocal for a
  // negative one), else exp(c*m): exp(a + b) = exp(a) exp(b) and exp(-a) = 1/exp(a) by identity.
  Id Exp(Id p);
  // 1/p; of a monomial c * a^e * ..., the product (1/c) * (1/a)^e * ... with 1/(1/q) = q, so
  // that 1/(ab) = (1/a)(1/b) and 1/(1/x) = x by identity; of anything else an atom.
  Id Reciprocal(Id p);

  size_t num_polys() const { return polys_.size(); }
  // Forgets everything (ids become invalid) but keeps the memory.
  void Clear();
  std::string ToString(Id p) const;
  // Real-valued Z3 term: inputs are real constants `t<tensor>_<index>`, activations and the
  // batchnorm scale and the reciprocal uninterpreted functions, max the real maximum.
  z3::expr ToZ3(Id p, z3::context& ctx, std::unordered_map<Id, z3::expr>* cache) const;

 private:
  struct Atom {
    AtomKind kind;
    int64_t param;
    std::vector<Id> args;
  };
  using Factor = std::pair<uint32_t, uint32_t>;  // (atom, exponent)
  struct Term {
    uint32_t mono;
    Rational coef;
  };
  // A slice of an arena: polynomials are sorted by monomial id without zero coefficients,
  // monomials sorted by atom id.
  struct Span {
    uint32_t begin, size;
  };
  // Open-addressing hash set of ids; `eq(id)` compares a stored entry with the probe.
  class IdTable {
   public:
    template <class Eq>
    int64_t Find(uint64_t hash, Eq&& eq) const;
    void Insert(uint64_t hash, uint32_t id);

   private:
    std::vector<uint32_t> slots_;  // id + 1, 0 = empty
    std::vector<uint64_t> hashes_;
    size_t used_ = 0;
  };

  // Interns the polynomial in scratch_ (consumed).
  Id InternScratch();
  uint32_t InternMono(const Factor* f, size_t n);
  uint32_t InternAtom(Atom a);
  // The polynomial 1 * mono.
  Id MonoPoly(uint32_t mono);
  Id Power(Id p, uint32_t e);
  std::string MonoString(uint32_t m) const;
  const Term* terms(Id p) const { return poly_terms_.data() + polys_[p].begin; }

  std::vector<Atom> atoms_;
  IdTable atom_table_;
  std::vector<Factor> mono_factors_;
  std::vector<Span> monos_;
  IdTable mono_table_;
  std::vector<Term> poly_terms_;
  std::vector<Span> polys_;
  IdTable poly_table_;
  std::vector<Term> scratch_;
  std::vector<Factor> scratch_mono_;
};

// The semantics concept of specs/semantics.h over a PolyStore (which must outlive it).
struct PolySemantics {
  using Elem = PolyStore::Id;
  PolyStore* store;

  Elem Zero() const { return store->Zero(); }
  Elem One() const { return store->One(); }
  Elem FromInt(int64_t v) const { return store->Constant(Rational::Make(v, 1)); }
  Elem Add(Elem a, Elem b) const { return store->Add(a, b); }
  Elem Mul(Elem a, Elem b) const { return store->Mul(a, b); }
  Elem Neg(Elem a) const { return store->Scale(a, Rational::Make(-1, 1)); }
  Elem DivInt(Elem a, int64_t n) const { return store->Scale(a, Rational::Make(1, n)); }
  Elem Activate(specs::Activation act, Elem x) const {
    if (act == specs::Activation::kNone) return x;
    if (act == specs::Activation::kExp) return store->Exp(x);
    // The recip operator and softmax's normalisation are the same function of the reals.
    if (act == specs::Activation::kRecip) return store->Reciprocal(x);
    return store->Apply(AtomKind::kActivation, static_cast<int64_t>(act), {x});
  }
  Elem Max(Elem a, Elem b) const { return store->Apply(AtomKind::kMax, 0, {a, b}); }
  Elem BnScale(Elem var, double epsilon) const {
    return store->Apply(AtomKind::kBnScale, specs::EncodeFloat(epsilon), {var});
  }
  Elem Reciprocal(Elem x) const { return store->Reciprocal(x); }
};

}  // namespace verisub::verify
