// log: parameters, shape rule and axioms.
#include "specs/ops/log.h"

namespace verisub::specs::ops {

OpSpec LogSpec() {
  OpSpec op;
  op.kind = OpKind::kLog;
  op.name = "log";
  op.summary = "elementwise natural logarithm";
  op.num_inputs = 1;
  op.shape_rule = UnaryShape;
  op.layouts.layout_agnostic = true;
  // log(ab) = log(a) + log(b) holds for positive operands only: no axiom.
  op.axioms = R"(
log_transpose (x) (transpose (log x)) = (log (transpose x))
log_concat (x y) (concat (log x) (log y)) = (log (concat x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
