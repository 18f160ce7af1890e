// neg: parameters, shape rule and axioms.
#include "specs/ops/neg.h"

namespace verisub::specs::ops {

OpSpec NegSpec() {
  OpSpec op;
  op.kind = OpKind::kNeg;
  op.name = "neg";
  op.summary = "elementwise -x";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
neg_involution (x) (neg (neg x)) = x
neg_ewadd (x y) (neg (ewadd x y)) = (ewadd (neg x) (neg y))
neg_ewmul (x y) (neg (ewmul x y)) = (ewmul (neg x) y)
neg_ewsub (x y) (neg (ewsub x y)) = (ewsub y x)
neg_transpose (x) (transpose (neg x)) = (neg (transpose x))
neg_concat (x y) (concat (neg x) (neg y)) = (neg (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
