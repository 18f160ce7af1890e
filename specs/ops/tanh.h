// tanh: elementwise activation.
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec TanhSpec();

template <class S>
void TanhKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kTanh, in, out);
}

}  // namespace verisub::specs::ops
