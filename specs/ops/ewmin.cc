// ewmin: parameters, shape rule and axioms.
#include "specs/ops/ewmin.h"

namespace verisub::specs::ops {

OpSpec EwMinSpec() {
  OpSpec op;
  op.kind = OpKind::kEwMin;
  op.name = "ewmin";
  op.summary = "elementwise minimum of two tensors of the same shape";
  op.num_inputs = 2;
  op.commutative = true;
  op.idempotent = true;
  op.shape_rule = SameShapeBinary;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
ewmin_comm (x y) (ewmin x y) = (ewmin y x)
ewmin_assoc (x y z) (ewmin x (ewmin y z)) = (ewmin (ewmin x y) z)
ewmin_idem (x) (ewmin x x) = x
ewmin_ewmax_absorb (x:1|2 y:1|2) (ewmin x (ewmax x y)) = x
ewmin_transpose (x y) (transpose (ewmin x y)) = (ewmin (transpose x) (transpose y))
)";
  return op;
}

}  // namespace verisub::specs::ops
