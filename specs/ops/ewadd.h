// ewadd: elementwise sum of two tensors of the same shape.
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec EwAddSpec();

template <class S>
void EwAddKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                 Tensor<typename S::Elem>* out) {
  BinaryKernel(s, in, out, [&](auto a, auto b) { return s.Add(a, b); });
}

}  // namespace verisub::specs::ops
