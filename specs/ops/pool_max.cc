// pool_max: parameters, shape rule and axioms.
#include "specs/ops/pool_max.h"

namespace verisub::specs::ops {

OpSpec PoolMaxSpec() {
  OpSpec op;
  op.kind = OpKind::kPoolMax;
  op.name = "pool_max";
  op.summary = "max pooling over windows of x [N,C,H,W]; padded positions are ignored";
  op.num_inputs = 1;
  op.params = PoolParams();
  op.shape_rule = PoolShape;
  op.flops = PoolFlops;
  op.layouts.layouts = {Layout::kPlain, Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};
  op.axioms = R"(
pool_max_relu_fusion (x:4) (pool_max[activation=relu] x) = (relu (pool_max[activation=none] x))
pool_max_concat_batch (x:4 y:4) (concat[axis=0] (pool_max x) (pool_max y)) = (pool_max (concat[axis=0] x y))
pool_max_concat_channels (x:4 y:4) (concat[axis=1] (pool_max x) (pool_max y)) = (pool_max (concat[axis=1] x y))
)";
  return op;
}

}  // namespace verisub::specs::ops
