// Helpers shared by the operator files: input checks, broadcasting and window geometry.
#pragma once

#include <string>

#include "specs/op_spec.h"
#include "specs/semantics.h"
#include "specs/tensor.h"

namespace verisub::specs::ops {

std::string InputName(int i);  // "input 0"
Status ExpectRank(const TensorType& t, int i, int rank);
Status ExpectRankAtLeast(const TensorType& t, int i, int rank);
Status ExpectPositiveDims(const TensorType& t, int i);
// Multidirectional (numpy/ONNX) broadcasting of two types; trees of broadcast dims are ignored.
Status BroadcastTypes(const TensorType& a, const TensorType& b, TensorType* out);
// Output size and leading pad of a convolution or pooling window along one dimension. "same"
// pads (k-1)/2 on both sides and requires an odd window, so the output is ceil(in/stride) and a
// smaller centred kernel computes the same thing as its zero-padded enlargement.
Status WindowGeometry(const char* dim, int64_t in, int64_t k, int64_t stride, Padding padding,
                      int64_t* out, int64_t* pad);
ParamDesc ActivationParam(int slot);
ParamDesc PaddingParam(int slot);
ParamDesc IntParam(const char* name, int slot, std::vector<int64_t> domain);
ParamDesc AxisParam(int slot);

// Extent of the dimensions before `axis`, of `axis` and after it.
inline void AxisExtents(const Shape& s, int axis, int64_t* outer, int64_t* dim, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int d = 0; d < axis; ++d) *outer *= s[d];
  for (int d = axis + 1; d < s.rank; ++d) *inner *= s[d];
  *dim = s[axis];
}

// How the numeric paths of conv2d and matmul sum products: in the element type, except that
// modular products are summed unreduced in 64 bits (each below 2^32 after one fold, fewer than
// 2^30 of them) and reduced once per output, which gives the same residue.
template <class S>
struct SumAccumulator {
  using Elem = typename S::Elem;
  using Acc = Elem;
  static Acc MulAdd(const S& s, Acc acc, Elem x, Elem w) { return s.Add(acc, s.Mul(x, w)); }
  static Elem Finish(Acc acc) { return acc; }
};
template <>
struct SumAccumulator<ModIntSemantics> {
  using Elem = ModIntSemantics::Elem;
  using Acc = uint64_t;
  static Acc MulAdd(const ModIntSemantics&, Acc acc, Elem x, Elem w) {
    const uint64_t p = uint64_t{x} * w;
    return acc + (p & ModIntSemantics::kPrime) + (p >> 31);
  }
  static Elem Finish(Acc acc) { return ModIntSemantics::Reduce(acc); }
};

// Rows the arithmetic paths of the conv2d and matmul kernels accumulate together, so that each
// element read of the shared operand serves all of them (about 2x on this project's CPUs).
inline constexpr int64_t kMulAddBlock = 4;

// acc[q * acc_stride + j] += x[j * stride] * w[q] for q < block and j < len: one row of x into
// `block` rows of accumulators, each sum in the same order as one row at a time.
template <int64_t kBlock, class S, class Acc, class Elem>
void RowsMulAddBlock(const S& s, const Elem* __restrict x, int64_t stride, int64_t len,
                     Acc* __restrict acc, int64_t acc_stride, const Elem* w) {
  using Accumulator = SumAccumulator<S>;
  Elem wq[kBlock];
  for (int64_t q = 0; q < kBlock; ++q) wq[q] = w[q];
  // Each input element read once for all kBlock channels (the q loop unrolls).
  if (stride == 1) {
    for (int64_t j = 0; j < len; ++j)
      for (int64_t q = 0; q < kBlock; ++q)
        acc[q * acc_stride + j] = Accumulator::MulAdd(s, acc[q * acc_stride + j], x[j], wq[q]);
    return;
  }
  for (int64_t j = 0; j < len; ++j)
    for (int64_t q = 0; q < kBlock; ++q)
      acc[q * acc_stride + j] =
          Accumulator::MulAdd(s, acc[q * acc_stride + j], x[j * stride], wq[q]);
}

template <class S, class Acc, class Elem>
void RowsMulAdd(const S& s, int64_t block, const Elem* x, int64_t stride, int64_t len, Acc* acc,
                int64_t acc_stride, const Elem* w) {
  switch (block) {
    case 4:
      return RowsMulAddBlock<4>(s, x, stride, len, acc, acc_stride, w);
    case 3:
      return RowsMulAddBlock<3>(s, x, stride, len, acc, acc_stride, w);
    case 2:
      return RowsMulAddBlock<2>(s, x, stride, len, acc, acc_stride, w);
    default:
      return RowsMulAddBlock<1>(s, x, stride, len, acc, acc_stride, w);
  }
}

// Index of the element of a broadcast input for a given output index.
inline int64_t BroadcastOffset(const Shape& out, const Shape& in, const int64_t* out_index) {
  int64_t off = 0, stride = 1;
  for (int i = in.rank - 1, j = out.rank - 1; i >= 0; --i, --j) {
    int64_t idx = in.dims[i] == 1 ? 0 : out_index[j];
    off += idx * stride;
    stride *= in.dims[i];
  }
  return off;
}

// Calls f(a_offset, b_offset) for every output element of a broadcast binary operator.
template <typename F>
void ForEachBroadcast(const Shape& out, const Shape& a, const Shape& b, F&& f) {
  int64_t n = out.NumElements();
  int64_t idx[kMaxRank] = {};
  for (int64_t flat = 0; flat < n; ++flat) {
    f(BroadcastOffset(out, a, idx), BroadcastOffset(out, b, idx));
    for (int d = out.rank - 1; d >= 0; --d) {
      if (++idx[d] < out.dims[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace verisub::specs::ops
