// recip: parameters, shape rule and axioms.
#include "specs/ops/recip.h"

namespace verisub::specs::ops {

OpSpec RecipSpec() {
  OpSpec op;
  op.kind = OpKind::kRecip;
  op.name = "recip";
  op.summary = "elementwise 1/x";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
recip_involution (x) (recip (recip x)) = x
recip_ewmul (x y) (recip (ewmul x y)) = (ewmul (recip x) (recip y))
recip_neg (x) (recip (neg x)) = (neg (recip x))
recip_exp (x) (recip (exp x)) = (exp (neg x))
recip_transpose (x) (transpose (recip x)) = (recip (transpose x))
recip_concat (x y) (concat (recip x) (recip y)) = (recip (concat x y))
)";
  op.real_only_axioms = {"recip_exp"};
  return op;
}

}  // namespace verisub::specs::ops
