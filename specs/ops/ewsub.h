// ewsub: elementwise difference of two tensors of the same shape (ONNX Sub).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec EwSubSpec();

template <class S>
void EwSubKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                 Tensor<typename S::Elem>* out) {
  BinaryKernel(s, in, out, [&](auto a, auto b) { return s.Add(a, s.Neg(b)); });
}

}  // namespace verisub::specs::ops
