// matmul: (batched) matrix multiplication with a fused activation.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

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
  using Elem = typename S::Elem;
  if constexpr (std::is_arithmetic_v<Elem>) {
    // The same sum per output (over t in order), up to kMulAddBlock rows of outputs at a time
    // so that the inner loop reads b along its rows once for all of them. Starting from zero
    // rather than from the first product gives the same value in numeric semantics (up to the
    // sign of a zero).
    using Accumulator = SumAccumulator<S>;
    std::vector<typename Accumulator::Acc> acc(kMulAddBlock * n);
    Elem av[kMulAddBlock];
    ForEachBroadcast(batch, abatch, bbatch, [&](int64_t ab, int64_t bb) {
      const Elem* pa = &a.data[ab * m * k];
      const Elem* pb = &b.data[bb * k * n];
      Elem* py = &y.data[out_batch * m * n];
      for (int64_t i0 = 0, rows = 0; i0 < m; i0 += rows) {
        rows = std::min(kMulAddBlock, m - i0);
        std::fill(acc.begin(), acc.begin() + rows * n, typename Accumulator::Acc{});
        for (int64_t t = 0; t < k; ++t) {
          for (int64_t q = 0; q < rows; ++q) av[q] = pa[(i0 + q) * k + t];
          RowsMulAdd(s, rows, pb + t * n, 1, n, acc.data(), n, av);
        }
        for (int64_t q = 0; q < rows; ++q)
          for (int64_t j = 0; j < n; ++j)
            py[(i0 + q) * n + j] = s.Activate(act, Accumulator::Finish(acc[q * n + j]));
      }
      ++out_batch;
    });
    return;
  }
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
