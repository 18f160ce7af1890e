// What reduce_sum, reduce_max and broadcast share: one axis reduced to (or broadcast from) an
// extent of 1, kept in the shape.
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kReduceAxis = 0;

// The input's type with `axis` (parameter slot kReduceAxis) of extent 1; its concat history is
// lost.
Status AxisKeptAsOneShape(const Params& p, const TensorType* const* in, TensorType* out);

// y[o, 0, i] = combine(... combine(x[o, 0, i], x[o, 1, i]) ..., x[o, n-1, i]), in order.
template <class S, class F>
void ReduceAxisKernel(const S&, const Params& p, const Tensor<typename S::Elem>* const* in,
                      Tensor<typename S::Elem>* out, F&& combine) {
  const auto& x = *in[0];
  auto& y = out[0];
  int64_t outer, dim, inner;
  AxisExtents(x.shape(), static_cast<int>(p[kReduceAxis]), &outer, &dim, &inner);
  y.data.resize(static_cast<size_t>(outer * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * dim * inner + i;
      auto acc = x.data[base];
      for (int64_t j = 1; j < dim; ++j) acc = combine(acc, x.data[base + j * inner]);
      y.data[o * inner + i] = acc;
    }
}

}  // namespace verisub::specs::ops
