// smul: multiplication of a tensor by a scalar (rank-0) tensor.
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec SmulSpec();

template <class S>
void SmulKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                Tensor<typename S::Elem>* out) {
  const auto& x = *in[0];
  auto k = in[1]->data[0];
  out[0].data.resize(x.data.size());
  for (size_t i = 0; i < x.data.size(); ++i) out[0].data[i] = s.Mul(x.data[i], k);
}

}  // namespace verisub::specs::ops
