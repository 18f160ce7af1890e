// conv2d: 2-D convolution over NCHW with groups and a fused activation.
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

// Parameter slots.
inline constexpr int kConvStrideH = 0, kConvStrideW = 1, kConvPadding = 2, kConvActivation = 3,
                     kConvGroup = 4;

OpSpec Conv2dSpec();

inline int64_t ConvGroups(const Params& p, const Shape& x) {
  return p[kConvGroup] == kDepthwiseGroup ? x[1] : p[kConvGroup];
}

// out[n,o,i,j] = act(sum_{c,a,b} x[n, g*Cg + c, i*s - pad + a, j*s - pad + b] * w[o, c, a, b]),
// where g = o / (O / groups) and out-of-range input positions contribute nothing.
template <class S>
void Conv2dKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                  Tensor<typename S::Elem>* out) {
  const auto& x = *in[0];
  const auto& w = *in[1];
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  Tensor<typename S::Elem>& y = out[0];
  const Shape& ys = y.shape();
  int64_t groups = ConvGroups(p, xs);
  int64_t cg = ws[1], og = ws[0] / groups, kh = ws[2], kw = ws[3];
  int64_t sh = p[kConvStrideH], sw = p[kConvStrideW];
  int64_t ph = p[kConvPadding] == static_cast<int64_t>(Padding::kSame) ? (kh - 1) / 2 : 0;
  int64_t pw = p[kConvPadding] == static_cast<int64_t>(Padding::kSame) ? (kw - 1) / 2 : 0;
  auto act = static_cast<Activation>(p[kConvActivation]);
  y.data.assign(ys.NumElements(), s.Zero());
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t o = 0; o < ys[1]; ++o) {
      int64_t g = o / og;
      for (int64_t i = 0; i < ys[2]; ++i)
        for (int64_t j = 0; j < ys[3]; ++j) {
          auto acc = s.Zero();
          bool first = true;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t a = 0; a < kh; ++a) {
              int64_t hi = i * sh - ph + a;
              if (hi < 0 || hi >= xs[2]) continue;
              for (int64_t b = 0; b < kw; ++b) {
                int64_t wi = j * sw - pw + b;
                if (wi < 0 || wi >= xs[3]) continue;
                auto prod = s.Mul(x.data[((n * xs[1] + g * cg + c) * xs[2] + hi) * xs[3] + wi],
                                  w.data[((o * cg + c) * kh + a) * kw + b]);
                acc = first ? prod : s.Add(acc, prod);
                first = false;
              }
            }
          y.data[((n * ys[1] + o) * ys[2] + i) * ys[3] + j] = s.Activate(act, acc);
        }
    }
}

}  // namespace verisub::specs::ops
