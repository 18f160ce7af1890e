// relu6: elementwise min(max(x, 0), 6) (ONNX Clip(0, 6), ReLU6).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec Relu6Spec();

template <class S>
void Relu6Kernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
              Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kRelu6, in, out);
}

}  // namespace verisub::specs::ops
