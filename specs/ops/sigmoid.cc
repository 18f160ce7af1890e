// sigmoid: parameters, shape rule and axioms.
#include "specs/ops/sigmoid.h"

namespace verisub::specs::ops {

OpSpec SigmoidSpec() {
  OpSpec op;
  op.kind = OpKind::kSigmoid;
  op.name = "sigmoid";
  op.summary = "elementwise sigmoid";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
sigmoid_transpose (x) (transpose (sigmoid x)) = (sigmoid (transpose x))
sigmoid_concat (x y) (concat (sigmoid x) (sigmoid y)) = (sigmoid (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
