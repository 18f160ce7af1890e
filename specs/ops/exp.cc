// exp: parameters, shape rule and axioms.
#include "specs/ops/exp.h"

namespace verisub::specs::ops {

OpSpec ExpSpec() {
  OpSpec op;
  op.kind = OpKind::kExp;
  op.name = "exp";
  op.summary = "elementwise e^x";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
exp_transpose (x) (transpose (exp x)) = (exp (transpose x))
exp_concat (x y) (concat (exp x) (exp y)) = (exp (concat x y))
exp_ewadd (x y) (exp (ewadd x y)) = (ewmul (exp x) (exp y))
)";
  op.real_only_axioms = {"exp_ewadd"};
  return op;
}

}  // namespace verisub::specs::ops
