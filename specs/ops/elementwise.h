// Kernels shared by the elementwise operator files (ewadd, ewmul, smul, relu, sigmoid, tanh and
// the sub-operators neg, recip, log, sqrt, abs, ewmax, ewmin, select).
#pragma once

#include <optional>

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

// Equal shapes only: with broadcasting, linearity axioms such as pool(x+y) = pool(x)+pool(y) fail
// (a broadcast operand sees padding differently), so broadcasts stay outside the spec set.
Status SameShapeBinary(const Params&, const TensorType* const* in, TensorType* out);
Status UnaryShape(const Params&, const TensorType* const* in, TensorType* out);

template <class S, class F>
void BinaryKernel(const S&, const Tensor<typename S::Elem>* const* in,
                  Tensor<typename S::Elem>* out, F&& f) {
  const auto& a = *in[0];
  const auto& b = *in[1];
  auto& y = out[0];
  y.data.resize(a.data.size());
  for (size_t i = 0; i < a.data.size(); ++i) y.data[i] = f(a.data[i], b.data[i]);
}

template <class S, class F>
void UnaryKernel(const S&, const Tensor<typename S::Elem>* const* in, Tensor<typename S::Elem>* out,
                 F&& f) {
  const auto& x = *in[0];
  out[0].data.resize(x.data.size());
  for (size_t i = 0; i < x.data.size(); ++i) out[0].data[i] = f(x.data[i]);
}

// The map a unary activation operator (relu, sigmoid, tanh, relu6, hard_sigmoid, hard_swish,
// silu, gelu, gelu_tanh, exp, erf) applies with ActivationKernel; nullopt for other operators.
std::optional<Activation> UnaryActivation(OpKind op);

template <class S>
void ActivationKernel(const S& s, Activation act, const Tensor<typename S::Elem>* const* in,
                      Tensor<typename S::Elem>* out) {
  const auto& x = *in[0];
  out[0].data.resize(x.data.size());
  for (size_t i = 0; i < x.data.size(); ++i) out[0].data[i] = s.Activate(act, x.data[i]);
}

}  // namespace verisub::specs::ops
