// reshape: reinterprets the elements (row-major) with another shape; one dimension may be -1.
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kReshapeShape = 0;  // kShape: rank in slot 0, dimensions in slots 1..

OpSpec ReshapeSpec();

template <class S>
void ReshapeKernel(const S&, const Params&, const Tensor<typename S::Elem>* const* in,
                   Tensor<typename S::Elem>* out) {
  out[0].data = in[0]->data;
}

}  // namespace verisub::specs::ops
