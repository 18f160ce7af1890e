// enlarge: zero-pads a convolution kernel, centred, to a larger odd window.
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kEnlargeKernelH = 0, kEnlargeKernelW = 1;

OpSpec EnlargeSpec();

template <class S>
void EnlargeKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                   Tensor<typename S::Elem>* out) {
  const auto& w = *in[0];
  auto& y = out[0];
  const Shape& ws = w.shape();
  const Shape& ys = y.shape();
  int64_t oh = (ys[2] - ws[2]) / 2, ow = (ys[3] - ws[3]) / 2;
  y.data.assign(ys.NumElements(), s.Zero());
  for (int64_t oc = 0; oc < ws[0] * ws[1]; ++oc)
    for (int64_t a = 0; a < ws[2]; ++a)
      for (int64_t b = 0; b < ws[3]; ++b)
        y.data[(oc * ys[2] + a + oh) * ys[3] + b + ow] = w.data[(oc * ws[2] + a) * ws[3] + b];
}

}  // namespace verisub::specs::ops
