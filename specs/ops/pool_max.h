// pool_max: 2-D max pooling over NCHW with a fused activation.
#pragma once

#include "specs/ops/pooling.h"

namespace verisub::specs::ops {

OpSpec PoolMaxSpec();

template <class S>
void PoolMaxKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                   Tensor<typename S::Elem>* out) {
  PoolKernel(
      s, p, in, out, [&](auto a, auto b) { return s.Max(a, b); },
      [](auto acc, int64_t) { return acc; });
}

}  // namespace verisub::specs::ops
