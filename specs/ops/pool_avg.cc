// pool_avg: parameters, shape rule and axioms.
#include "specs/ops/pool_avg.h"

namespace verisub::specs::ops {

OpSpec PoolAvgSpec() {
  OpSpec op;
  op.kind = OpKind::kPoolAvg;
  op.name = "pool_avg";
  op.summary = "average pooling over windows of x [N,C,H,W], dividing by the full window size";
  op.num_inputs = 1;
  op.params = PoolParams();
  op.shape_rule = PoolShape;
  op.flops = PoolFlops;
  op.layouts.layouts = {Layout::kPlain, Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};
  op.axioms = R"(
pool_avg_relu_fusion (x:4) (pool_avg[activation=relu] x) = (relu (pool_avg[activation=none] x))
pool_avg_concat_batch (x:4 y:4) (concat[axis=0] (pool_avg x) (pool_avg y)) = (pool_avg (concat[axis=0] x y))
pool_avg_concat_channels (x:4 y:4) (concat[axis=1] (pool_avg x) (pool_avg y)) = (pool_avg (concat[axis=1] x y))
pool_avg_linear (x:4 y:4) (pool_avg[activation=none] (ewadd x y)) = (ewadd (pool_avg[activation=none] x) (pool_avg[activation=none] y))
)";
  return op;
}

}  // namespace verisub::specs::ops
