// bias_add: adds a vector along one dimension (conv and Gemm biases).
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kBiasAxis = 0;

OpSpec BiasAddSpec();

// y[..., i_axis, ...] = x[..., i_axis, ...] + b[i_axis].
template <class S>
void BiasAddKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                   Tensor<typename S::Elem>* out) {
  const auto& x = *in[0];
  const auto& b = *in[1];
  int axis = static_cast<int>(p[kBiasAxis]);
  int64_t n = x.shape()[axis], inner = 1;
  for (int d = axis + 1; d < x.shape().rank; ++d) inner *= x.shape()[d];
  out[0].data.resize(x.data.size());
  for (size_t i = 0; i < x.data.size(); ++i)
    out[0].data[i] = s.Add(x.data[i], b.data[(static_cast<int64_t>(i) / inner) % n]);
}

}  // namespace verisub::specs::ops
