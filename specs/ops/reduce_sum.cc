// reduce_sum: parameters, shape rule and axioms.
#include "specs/ops/reduce_sum.h"

namespace verisub::specs::ops {

OpSpec ReduceSumSpec() {
  OpSpec op;
  op.kind = OpKind::kReduceSum;
  op.name = "reduce_sum";
  op.summary = "sum of x over one axis, kept as extent 1";
  op.num_inputs = 1;
  op.params = {AxisParam(kReduceAxis)};
  op.shape_rule = AxisKeptAsOneShape;
  // Linear; a second sum over the (now extent-1) axis changes nothing; a factor broadcast along
  // the summed axis moves out of the sum; the sum of a broadcast is a multiple (extents 2 and 4,
  // the broadcast's domain: n times any of the copies, their maximum, which reduce_max_broadcast
  // takes back to x); a transpose maps the axis. The multiple is not written of x itself: a side
  // made of operator-level operators only, (ewadd x x), would be a trigger in every proof of the
  // operator-level configs (it changed 127 outcomes of taso.cfg between unknown and timeout).
  op.axioms = R"(
reduce_sum_again (x) (reduce_sum (reduce_sum x)) = (reduce_sum x)
reduce_sum_ewadd (x y) (reduce_sum (ewadd x y)) = (ewadd (reduce_sum x) (reduce_sum y))
reduce_sum_neg (x) (reduce_sum (neg x)) = (neg (reduce_sum x))
reduce_sum_smul (x s:0) (reduce_sum (smul x s)) = (smul (reduce_sum x) s)
reduce_sum_broadcast_factor (x v) (reduce_sum (ewmul x (broadcast v))) = (ewmul (reduce_sum x) v)
reduce_sum_broadcast2 (x) (reduce_sum (broadcast[extent=2] x)) = (ewadd (reduce_max (broadcast[extent=2] x)) (reduce_max (broadcast[extent=2] x)))
reduce_sum_broadcast4 (x) (reduce_sum (broadcast[extent=4] x)) = (ewadd (ewadd (reduce_max (broadcast[extent=4] x)) (reduce_max (broadcast[extent=4] x))) (ewadd (reduce_max (broadcast[extent=4] x)) (reduce_max (broadcast[extent=4] x))))
reduce_sum_transpose (x:2) (reduce_sum[axis=0] (transpose[perm=[1,0]] x)) = (transpose[perm=[1,0]] (reduce_sum[axis=1] x))
)";
  return op;
}

}  // namespace verisub::specs::ops
