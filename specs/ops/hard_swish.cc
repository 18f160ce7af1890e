// hard_swish: parameters, shape rule and axioms.
#include "specs/ops/hard_swish.h"

namespace verisub::specs::ops {

OpSpec HardSwishSpec() {
  OpSpec op;
  op.kind = OpKind::kHardSwish;
  op.name = "hard_swish";
  op.summary = "elementwise x * hard_sigmoid(x) (ONNX HardSwish)";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
hard_swish_transpose (x) (transpose (hard_swish x)) = (hard_swish (transpose x))
hard_swish_concat (x y) (concat (hard_swish x) (hard_swish y)) = (hard_swish (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
