// transpose: permutation of dimensions.
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kTransposePerm = 0;

OpSpec TransposeSpec();

// y[i_0..i_r] = x[j] with j[perm[d]] = i[d].
template <class S>
void TransposeKernel(const S&, const Params& p, const Tensor<typename S::Elem>* const* in,
                     Tensor<typename S::Elem>* out) {
  const auto& x = *in[0];
  auto& y = out[0];
  std::vector<int> perm = DecodePerm(p[kTransposePerm]);
  const Shape& ys = y.shape();
  auto xst = Strides(x.shape());
  int64_t n = ys.NumElements();
  y.data.clear();
  y.data.reserve(n);
  int64_t idx[kMaxRank] = {};
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t off = 0;
    for (int d = 0; d < ys.rank; ++d) off += idx[d] * xst[perm[d]];
    y.data.push_back(x.data[off]);
    for (int d = ys.rank - 1; d >= 0; --d) {
      if (++idx[d] < ys[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace verisub::specs::ops
