// abs: elementwise |x| = max(x, -x) (a sub-operator, docs/subops.md): written with max, so that
// every semantics knows |-x| = |x| without a branch on the value.
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec AbsSpec();

template <class S>
void AbsKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
               Tensor<typename S::Elem>* out) {
  UnaryKernel(s, in, out, [&](auto x) { return s.Max(x, s.Neg(x)); });
}

}  // namespace verisub::specs::ops
