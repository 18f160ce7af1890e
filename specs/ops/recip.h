// recip: elementwise reciprocal 1/x (a sub-operator, docs/subops.md).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec RecipSpec();

template <class S>
void RecipKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                 Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kRecip, in, out);
}

}  // namespace verisub::specs::ops
