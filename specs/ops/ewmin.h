// ewmin: elementwise minimum of two tensors of the same shape (a sub-operator, docs/subops.md).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec EwMinSpec();

// min(a, b) = -max(-a, -b): the semantics have max only.
template <class S>
void EwMinKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                 Tensor<typename S::Elem>* out) {
  BinaryKernel(s, in, out, [&](auto a, auto b) { return s.Neg(s.Max(s.Neg(a), s.Neg(b))); });
}

}  // namespace verisub::specs::ops
