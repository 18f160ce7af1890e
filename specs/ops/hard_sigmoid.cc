// hard_sigmoid: parameters, shape rule and axioms.
#include "specs/ops/hard_sigmoid.h"

namespace verisub::specs::ops {

OpSpec HardSigmoidSpec() {
  OpSpec op;
  op.kind = OpKind::kHardSigmoid;
  op.name = "hard_sigmoid";
  op.summary = "elementwise max(0, min(1, x/6 + 1/2)) (ONNX HardSigmoid(alpha=1/6), PyTorch hardsigmoid)";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
hard_sigmoid_transpose (x) (transpose (hard_sigmoid x)) = (hard_sigmoid (transpose x))
hard_sigmoid_concat (x y) (concat (hard_sigmoid x) (hard_sigmoid y)) = (hard_sigmoid (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
