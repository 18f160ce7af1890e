// broadcast: parameters, shape rule and axioms.
#include "specs/ops/broadcast.h"

namespace verisub::specs::ops {
namespace {

Status BroadcastShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(x, 0));
  const int64_t axis = p[kBroadcastAxis];
  if (axis < 0 || axis >= x.shape.rank)
    return InvalidArgument("parameter 'axis'=" + std::to_string(axis) + " is no axis of input 0 " +
                           x.shape.ToString());
  if (x.shape[static_cast<int>(axis)] != 1)
    return InvalidArgument("input 0 " + x.shape.ToString() + " has extent " +
                           std::to_string(x.shape[static_cast<int>(axis)]) + " along axis " +
                           std::to_string(axis) + ", not 1");
  out[0] = x;
  out[0].shape[static_cast<int>(axis)] = p[kBroadcastExtent];
  out[0].trees[static_cast<int>(axis)] = SplitTree();
  return Status::Ok();
}

}  // namespace

OpSpec BroadcastSpec() {
  OpSpec op;
  op.kind = OpKind::kBroadcast;
  op.name = "broadcast";
  op.summary = "an axis of extent 1 repeated 'extent' times";
  op.num_inputs = 1;
  op.params = {AxisParam(kBroadcastAxis), IntParam("extent", kBroadcastExtent, {2, 4})};
  op.shape_rule = BroadcastShape;
  // Elementwise operators commute with it; a transpose maps its axis.
  op.axioms = R"(
broadcast_neg (x) (broadcast (neg x)) = (neg (broadcast x))
broadcast_recip (x) (broadcast (recip x)) = (recip (broadcast x))
broadcast_exp (x) (broadcast (exp x)) = (exp (broadcast x))
broadcast_ewadd (x y) (broadcast (ewadd x y)) = (ewadd (broadcast x) (broadcast y))
broadcast_ewmul (x y) (broadcast (ewmul x y)) = (ewmul (broadcast x) (broadcast y))
broadcast_ewmax (x y) (broadcast (ewmax x y)) = (ewmax (broadcast x) (broadcast y))
broadcast_transpose (x:2) (transpose[perm=[1,0]] (broadcast[axis=1] x)) = (broadcast[axis=0] (transpose[perm=[1,0]] x))
)";
  return op;
}

}  // namespace verisub::specs::ops
