// abs: parameters, shape rule and axioms.
#include "specs/ops/abs.h"

namespace verisub::specs::ops {

OpSpec AbsSpec() {
  OpSpec op;
  op.kind = OpKind::kAbs;
  op.name = "abs";
  op.summary = "elementwise |x|";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  // abs_abs needs the solver (|x| >= 0 is no ring identity): declared where it is validated.
  op.axioms = R"(
abs_neg (x) (abs (neg x)) = (abs x)
abs_abs (x:1|2) (abs (abs x)) = (abs x)
abs_transpose (x) (transpose (abs x)) = (abs (transpose x))
)";
  return op;
}

}  // namespace verisub::specs::ops
