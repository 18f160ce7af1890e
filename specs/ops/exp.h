// exp: elementwise e^x.
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec ExpSpec();

template <class S>
void ExpKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
              Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kExp, in, out);
}

}  // namespace verisub::specs::ops
