// reduce_mean: the mean over a set of axes, kept as dimensions of size 1 or dropped (ONNX
// ReduceMean with constant axes).
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kReduceMeanAxes = 0;      // a bit mask: bit d set = axis d is reduced
inline constexpr int kReduceMeanKeepdims = 1;  // 1 keeps reduced axes as size 1, 0 drops them

OpSpec ReduceMeanSpec();

inline bool ReducesAxis(const Params& p, int d) { return (p[kReduceMeanAxes] >> d) & 1; }

// Sums each output element's inputs in row-major order of the input, then divides by their
// count (exact in every semantics).
template <class S>
void ReduceMeanKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                      Tensor<typename S::Elem>* out) {
  const auto& x = *in[0];
  auto& y = out[0];
  const Shape& xs = x.shape();
  // Strides of the output indexed by input axes: 0 along reduced axes.
  std::array<int64_t, kMaxRank> ostride{};
  int64_t acc = 1, count = 1;
  for (int d = xs.rank - 1; d >= 0; --d) {
    if (ReducesAxis(p, d)) {
      count *= xs[d];
    } else {
      ostride[d] = acc;
      acc *= xs[d];
    }
  }
  y.data.assign(static_cast<size_t>(acc), s.Zero());
  int64_t idx[kMaxRank] = {};
  int64_t at = 0;
  for (size_t flat = 0; flat < x.data.size(); ++flat) {
    y.data[at] = s.Add(y.data[at], x.data[flat]);
    for (int d = xs.rank - 1; d >= 0; --d) {
      at += ostride[d];
      if (++idx[d] < xs[d]) break;
      at -= ostride[d] * idx[d];
      idx[d] = 0;
    }
  }
  for (auto& e : y.data) e = s.DivInt(e, count);
}

}  // namespace verisub::specs::ops
