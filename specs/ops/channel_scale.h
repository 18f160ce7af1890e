// channel_scale: multiplies by a vector along one dimension (per-channel scales: BatchNormalization
// folded at import, a per-channel Mul; axis 0 scales a conv kernel's output channels).
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kChannelScaleAxis = 0;

OpSpec ChannelScaleSpec();

// y[..., i_axis, ...] = x[..., i_axis, ...] * s[i_axis].
template <class S>
void ChannelScaleKernel(const S& sem, const Params& p, const Tensor<typename S::Elem>* const* in,
                        Tensor<typename S::Elem>* out) {
  const auto& x = *in[0];
  const auto& s = *in[1];
  int axis = static_cast<int>(p[kChannelScaleAxis]);
  int64_t n = x.shape()[axis], inner = 1;
  for (int d = axis + 1; d < x.shape().rank; ++d) inner *= x.shape()[d];
  out[0].data.resize(x.data.size());
  for (size_t i = 0; i < x.data.size(); ++i)
    out[0].data[i] = sem.Mul(x.data[i], s.data[(static_cast<int64_t>(i) / inner) % n]);
}

}  // namespace verisub::specs::ops
