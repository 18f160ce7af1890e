// hard_swish: elementwise x * hard_sigmoid(x) (ONNX HardSwish).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec HardSwishSpec();

template <class S>
void HardSwishKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
              Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kHardSwish, in, out);
}

}  // namespace verisub::specs::ops
