// batchnorm: inference-form batch normalization over channel dimension 1.
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kBatchnormEpsilon = 0;

OpSpec BatchnormSpec();

// y = (x - mean[c]) * BnScale(var[c], epsilon) * scale[c] + bias[c], with BnScale = 1/sqrt(v+eps).
template <class S>
void BatchnormKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                     Tensor<typename S::Elem>* out) {
  const auto& x = *in[0];
  const auto &scale = *in[1], &bias = *in[2], &mean = *in[3], &var = *in[4];
  auto& y = out[0];
  const Shape& xs = x.shape();
  int64_t c = xs[1], inner = 1;
  for (int d = 2; d < xs.rank; ++d) inner *= xs[d];
  double eps = DecodeFloat(p[kBatchnormEpsilon]);
  y.data.resize(x.data.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    auto k = s.Mul(s.BnScale(var.data[ch], eps), scale.data[ch]);
    auto neg_mean = s.Neg(mean.data[ch]);
    for (int64_t n = 0; n < xs[0]; ++n)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t at = (n * c + ch) * inner + i;
        y.data[at] = s.Add(s.Mul(s.Add(x.data[at], neg_mean), k), bias.data[ch]);
      }
  }
}

}  // namespace verisub::specs::ops
