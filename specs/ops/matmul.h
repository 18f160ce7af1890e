// matmul: (batched) matrix multiplication with a fused activation.
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kMatmulActivation = 0;

OpSpec MatmulSpec();

// a [..., M, K] x b [..., K, N] -> [..., M, N]; batch dimensions broadcast.
template <class S>
void MatmulKernel(const S& s, const Params& p, const Tensor<typename S::Elem>* const* in,
                  Tensor<typename S::Elem>* out) {
  const auto& a = *in[0];
  const auto& b = *in[1];
  auto& y = out[0];
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  const Shape& ys = y.shape();
  int64_t m = as[as.rank - 2], k = as[as.rank - 1], n = bs[bs.rank - 1];
  Shape batch, abatch, bbatch;
  batch.rank = ys.rank - 2;
  for (int i = 0; i < batch.rank; ++i) batch[i] = ys[i];
  abatch.rank = as.rank - 2;
  for (int i = 0; i < abatch.rank; ++i) abatch[i] = as[i];
  bbatch.rank = bs.rank - 2;
  for (int i = 0; i < bbatch.rank; ++i) bbatch[i] = bs[i];
  auto act = static_cast<Activation>(p[kMatmulActivation]);
  y.data.assign(ys.NumElements(), s.Zero());
  int64_t out_batch = 0;
  ForEachBroadcast(batch, abatch, bbatch, [&](int64_t ab, int64_t bb) {
    const auto* pa = &a.data[ab * m * k];
    const auto* pb = &b.data[bb * k * n];
    auto* py = &y.data[out_batch * m * n];
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        auto acc = s.Mul(pa[i * k], pb[j]);
        for (int64_t t = 1; t < k; ++t) acc = s.Add(acc, s.Mul(pa[i * k + t], pb[t * n + j]));
        py[i * n + j] = s.Activate(act, acc);
      }
    ++out_batch;
  });
}

}  // namespace verisub::specs::ops
