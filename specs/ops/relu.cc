// relu: parameters, shape rule and axioms.
#include "specs/ops/relu.h"

namespace verisub::specs::ops {

OpSpec ReluSpec() {
  OpSpec op;
  op.kind = OpKind::kRelu;
  op.name = "relu";
  op.summary = "elementwise relu";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
relu_transpose (x) (transpose (relu x)) = (relu (transpose x))
relu_concat (x y) (concat (relu x) (relu y)) = (relu (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
