// ewmax: elementwise maximum of two tensors of the same shape (a sub-operator, docs/subops.md).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec EwMaxSpec();

template <class S>
void EwMaxKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                 Tensor<typename S::Elem>* out) {
  BinaryKernel(s, in, out, [&](auto a, auto b) { return s.Max(a, b); });
}

}  // namespace verisub::specs::ops
