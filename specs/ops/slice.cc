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
  op.layouts.layouts = {Layout::kPlain, Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};
  // Unlike split, a slice's bounds are parameters, so it needs no concat history: ShuffleNet's
  // channel split reads the channel shuffle's reshape, which has none. A slice commutes with
  // elementwise operators and with a concat along another axis. (A slice that picks exactly one
  // operand of a concat along its own axis is not stated: its bounds would have to equal the
  // operand's extent, and axioms range over all shapes.)
  op.axioms = R"(
slice_ewadd (x y) (slice (ewadd x y)) = (ewadd (slice x) (slice y))
slice_ewmul (x y) (slice (ewmul x y)) = (ewmul (slice x) (slice y))
slice_smul (x s:0) (slice (smul x s)) = (smul (slice x) s)
slice_relu (x) (slice (relu x)) = (relu (slice x))
slice_sigmoid (x) (slice (sigmoid x)) = (sigmoid (slice x))
slice_tanh (x) (slice (tanh x)) = (tanh (slice x))
slice_concat (x y) (slice[axis=0] (concat[axis=1] x y)) = (concat[axis=1] (slice[axis=0] x) (slice[axis=0] y))
slice_concat_rows (x y) (slice[axis=1] (concat[axis=0] x y)) = (concat[axis=0] (slice[axis=1] x) (slice[axis=1] y))
)";
  return op;
}

}  // namespace verisub::specs::ops
