// Element semantics for the reference kernels. A kernel is a template over a semantics S that
// provides the element type and every operation kernels may apply to element values; kernels
// never branch on element values, so the same template instantiates with modular integers
// (fingerprints), doubles (testing, execution) and symbolic expressions (verify/).
//
// A semantics S provides:
//   using Elem;
//   Elem Zero(), One(), FromInt(int64_t);
//   Elem Add(Elem, Elem), Mul(Elem, Elem), Neg(Elem);
//   Elem DivInt(Elem, int64_t n)             x / n, n > 0 (exact in every semantics)
//   Elem Activate(Activation, Elem)          relu, sigmoid, tanh, gelu, ... (specs/params.h)
//   Elem Max(Elem, Elem)                     for max pooling
//   Elem BnScale(Elem var, double epsilon)   1 / sqrt(var + epsilon)
//   Elem Reciprocal(Elem)                    1 / x, x != 0 (softmax's normalisation)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "specs/params.h"

namespace verisub::specs {

// Integers modulo the Mersenne prime 2^31 - 1. Division is by the modular inverse, so an
// average is a real average and algebraic identities hold bit for bit. Activations are fixed,
// pairwise distinct, non-linear polynomials (TASO used x*(x+1)+1 for relu), so that a relu is
// never mistaken for the identity or for another activation.
struct ModIntSemantics {
  using Elem = uint32_t;
  static constexpr uint64_t kPrime = (1ull << 31) - 1;

  static Elem Reduce(uint64_t x) {
    x = (x & kPrime) + (x >> 31);
    x = (x & kPrime) + (x >> 31);
    return static_cast<Elem>(x == kPrime ? 0 : x);
  }
  Elem Zero() const { return 0; }
  Elem One() const { return 1; }
  Elem FromInt(int64_t v) const {
    int64_t m = v % static_cast<int64_t>(kPrime);
    if (m < 0) m += kPrime;
    return static_cast<Elem>(m);
  }
  Elem Add(Elem a, Elem b) const { return Reduce(uint64_t{a} + b); }
  Elem Mul(Elem a, Elem b) const { return Reduce(uint64_t{a} * b); }
  Elem Neg(Elem a) const { return a == 0 ? 0 : static_cast<Elem>(kPrime - a); }
  Elem Pow(Elem a, uint64_t e) const {
    Elem r = 1;
    while (e) {
      if (e & 1) r = Mul(r, a);
      a = Mul(a, a);
      e >>= 1;
    }
    return r;
  }
  Elem Inverse(Elem a) const { return Pow(a, kPrime - 2); }
  Elem DivInt(Elem a, int64_t n) const { return Mul(a, Inverse(FromInt(n))); }
  Elem Activate(Activation act, Elem x) const {
    switch (act) {
      case Activation::kNone:
        return x;
      case Activation::kRelu:  // x^2 + x + 1
        return Add(Mul(x, Add(x, 1)), 1);
      case Activation::kSigmoid:  // x^3 + 2x + 3
        return Add(Mul(x, Add(Mul(x, x), 2)), 3);
      case Activation::kTanh:  // 5x^2 + 7
        return Add(Mul(5, Mul(x, x)), 7);
      case Activation::kRelu6:  // x^2 + 3x + 11
        return Add(Mul(x, Add(x, 3)), 11);
      case Activation::kHardSigmoid:  // 3x^3 + x + 5
        return Add(Mul(x, Add(Mul(3, Mul(x, x)), 1)), 5);
      case Activation::kHardSwish:  // x^3 + x^2 + 13
        return Add(Mul(Mul(x, x), Add(x, 1)), 13);
      case Activation::kSilu:  // 2x^3 + x^2 + x + 17
        return Add(Mul(x, Add(Mul(x, Add(Mul(2, x), 1)), 1)), 17);
      case Activation::kGelu:  // x^4 + x + 19
        return Add(Mul(x, Add(Mul(Mul(x, x), x), 1)), 19);
      case Activation::kGeluTanh:  // 3x^4 + x + 31
        return Add(Mul(x, Add(Mul(3, Mul(Mul(x, x), x)), 1)), 31);
      case Activation::kExp:  // x^4 + 3x^2 + 23
        return Add(Mul(Mul(x, x), Add(Mul(x, x), 3)), 23);
      case Activation::kErf:  // 2x^4 + x^3 + 29
        return Add(Mul(Mul(Mul(x, x), x), Add(Mul(2, x), 1)), 29);
      case Activation::kLog:  // x^3 + 4x^2 + 41
        return Add(Mul(Mul(x, x), Add(x, 4)), 41);
      case Activation::kSqrt:  // 4x^3 + x^2 + 43
        return Add(Mul(Mul(x, x), Add(Mul(4, x), 1)), 43);
      // The field inverse (0 for 0), so that fingerprints see what reciprocals obey in the reals:
      // 1/(ab) = (1/a)(1/b), 1/(1/x) = x, 1/(-x) = -(1/x). Reciprocal() (softmax's normalisation)
      // stays a polynomial: with the inverse, a softmax of any constant tensor is 1/n, and the
      // operator-level configs fill with such candidates.
      case Activation::kRecip:
        return Inverse(x);
    }
    return x;
  }
  Elem Max(Elem a, Elem b) const { return std::max(a, b); }
  Elem BnScale(Elem var, double epsilon) const {  // a fixed non-linear map of (var, epsilon)
    Elem e = FromInt(static_cast<int64_t>(epsilon * 1e9) + 11);
    return Add(Mul(var, Add(var, e)), 13);
  }
  Elem Reciprocal(Elem x) const {  // 2x^3 + 5x + 37: fixed, non-linear, unlike BnScale's
    return Add(Mul(x, Add(Mul(2, Mul(x, x)), 5)), 37);
  }
};

// Real arithmetic in double precision: the semantics of the reference executor.
struct DoubleSemantics {
  using Elem = double;
  Elem Zero() const { return 0.0; }
  Elem One() const { return 1.0; }
  Elem FromInt(int64_t v) const { return static_cast<double>(v); }
  Elem Add(Elem a, Elem b) const { return a + b; }
  Elem Mul(Elem a, Elem b) const { return a * b; }
  Elem Neg(Elem a) const { return -a; }
  Elem DivInt(Elem a, int64_t n) const { return a / static_cast<double>(n); }
  Elem Activate(Activation act, Elem x) const {
    switch (act) {
      case Activation::kNone:
        return x;
      case Activation::kRelu:
        return x > 0 ? x : 0.0;
      case Activation::kSigmoid:
        return 1.0 / (1.0 + std::exp(-x));
      case Activation::kTanh:
        return std::tanh(x);
      case Activation::kRelu6:
        return std::min(std::max(x, 0.0), 6.0);
      case Activation::kHardSigmoid:
        return std::min(std::max(x / 6.0 + 0.5, 0.0), 1.0);
      case Activation::kHardSwish:
        return x * std::min(std::max(x / 6.0 + 0.5, 0.0), 1.0);
      case Activation::kSilu:
        return x / (1.0 + std::exp(-x));
      case Activation::kGelu:
        return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
      case Activation::kGeluTanh:
        return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
      case Activation::kExp:
        return std::exp(x);
      case Activation::kErf:
        return std::erf(x);
      case Activation::kLog:
        return std::log(x);
      case Activation::kSqrt:
        return std::sqrt(x);
      case Activation::kRecip:
        return 1.0 / x;
    }
    return x;
  }
  Elem Max(Elem a, Elem b) const { return std::max(a, b); }
  Elem BnScale(Elem var, double epsilon) const { return 1.0 / std::sqrt(var + epsilon); }
  Elem Reciprocal(Elem x) const { return 1.0 / x; }
};

}  // namespace verisub::specs
