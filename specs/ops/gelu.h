// gelu: elementwise x/2 * (1 + erf(x/sqrt(2))) (GELU, exact form).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec GeluSpec();

template <class S>
void GeluKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
              Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kGelu, in, out);
}

}  // namespace verisub::specs::ops
