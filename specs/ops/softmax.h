// softmax: e^x normalised to sum 1 along one axis (ONNX Softmax, opset >= 13).
#pragma once

#include <type_traits>

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kSoftmaxAxis = 0;

OpSpec SoftmaxSpec();

// y_j = exp(x_j) * Reciprocal(sum_k exp(x_k)) along the axis. The real semantics subtracts the
// row's maximum first (the same value, without overflow); the others have no order to use.
template <class S>
void SoftmaxKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                   Tensor<typename S::Elem>* out) {
  using Elem = typename S::Elem;
  const auto& x = *in[0];
  auto& y = out[0];
  int64_t outer, dim, inner;
  AxisExtents(x.shape(), static_cast<int>(p[kSoftmaxAxis]), &outer, &dim, &inner);
  y.data.resize(x.data.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * dim * inner + i;
      Elem shift = s.Zero();
      if constexpr (std::is_floating_point_v<Elem>) {
        shift = x.data[base];
        for (int64_t j = 1; j < dim; ++j) shift = s.Max(shift, x.data[base + j * inner]);
        shift = s.Neg(shift);
      }
      Elem sum = s.Zero();
      for (int64_t j = 0; j < dim; ++j) {
        const int64_t at = base + j * inner;
        y.data[at] = s.Activate(Activation::kExp, s.Add(x.data[at], shift));
        sum = s.Add(sum, y.data[at]);
      }
      const Elem r = s.Reciprocal(sum);
      for (int64_t j = 0; j < dim; ++j)
        y.data[base + j * inner] = s.Mul(y.data[base + j * inner], r);
    }
}

}  // namespace verisub::specs::ops
