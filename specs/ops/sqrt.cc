// sqrt: parameters, shape rule and axioms.
#include "specs/ops/sqrt.h"

namespace verisub::specs::ops {

OpSpec SqrtSpec() {
  OpSpec op;
  op.kind = OpKind::kSqrt;
  op.name = "sqrt";
  op.summary = "elementwise square root";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
sqrt_transpose (x) (transpose (sqrt x)) = (sqrt (transpose x))
sqrt_concat (x y) (concat (sqrt x) (sqrt y)) = (sqrt (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
