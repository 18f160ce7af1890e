// const_pool: the depthwise kernel [C,1,kh,kw] of 1/(kh*kw) that turns average pooling into a
// convolution.
#pragma once

#include "specs/ops/constants.h"

namespace verisub::specs::ops {

OpSpec ConstPoolSpec();

template <class S>
void ConstPoolKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const*,
                     Tensor<typename S::Elem>* out) {
  const Shape& ys = out[0].shape();
  out[0].data.assign(ys.NumElements(), s.DivInt(s.One(), ys[2] * ys[3]));
}

}  // namespace verisub::specs::ops
