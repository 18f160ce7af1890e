// erf: parameters, shape rule and axioms.
#include "specs/ops/erf.h"

namespace verisub::specs::ops {

OpSpec ErfSpec() {
  OpSpec op;
  op.kind = OpKind::kErf;
  op.name = "erf";
  op.summary = "elementwise error function";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  op.axioms = R"(
erf_transpose (x) (transpose (erf x)) = (erf (transpose x))
erf_concat (x y) (concat (erf x) (erf y)) = (erf (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
