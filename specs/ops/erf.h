// erf: elementwise error function.
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec ErfSpec();

template <class S>
void ErfKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
              Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kErf, in, out);
}

}  // namespace verisub::specs::ops
