// slice: the elements [start, end) of x along one axis (ONNX Slice with unit step on one axis).
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kSliceAxis = 0;
inline constexpr int kSliceStart = 1;
inline constexpr int kSliceEnd = 2;

OpSpec SliceSpec();

template <class S>
void SliceKernel(const S&, const Params& p, const Tensor<typename S::Elem>* const* in,
                 Tensor<typename S::Elem>* out) {
  const int axis = static_cast<int>(p[kSliceAxis]);
  const int64_t start = p[kSliceStart], end = p[kSliceEnd];
  const auto& x = *in[0];
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int d = axis + 1; d < x.shape().rank; ++d) inner *= x.shape()[d];
  const int64_t extent = x.shape()[axis] * inner;
  out[0].data.clear();
  for (int64_t o = 0; o < outer; ++o) {
    auto base = x.data.begin() + o * extent;
    out[0].data.insert(out[0].data.end(), base + start * inner, base + end * inner);
  }
}

}  // namespace verisub::specs::ops
