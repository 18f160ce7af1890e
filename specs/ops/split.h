// split: undoes the most recent concat along an axis (TASO's split tree); two outputs.
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kSplitAxis = 0;

OpSpec SplitSpec();

template <class S>
void SplitKernel(const S&, const Params& p, const Tensor<typename S::Elem>* const* in,
                 Tensor<typename S::Elem>* out) {
  int axis = static_cast<int>(p[kSplitAxis]);
  const auto& x = *in[0];
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int d = axis + 1; d < x.shape().rank; ++d) inner *= x.shape()[d];
  int64_t n0 = out[0].shape()[axis] * inner, n1 = out[1].shape()[axis] * inner;
  out[0].data.clear();
  out[1].data.clear();
  for (int64_t o = 0; o < outer; ++o) {
    auto base = x.data.begin() + o * (n0 + n1);
    out[0].data.insert(out[0].data.end(), base, base + n0);
    out[1].data.insert(out[1].data.end(), base + n0, base + n0 + n1);
  }
}

}  // namespace verisub::specs::ops
