// concat: parameters, shape rule and axioms.
#include "specs/ops/concat.h"

namespace verisub::specs::ops {
namespace {

Status ConcatShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& a = *in[0];
  const TensorType& b = *in[1];
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(a, 0));
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(b, 1));
  int axis = static_cast<int>(p[kConcatAxis]);
  if (a.shape.rank != b.shape.rank)
    return InvalidArgument("inputs have different ranks: " + a.shape.ToString() + " and " +
                           b.shape.ToString());
  if (axis >= a.shape.rank)
    return InvalidArgument("parameter 'axis'=" + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(a.shape.rank));
  out[0] = TensorType(a.shape);
  for (int d = 0; d < a.shape.rank; ++d) {
    if (d == axis) continue;
    if (a.shape[d] != b.shape[d])
      return InvalidArgument("inputs " + a.shape.ToString() + " and " + b.shape.ToString() +
                             " differ in dimension " + std::to_string(d) +
                             ", which is not the concat axis");
    out[0].trees[d] = MergeTrees(a.trees[d], b.trees[d]);
  }
  out[0].shape[axis] = a.shape[axis] + b.shape[axis];
  out[0].trees[axis] = ConcatTrees(a.shape[axis], a.trees[axis], b.trees[axis]);
  return Status::Ok();
}

}  // namespace

OpSpec ConcatSpec() {
  OpSpec op;
  op.kind = OpKind::kConcat;
  op.name = "concat";
  op.summary = "concatenates a and b along axis; split along that axis undoes it";
  op.num_inputs = 2;
  op.params = {AxisParam(kConcatAxis)};
  op.params[0].domain = {0, 1};
  op.shape_rule = ConcatShape;
  op.layouts.layouts = {Layout::kPlain, Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};
  // concat's laws with other operators live with those operators; split0/split1 of a concat are
  // in split's file. Concat associativity is deliberately absent: it changes the split tree.
  // The block interchange (TASO's rule): a 2x2 grid of blocks concatenated rows first or columns
  // first. Both sides type-check exactly when a and b agree off the inner axis, c and d too, and
  // a and c (so b and d) have equal extents along the inner axis; validation covers those shapes,
  // and a rewrite whose other side does not type-check is rejected by the shape rules. With the
  // outer and inner axes swapped it is the same equation read right to left, so one line covers
  // both orders of the two axes (the domain is {0, 1}); equal axes would reorder the blocks.
  op.axioms = R"(
concat_interchange (a b c d) (concat[axis=0] (concat[axis=1] a b) (concat[axis=1] c d)) = (concat[axis=1] (concat[axis=0] a c) (concat[axis=0] b d))
)";
  return op;
}

}  // namespace verisub::specs::ops
