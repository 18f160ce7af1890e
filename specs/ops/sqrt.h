// sqrt: elementwise square root (a sub-operator, docs/subops.md).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec SqrtSpec();

template <class S>
void SqrtKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kSqrt, in, out);
}

}  // namespace verisub::specs::ops
