// log: elementwise natural logarithm (a sub-operator, docs/subops.md).
#pragma once

#include "specs/ops/elementwise.h"

namespace verisub::specs::ops {

OpSpec LogSpec();

template <class S>
void LogKernel(const S& s, const Params&, const Tensor<typename S::Elem>* const* in,
               Tensor<typename S::Elem>* out) {
  ActivationKernel(s, Activation::kLog, in, out);
}

}  // namespace verisub::specs::ops
