// hard_sigmoid: elementwise max(0, min(1, x/6 + 1/2)) (ONNX HardSigmoid(alpha=1/6), PyTorch hardsigmoid).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec HardSigmoidSpec();

template <class S>
void HardSigmoidKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
              Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kHardSigmoid, in, out);
}

}  // namespace verisub::specs::ops
