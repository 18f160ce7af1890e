// split: parameters, shape rule and axioms.
#include "specs/ops/split.h"

namespace verisub::specs::ops {
namespace {

Status SplitShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(x, 0));
  int axis = static_cast<int>(p[kSplitAxis]);
  if (axis >= x.shape.rank)
    return InvalidArgument("parameter 'axis'=" + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(x.shape.rank));
  const SplitTree& t = x.trees[axis];
  if (!t)
    return InvalidArgument("input 0 has no concat along axis " + std::to_string(axis) +
                           " to undo, so the split point is unknown");
  if (t->conflict)
    return InvalidArgument("input 0 mixes different concat histories along axis " +
                           std::to_string(axis) + ", so the split point is ambiguous");
  out[0] = x;
  out[1] = x;
  out[0].shape[axis] = t->left_size;
  out[0].trees[axis] = t->left;
  out[1].shape[axis] = x.shape[axis] - t->left_size;
  out[1].trees[axis] = t->right;
  return Status::Ok();
}

}  // namespace

OpSpec SplitSpec() {
  OpSpec op;
  op.kind = OpKind::kSplit;
  op.name = "split";
  op.summary = "splits x along axis at the point of the most recent concat along that axis";
  op.num_inputs = 1;
  op.num_outputs = 2;
  op.params = {AxisParam(kSplitAxis)};
  op.params[0].domain = {0, 1};
  op.shape_rule = SplitShape;
  op.layouts.layouts = {Layout::kPlain, Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};
  op.axioms = R"(
split0_concat (x y) (split.0 (concat x y)) = x
split1_concat (x y) (split.1 (concat x y)) = y
)";
  return op;
}

}  // namespace verisub::specs::ops
