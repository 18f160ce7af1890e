// gelu_tanh: parameters, shape rule and axioms.
#include "specs/ops/gelu_tanh.h"

namespace verisub::specs::ops {

OpSpec GeluTanhSpec() {
  OpSpec op;
  op.kind = OpKind::kGeluTanh;
  op.name = "gelu_tanh";
  op.summary = "elementwise x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (GELU, tanh form)";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
gelu_tanh_transpose (x) (transpose (gelu_tanh x)) = (gelu_tanh (transpose x))
gelu_tanh_concat (x y) (concat (gelu_tanh x) (gelu_tanh y)) = (gelu_tanh (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
