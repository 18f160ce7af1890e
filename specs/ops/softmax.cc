// softmax: parameters, shape rule and axioms.
#include "specs/ops/softmax.h"

namespace verisub::specs::ops {
namespace {

// The normalised axis mixes its elements, so it loses its concat history; the others keep it
// (softmax works on each of their slices alone).
Status SoftmaxShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectRankAtLeast(x, 0, 1));
  const int64_t axis = p[kSoftmaxAxis];
  if (axis >= x.shape.rank)
    return InvalidArgument("parameter 'axis'=" + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(x.shape.rank));
  out[0] = x;
  out[0].trees[axis] = nullptr;
  return Status::Ok();
}

// Per element: the max, the exponential, the sum and the product with the reciprocal.
double SoftmaxFlops(const Params&, const Shape*, const Shape* out) {
  return 4.0 * static_cast<double>(out[0].NumElements());
}

}  // namespace

OpSpec SoftmaxSpec() {
  OpSpec op;
  op.kind = OpKind::kSoftmax;
  op.name = "softmax";
  op.summary = "exp(x) / sum(exp(x)) along axis";
  op.num_inputs = 1;
  op.params = {AxisParam(kSoftmaxAxis)};
  op.shape_rule = SoftmaxShape;
  op.flops = SoftmaxFlops;
  // A transpose moves the normalised axis; a concat along another axis stacks independent rows.
  op.axioms = R"(
softmax_transpose (x:2) (transpose[perm=[1,0]] (softmax[axis=1] x)) = (softmax[axis=0] (transpose[perm=[1,0]] x))
softmax_transpose_last (x:3) (transpose[perm=[0,2,1]] (softmax[axis=2] x)) = (softmax[axis=1] (transpose[perm=[0,2,1]] x))
softmax_concat (x y) (concat[axis=0] (softmax[axis=1] x) (softmax[axis=1] y)) = (softmax[axis=1] (concat[axis=0] x y))
softmax_concat_rows (x y) (concat[axis=1] (softmax[axis=0] x) (softmax[axis=0] y)) = (softmax[axis=0] (concat[axis=1] x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
