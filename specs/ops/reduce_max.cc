// reduce_max: parameters, shape rule and axioms.
#include "specs/ops/reduce_max.h"

namespace verisub::specs::ops {

OpSpec ReduceMaxSpec() {
  OpSpec op;
  op.kind = OpKind::kReduceMax;
  op.name = "reduce_max";
  op.summary = "maximum of x over one axis, kept as extent 1";
  op.num_inputs = 1;
  op.params = {AxisParam(kReduceAxis)};
  op.shape_rule = AxisKeptAsOneShape;
  // The maximum of a broadcast is its operand; a term broadcast along the axis moves out (the
  // row maximum softmax subtracts); maxima of maxima merge. reduce_max_ewadd_broadcast* need the
  // solver on every element (an order fact, about 20 ms each): stated for the axes and ranks of
  // matrices, where they are validated in seconds (every rank 1..4 took minutes).
  op.axioms = R"(
reduce_max_again (x) (reduce_max (reduce_max x)) = (reduce_max x)
reduce_max_broadcast (x) (reduce_max (broadcast x)) = x
reduce_max_ewmax (x y) (reduce_max (ewmax x y)) = (ewmax (reduce_max x) (reduce_max y))
reduce_max_ewadd_broadcast0 (x:1|2 v:1|2) (reduce_max[axis=0] (ewadd x (broadcast[axis=0] v))) = (ewadd (reduce_max[axis=0] x) v)
reduce_max_ewadd_broadcast1 (x:2 v:2) (reduce_max[axis=1] (ewadd x (broadcast[axis=1] v))) = (ewadd (reduce_max[axis=1] x) v)
reduce_max_transpose (x:2) (reduce_max[axis=0] (transpose[perm=[1,0]] x)) = (transpose[perm=[1,0]] (reduce_max[axis=1] x))
)";
  op.real_only_axioms = {"reduce_max_ewadd_broadcast0", "reduce_max_ewadd_broadcast1"};
  return op;
}

}  // namespace verisub::specs::ops
