// relu6: parameters, shape rule and axioms.
#include "specs/ops/relu6.h"

namespace verisub::specs::ops {

OpSpec Relu6Spec() {
  OpSpec op;
  op.kind = OpKind::kRelu6;
  op.name = "relu6";
  op.summary = "elementwise min(max(x, 0), 6) (ONNX Clip(0, 6), ReLU6)";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
relu6_transpose (x) (transpose (relu6 x)) = (relu6 (transpose x))
relu6_concat (x y) (concat (relu6 x) (relu6 y)) = (relu6 (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
