// The shape rule of the one-axis reductions.
#include "specs/ops/reduce_axis.h"

namespace verisub::specs::ops {

Status AxisKeptAsOneShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(x, 0));
  const int64_t axis = p[kReduceAxis];
  if (axis < 0 || axis >= x.shape.rank)
    return InvalidArgument("parameter 'axis'=" + std::to_string(axis) + " is no axis of input 0 " +
                           x.shape.ToString());
  out[0] = x;
  out[0].shape[static_cast<int>(axis)] = 1;
  out[0].trees[static_cast<int>(axis)] = SplitTree();
  return Status::Ok();
}

}  // namespace verisub::specs::ops
