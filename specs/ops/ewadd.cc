// ewadd: parameters, shape rule and axioms.
#include "specs/ops/ewadd.h"

namespace verisub::specs::ops {

OpSpec EwAddSpec() {
  OpSpec op;
  op.kind = OpKind::kEwAdd;
  op.name = "ewadd";
  op.summary = "elementwise sum of two tensors of the same shape";
  op.num_inputs = 2;
  op.commutative = true;
  op.shape_rule = SameShapeBinary;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
ewadd_comm (x y) (ewadd x y) = (ewadd y x)
ewadd_assoc (x y z) (ewadd x (ewadd y z)) = (ewadd (ewadd x y) z)
ewadd_transpose (x y) (transpose (ewadd x y)) = (ewadd (transpose x) (transpose y))
ewadd_concat (x y z w) (concat (ewadd x y) (ewadd z w)) = (ewadd (concat x z) (concat y w))
)";
  return op;
}

}  // namespace verisub::specs::ops
