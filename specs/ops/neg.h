// neg: elementwise negation (a sub-operator, docs/subops.md).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec NegSpec();

template <class S>
void NegKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
               Tensor<typename S::Elem>* out) {
  UnaryKernel(s, in, out, [&](auto x) { return s.Neg(x); });
}

}  // namespace verisub::specs::ops
