// const_iconv: the identity convolution kernel [C,C,kh,kw] for an input [N,C,H,W].
#pragma once

#include "specs/ops/constants.h"

namespace verisub::specs::ops {

OpSpec ConstIConvSpec();

template <class S>
void ConstIConvKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const*,
                      Tensor<typename S::Elem>* out) {
  const Shape& ys = out[0].shape();
  out[0].data.assign(ys.NumElements(), s.Zero());
  int64_t c = ys[0], kh = ys[2], kw = ys[3];
  for (int64_t i = 0; i < c; ++i)
    out[0].data[((i * c + i) * kh + (kh - 1) / 2) * kw + (kw - 1) / 2] = s.One();
}

}  // namespace verisub::specs::ops
