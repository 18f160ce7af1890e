// conv2d: 2-D convolution over NCHW with groups and a fused activation.
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "specs/op_spec.h"
#include "specs/ops/common.h"
#include "specs/semantics.h"

namespace verisub::specs::ops {

// Parameter slots.
inline constexpr int kConvStrideH = 0, kConvStrideW = 1, kConvPadding = 2, kConvActivation = 3,
                     kConvGroup = 4;

OpSpec Conv2dSpec();
// Shared with conv2d_bias. A convolution's activation is any of matmul's four or an epilogue
// exporters write after convolutions (relu6, hard_sigmoid, hard_swish, silu, gelu, gelu_tanh);
// the generator's domain stays the first four.
std::vector<ParamDesc> Conv2dParams();
// The activations beyond relu, sigmoid and tanh that a convolution fuses, each also a unary
// operator of the same name; `ConvEpilogueAxioms` states each fusion (`op` is conv2d or
// conv2d_bias, `args` its typed variables and `operands` their names).
struct ConvEpilogue {
  Activation activation;
  const char* name;  // the activation value's name and the unary operator's
};
const std::vector<ConvEpilogue>& ConvEpilogues();
std::string ConvEpilogueAxioms(const std::string& op, const std::string& prefix,
                               const std::string& args, const std::string& operands);
Status Conv2dShape(const Params& p, const TensorType* const* in, TensorType* out);
double Conv2dFlops(const Params& p, const Shape* in, const Shape* out);

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
  using Elem = typename S::Elem;
  if constexpr (std::is_arithmetic_v<Elem>) {
    // The same sum per output (over c, a, b in that order, in-range positions only), a whole
    // output plane at a time so that neighbouring outputs do not wait on each other's additions,
    // and up to kMulAddBlock output channels of one group at a time so that each input row read
    // serves all of them. Starting from zero rather than from the first product gives the same
    // value in numeric semantics (0 + x == x, up to the sign of a zero).
    // Outputs i in [lo, hi) read input row i * stride + off; off = a - pad for kernel row a.
    auto range = [](int64_t off, int64_t stride, int64_t in, int64_t out, int64_t* lo,
                    int64_t* hi) {
      *lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
      *hi = in - 1 - off < 0 ? 0 : std::min(out, (in - 1 - off) / stride + 1);
    };
    std::vector<int64_t> i_lo(kh), i_hi(kh), j_lo(kw), j_hi(kw);
    for (int64_t a = 0; a < kh; ++a) range(a - ph, sh, xs[2], ys[2], &i_lo[a], &i_hi[a]);
    for (int64_t b = 0; b < kw; ++b) range(b - pw, sw, xs[3], ys[3], &j_lo[b], &j_hi[b]);
    const int64_t plane = ys[2] * ys[3];
    // A 1x1 window at stride 1 without padding reads the input plane as it is: one row.
    const bool whole_plane = kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
    using Accumulator = SumAccumulator<S>;
    using Acc = typename Accumulator::Acc;
    std::vector<Acc> acc(kMulAddBlock * plane);
    const Elem* xd = x.data.data();
    const Elem* wd = w.data.data();
    Elem wv[kMulAddBlock];
    for (int64_t n = 0; n < ys[0]; ++n)
      for (int64_t o0 = 0, block = 0; o0 < ys[1]; o0 += block) {
        const int64_t g = o0 / og;
        block = std::min(kMulAddBlock, (g + 1) * og - o0);  // a block never spans two groups
        std::fill(acc.begin(), acc.begin() + block * plane, Acc{});
        for (int64_t c = 0; c < cg; ++c) {
          const Elem* xc = xd + (n * xs[1] + g * cg + c) * xs[2] * xs[3];
          for (int64_t a = 0; a < kh; ++a)
            for (int64_t b = 0; b < kw; ++b) {
              for (int64_t q = 0; q < block; ++q)
                wv[q] = wd[((o0 + q) * cg + c) * kh * kw + a * kw + b];
              if (whole_plane) {
                RowsMulAdd(s, block, xc, 1, plane, acc.data(), plane, wv);
                continue;
              }
              for (int64_t i = i_lo[a]; i < i_hi[a]; ++i)
                RowsMulAdd(s, block, xc + (i * sh + a - ph) * xs[3] + j_lo[b] * sw + b - pw, sw,
                           j_hi[b] - j_lo[b], acc.data() + i * ys[3] + j_lo[b], plane, wv);
            }
        }
        for (int64_t q = 0; q < block; ++q) {
          Elem* yr = y.data.data() + (n * ys[1] + o0 + q) * plane;
          const Acc* ar = acc.data() + q * plane;
          for (int64_t e = 0; e < plane; ++e) yr[e] = s.Activate(act, Accumulator::Finish(ar[e]));
        }
      }
    return;
  }
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
