// silu: elementwise x * sigmoid(x) (SiLU, swish).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec SiluSpec();

template <class S>
void SiluKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
              Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kSilu, in, out);
}

}  // namespace verisub::specs::ops
