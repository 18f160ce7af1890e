// layer_norm: normalisation over the trailing axes [axis, rank), then a per-element scale and
// bias of that trailing shape (ONNX LayerNormalization).
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kLayerNormAxis = 0;
inline constexpr int kLayerNormEpsilon = 1;

OpSpec LayerNormSpec();

// Per row r of the trailing axes (n elements): m = sum(x)/n, c = x - m, v = sum(c*c)/n,
// y = c * BnScale(v, epsilon) * scale + bias, with BnScale = 1/sqrt(v + epsilon) as batchnorm's.
template <class S>
void LayerNormKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                     Tensor<typename S::Elem>* out) {
  using Elem = typename S::Elem;
  const auto& x = *in[0];
  const auto &scale = *in[1], &bias = *in[2];
  auto& y = out[0];
  const int axis = static_cast<int>(p[kLayerNormAxis]);
  const double eps = DecodeFloat(p[kLayerNormEpsilon]);
  int64_t n = 1;
  for (int d = axis; d < x.shape().rank; ++d) n *= x.shape()[d];
  const int64_t rows = static_cast<int64_t>(x.data.size()) / n;
  y.data.resize(x.data.size());
  for (int64_t r = 0; r < rows; ++r) {
    const Elem* xr = x.data.data() + r * n;
    Elem* yr = y.data.data() + r * n;
    Elem sum = s.Zero();
    for (int64_t i = 0; i < n; ++i) sum = s.Add(sum, xr[i]);
    const Elem neg_mean = s.Neg(s.DivInt(sum, n));
    Elem sq = s.Zero();
    for (int64_t i = 0; i < n; ++i) {
      yr[i] = s.Add(xr[i], neg_mean);
      sq = s.Add(sq, s.Mul(yr[i], yr[i]));
    }
    const Elem k = s.BnScale(s.DivInt(sq, n), eps);
    for (int64_t i = 0; i < n; ++i)
      yr[i] = s.Add(s.Mul(s.Mul(yr[i], k), scale.data[i]), bias.data[i]);
  }
}

}  // namespace verisub::specs::ops
