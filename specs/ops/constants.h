// Helpers for the four constant operators. Each takes one input that only supplies a shape
// (its data is never read), so rules that introduce constants stay valid for any shape.
#pragma once

#include "specs/op_spec.h"
#include "specs/ops/common.h"

namespace verisub::specs::ops {

inline constexpr int kConstKernelH = 0, kConstKernelW = 1;

std::vector<ParamDesc> ConstKernelParams();
// For const_iconv and const_pool: ref must be [N,C,H,W] and the window odd.
Status ConstKernelShape(const TensorType& ref, const Params& p, int64_t in_channels_per_out,
                        TensorType* out);

}  // namespace verisub::specs::ops
