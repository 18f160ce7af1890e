// ewsub: parameters, shape rule and axioms.
#include "specs/ops/ewsub.h"

namespace verisub::specs::ops {

OpSpec EwSubSpec() {
  OpSpec op;
  op.kind = OpKind::kEwSub;
  op.name = "ewsub";
  op.summary = "elementwise difference of two tensors of the same shape";
  op.num_inputs = 2;
  op.shape_rule = SameShapeBinary;
  op.layouts.layout_agnostic = true;
  // Subtraction is the inverse of ewadd (the first two axioms); its linearity facts (conv, matmul,
  // ewmul over a difference) follow from them and the ewadd axioms.
  op.axioms = R"(
ewsub_add_inverse (x y) (ewadd (ewsub x y) y) = x
ewsub_cancel (x y) (ewsub (ewadd x y) y) = x
ewsub_transpose (x y) (transpose (ewsub x y)) = (ewsub (transpose x) (transpose y))
ewsub_concat (x y z w) (concat (ewsub x y) (ewsub z w)) = (ewsub (concat x z) (concat y w))
)";
  return op;
}

}  // namespace verisub::specs::ops
