// pool_avg: 2-D average (the divisor counts padded positions) pooling over NCHW with a fused
// activation.
#pragma once

#include "specs/ops/pooling.h"

namespace verisub::specs::ops {

OpSpec PoolAvgSpec();

template <class S>
void PoolAvgKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                   Tensor<typename S::Elem>* out) {
  PoolKernel(
      s, p, in, out, [&](auto a, auto b) { return s.Add(a, b); },
      [&](auto acc, int64_t window) { return s.DivInt(acc, window); });
}

}  // namespace verisub::specs::ops
