// sigmoid: elementwise activation.
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec SigmoidSpec();

template <class S>
void SigmoidKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                   Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kSigmoid, in, out);
}

}  // namespace verisub::specs::ops
