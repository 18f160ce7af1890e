// gelu_tanh: elementwise x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (GELU, tanh form).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec GeluTanhSpec();

template <class S>
void GeluTanhKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
              Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kGeluTanh, in, out);
}

}  // namespace verisub::specs::ops
