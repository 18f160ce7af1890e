// silu: parameters, shape rule and axioms.
#include "specs/ops/silu.h"

namespace verisub::specs::ops {

OpSpec SiluSpec() {
  OpSpec op;
  op.kind = OpKind::kSilu;
  op.name = "silu";
  op.summary = "elementwise x * sigmoid(x) (SiLU, swish)";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
silu_transpose (x) (transpose (silu x)) = (silu (transpose x))
silu_concat (x y) (concat (silu x) (silu y)) = (silu (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
