// gelu: parameters, shape rule and axioms.
#include "specs/ops/gelu.h"

namespace verisub::specs::ops {

OpSpec GeluSpec() {
  OpSpec op;
  op.kind = OpKind::kGelu;
  op.name = "gelu";
  op.summary = "elementwise x/2 * (1 + erf(x/sqrt(2))) (GELU, exact form)";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
gelu_transpose (x) (transpose (gelu x)) = (gelu (transpose x))
gelu_concat (x y) (concat (gelu x) (gelu y)) = (gelu (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
