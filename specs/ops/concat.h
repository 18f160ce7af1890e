// concat: concatenation of two tensors along an axis (records the split point in the split tree).
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kConcatAxis = 0;

OpSpec ConcatSpec();

// Copies blocks of `inner` elements from a and b in turn, `outer` times.
template <class S>
void ConcatKernel(const S&, const Params& p, const Tensor<typename S::Elem>* const* in,
                  Tensor<typename S::Elem>* out) {
  int axis = static_cast<int>(p[kConcatAxis]);
  const auto& a = *in[0];
  const auto& b = *in[1];
  auto& y = out[0];
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= y.shape()[d];
  for (int d = axis + 1; d < y.shape().rank; ++d) inner *= y.shape()[d];
  int64_t na = a.shape()[axis] * inner, nb = b.shape()[axis] * inner;
  y.data.clear();
  y.data.reserve(y.shape().NumElements());
  for (int64_t o = 0; o < outer; ++o) {
    y.data.insert(y.data.end(), a.data.begin() + o * na, a.data.begin() + (o + 1) * na);
    y.data.insert(y.data.end(), b.data.begin() + o * nb, b.data.begin() + (o + 1) * nb);
  }
}

}  // namespace verisub::specs::ops
