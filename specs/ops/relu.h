// relu: elementwise activation.
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec ReluSpec();

template <class S>
void ReluKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kRelu, in, out);
}

}  // namespace verisub::specs::ops
