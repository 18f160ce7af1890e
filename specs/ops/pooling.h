// Window geometry and kernel shared by pool_max and pool_avg.
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kPoolKernelH = 0, kPoolKernelW = 1, kPoolStrideH = 2, kPoolStrideW = 3,
                     kPoolPadding = 4, kPoolActivation = 5;

std::vector<ParamDesc> PoolParams();
Status PoolShape(const Params& p, const TensorType* const* in, TensorType* out);
// One operation per window element of every output.
double PoolFlops(const Params& p, const Shape* in, const Shape* out);

// Reduces every window over its in-range positions with `reduce`, then applies `finish`
// (average: divide by the full window size, padding included; max: identity) and the activation.
template <class S, class Reduce, class Finish>
void PoolKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                Tensor<typename S::Elem>* out, Reduce&& reduce, Finish&& finish) {
  const auto& x = *in[0];
  auto& y = out[0];
  const Shape& xs = x.shape();
  const Shape& ys = y.shape();
  int64_t kh = p[kPoolKernelH], kw = p[kPoolKernelW], sh = p[kPoolStrideH], sw = p[kPoolStrideW];
  bool same = p[kPoolPadding] == static_cast<int64_t>(Padding::kSame);
  int64_t ph = same ? (kh - 1) / 2 : 0, pw = same ? (kw - 1) / 2 : 0;
  auto act = static_cast<Activation>(p[kPoolActivation]);
  y.data.assign(ys.NumElements(), s.Zero());
  for (int64_t nc = 0; nc < ys[0] * ys[1]; ++nc)
    for (int64_t i = 0; i < ys[2]; ++i)
      for (int64_t j = 0; j < ys[3]; ++j) {
        auto acc = s.Zero();
        bool first = true;
        for (int64_t a = 0; a < kh; ++a) {
          int64_t hi = i * sh - ph + a;
          if (hi < 0 || hi >= xs[2]) continue;
          for (int64_t b = 0; b < kw; ++b) {
            int64_t wi = j * sw - pw + b;
            if (wi < 0 || wi >= xs[3]) continue;
            auto v = x.data[(nc * xs[2] + hi) * xs[3] + wi];
            acc = first ? v : reduce(acc, v);
            first = false;
          }
        }
        y.data[(nc * ys[2] + i) * ys[3] + j] = s.Activate(act, finish(acc, kh * kw));
      }
}

}  // namespace verisub::specs::ops
