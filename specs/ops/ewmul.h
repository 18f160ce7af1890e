// ewmul: elementwise product of two tensors of the same shape.
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec EwMulSpec();

template <class S>
void EwMulKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                 Tensor<typename S::Elem>* out) {
  BinaryKernel(s, in, out, [&](auto a, auto b) { return s.Mul(a, b); });
}

}  // namespace verisub::specs::ops
