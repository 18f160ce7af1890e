// const_imatmul: the identity matrix [n,n], n the last dimension of the input (matmul identity).
#pragma once

#include "specs/ops/constants.h"

namespace verisub::specs::ops {

OpSpec ConstIMatmulSpec();

template <class S>
void ConstIMatmulKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const*,
                        Tensor<typename S::Elem>* out) {
  int64_t n = out[0].shape()[0];
  out[0].data.assign(n * n, s.Zero());
  for (int64_t i = 0; i < n; ++i) out[0].data[i * n + i] = s.One();
}

}  // namespace verisub::specs::ops
