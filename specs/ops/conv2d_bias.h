// conv2d_bias: 2-D convolution plus a per-output-channel bias, then the fused activation (ONNX
// Conv with its bias input, followed by an activation).
#pragma once

#include "specs/ops/conv2d.h"

namespace verisub::specs::ops {

OpSpec Conv2dBiasSpec();

// out[n,o,i,j] = act(conv2d[activation=none](x, w)[n,o,i,j] + b[o]).
template <class S>
void Conv2dBiasKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                      Tensor<typename S::Elem>* out) {
  Params linear = p;
  linear[kConvActivation] = static_cast<int64_t>(Activation::kNone);
  Conv2dKernel(s, linear, in, out);
  const auto& b = *in[2];
  auto& y = out[0];
  const Shape& ys = y.shape();
  auto act = static_cast<Activation>(p[kConvActivation]);
  int64_t plane = ys[2] * ys[3];
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t o = 0; o < ys[1]; ++o) {
      auto* row = y.data.data() + (n * ys[1] + o) * plane;
      for (int64_t e = 0; e < plane; ++e) row[e] = s.Activate(act, s.Add(row[e], b.data[o]));
    }
}

}  // namespace verisub::specs::ops
