// select: elementwise choice select(m, a, b) = m ? a : b for a 0/1 mask m (a sub-operator,
// docs/subops.md).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec SelectSpec();

// b + m * (a - b): a and b where m is 1 and 0, and no branch on an element's value, so every
// semantics runs it. For other values of m it is the affine blend, which is what rules are
// proved for (anything that holds for every m holds for the 0/1 masks too).
template <class S>
void SelectKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
                  Tensor<typename S::Elem>* out) {
  const auto& m = *in[0];
  const auto& a = *in[1];
  const auto& b = *in[2];
  out[0].data.resize(m.data.size());
  for (size_t i = 0; i < m.data.size(); ++i)
    out[0].data[i] = s.Add(b.data[i], s.Mul(m.data[i], s.Add(a.data[i], s.Neg(b.data[i]))));
}

}  // namespace verisub::specs::ops
