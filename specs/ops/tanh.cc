// tanh: parameters, shape rule and axioms.
#include "specs/ops/tanh.h"

namespace verisub::specs::ops {

OpSpec TanhSpec() {
  OpSpec op;
  op.kind = OpKind::kTanh;
  op.name = "tanh";
  op.summary = "elementwise tanh";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
tanh_transpose (x) (transpose (tanh x)) = (tanh (transpose x))
tanh_concat (x y) (concat (tanh x) (tanh y)) = (tanh (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
