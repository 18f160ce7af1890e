// const_ones: a tensor of ones shaped like its input (the identity of ewmul).
#pragma once

#include "specs/ops/constants.h"

namespace verisub::specs::ops {

OpSpec ConstOnesSpec();

template <class S>
void ConstOnesKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const*,
                     Tensor<typename S::Elem>* out) {
  out[0].data.assign(out[0].shape().NumElements(), s.One());
}

}  // namespace verisub::specs::ops
