// pad: an image (NCHW) padded on its spatial axes, with zeros (a convolution's or an average
// pool's explicit padding) or with copies of its edge (a max pool's: the maximum over a window
// that reaches past the image is the maximum over its part inside, which holds the edge element
// the copies repeat; ceil-mode pools whose last window overhangs). ONNX Pad in the constant (0)
// and edge modes.
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kPadTop = 0, kPadLeft = 1, kPadBottom = 2, kPadRight = 3, kPadMode = 4;
enum class PadMode : int64_t { kZero = 0, kEdge = 1 };

OpSpec PadSpec();

// A pad's amounts (top, left, bottom, right) and mode from its parameters, and back.
inline std::vector<int64_t> PadAmounts(const Params& p) {
  return {p[kPadTop], p[kPadLeft], p[kPadBottom], p[kPadRight]};
}
inline PadMode PadModeOf(const Params& p) { return static_cast<PadMode>(p[kPadMode]); }
inline Params PadParams(const std::vector<int64_t>& amounts, PadMode mode) {
  Params p;
  p[kPadTop] = amounts[0];
  p[kPadLeft] = amounts[1];
  p[kPadBottom] = amounts[2];
  p[kPadRight] = amounts[3];
  p[kPadMode] = static_cast<int64_t>(mode);
  return p;
}

template <class S>
void PadKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
               Tensor<typename S::Elem>* out) {
  const auto& x = *in[0];
  const Shape& xs = x.shape();
  const Shape& ys = out[0].shape();
  const int64_t top = p[kPadTop], left = p[kPadLeft];
  const bool edge = PadModeOf(p) == PadMode::kEdge;
  out[0].data.assign(ys.NumElements(), s.Zero());
  for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
    for (int64_t i = 0; i < ys[2]; ++i)
      for (int64_t j = 0; j < ys[3]; ++j) {
        int64_t hi = i - top, wi = j - left;
        if (edge) {
          hi = hi < 0 ? 0 : (hi >= xs[2] ? xs[2] - 1 : hi);
          wi = wi < 0 ? 0 : (wi >= xs[3] ? xs[3] - 1 : wi);
        } else if (hi < 0 || hi >= xs[2] || wi < 0 || wi >= xs[3]) {
          continue;
        }
        out[0].data[(nc * ys[2] + i) * ys[3] + j] = x.data[(nc * xs[2] + hi) * xs[3] + wi];
      }
}

}  // namespace verisub::specs::ops
