// ewmax: parameters, shape rule and axioms.
#include "specs/ops/ewmax.h"

namespace verisub::specs::ops {

OpSpec EwMaxSpec() {
  OpSpec op;
  op.kind = OpKind::kEwMax;
  op.name = "ewmax";
  op.summary = "elementwise maximum of two tensors of the same shape";
  op.num_inputs = 2;
  op.commutative = true;
  op.idempotent = true;
  op.shape_rule = SameShapeBinary;
  op.layouts.layout_agnostic = true;
  // ewmax_ewadd needs the solver (an order fact, no ring identity): declared where it is
  // validated.
  op.axioms = R"(
ewmax_comm (x y) (ewmax x y) = (ewmax y x)
ewmax_assoc (x y z) (ewmax x (ewmax y z)) = (ewmax (ewmax x y) z)
ewmax_idem (x) (ewmax x x) = x
ewmax_ewadd (x:1|2 y:1|2 z:1|2) (ewadd (ewmax x y) z) = (ewmax (ewadd x z) (ewadd y z))
ewmax_neg (x y) (neg (ewmax x y)) = (ewmin (neg x) (neg y))
ewmax_transpose (x y) (transpose (ewmax x y)) = (ewmax (transpose x) (transpose y))
ewmax_concat (x y z w) (concat (ewmax x y) (ewmax z w)) = (ewmax (concat x z) (concat y w))
)";
  op.real_only_axioms = {"ewmax_ewadd"};
  return op;
}

}  // namespace verisub::specs::ops
