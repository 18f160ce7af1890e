// broadcast: an axis of extent 1 repeated `extent` times (a sub-operator, one of the reindex
// instances the generator can enumerate; docs/subops.md).
#pragma once

#include "specs/ops/reduce_axis.h"

namespace verisub::specs::ops {

inline constexpr int kBroadcastAxis = kReduceAxis;
inline constexpr int kBroadcastExtent = 1;

OpSpec BroadcastSpec();

// y[o, j, i] = x[o, 0, i] for j < extent.
template <class S>
void BroadcastKernel(const S&, const Params& p, const Tensor<typename S::Elem>* const* in,
                     Tensor<typename S::Elem>* out) {
  const auto& x = *in[0];
  auto& y = out[0];
  const int64_t n = p[kBroadcastExtent];
  int64_t outer, dim, inner;
  AxisExtents(x.shape(), static_cast<int>(p[kBroadcastAxis]), &outer, &dim, &inner);
  y.data.resize(static_cast<size_t>(outer * n * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i) y.data[(o * n + j) * inner + i] = x.data[o * inner + i];
}

}  // namespace verisub::specs::ops
