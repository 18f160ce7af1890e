// reduce_max: the maximum over one axis, kept as extent 1 (a sub-operator, docs/subops.md).
#pragma once

#include "specs/ops/reduce_axis.h"

namespace verisub::specs::ops {

OpSpec ReduceMaxSpec();

template <class S>
void ReduceMaxKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                     Tensor<typename S::Elem>* out) {
  ReduceAxisKernel(s, p, in, out, [&](auto a, auto b) { return s.Max(a, b); });
}

}  // namespace verisub::specs::ops
