// slice: parameters and shape rule.
#include "specs/ops/slice.h"

namespace verisub::specs::ops {
namespace {

Status SliceShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(x, 0));
  const int axis = static_cast<int>(p[kSliceAxis]);
  if (axis >= x.shape.rank)
    return InvalidArgument("parameter 'axis'=" + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(x.shape.rank));
  const int64_t start = p[kSliceStart], end = p[kSliceEnd], dim = x.shape[axis];
  if (start >= end || end > dim)
    return InvalidArgument("parameters 'start'=" + std::to_string(start) + " and 'end'=" +
                           std::to_string(end) + " are no non-empty range of dimension " +
                           std::to_string(axis) + " (" + std::to_string(dim) + ")");
  out[0] = x;
  out[0].shape[axis] = end - start;
  out[0].trees[axis] = nullptr;  // a slice is no concat to undo
  return Status::Ok();
}

}  // namespace

OpSpec SliceSpec() {
  OpSpec op;
  op.kind = OpKind::kSlice;
  op.name = "slice";
  op.summary = "elements [start, end) of x along axis; the rest of x is dropped";
  op.num_inputs = 1;
  ParamDesc start = IntParam("start", kSliceStart, {0});
  start.min_value = 0;
  op.params = {AxisParam(kSliceAxis), start, IntParam("end", kSliceEnd, {1})};
  op.shape_rule = SliceShape;
  // Unlike split, a slice's bounds are parameters, so it needs no concat history: ShuffleNet's
  // channel split reads the channel shuffle's reshape, which has none. No axioms yet: the
  // generator configs leave it out, so rules never match it, but it is typed and priced.
  return op;
}

}  // namespace verisub::specs::ops
