// ewmul: parameters, shape rule and axioms.
#include "specs/ops/ewmul.h"

namespace verisub::specs::ops {

OpSpec EwMulSpec() {
  OpSpec op;
  op.kind = OpKind::kEwMul;
  op.name = "ewmul";
  op.summary = "elementwise product of two tensors of the same shape";
  op.num_inputs = 2;
  op.commutative = true;
  op.shape_rule = SameShapeBinary;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
ewmul_comm (x y) (ewmul x y) = (ewmul y x)
ewmul_assoc (x y z) (ewmul x (ewmul y z)) = (ewmul (ewmul x y) z)
ewmul_distrib (x y z) (ewmul (ewadd x y) z) = (ewadd (ewmul x z) (ewmul y z))
ewmul_transpose (x y) (transpose (ewmul x y)) = (ewmul (transpose x) (transpose y))
ewmul_concat (x y z w) (concat (ewmul x y) (ewmul z w)) = (ewmul (concat x z) (concat y w))
ewmul_smul (x y s:0) (smul (ewmul x y) s) = (ewmul x (smul y s))
)";
  return op;
}

}  // namespace verisub::specs::ops
