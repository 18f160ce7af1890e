// const_pool: parameters, shape rule and axioms.
#include "specs/ops/const_pool.h"

namespace verisub::specs::ops {
namespace {

Status ConstPoolShape(const Params& p, const TensorType* const* in, TensorType* out) {
  return ConstKernelShape(*in[0], p, 1, &out[0]);
}

}  // namespace

OpSpec ConstPoolSpec() {
  OpSpec op;
  op.kind = OpKind::kConstPool;
  op.name = "const_pool";
  op.summary = "depthwise kernel [C,1,kernel_h,kernel_w] of 1/(kernel_h*kernel_w) for [N,C,H,W]";
  op.num_inputs = 1;
  op.is_constant = true;
  op.params = ConstKernelParams();
  op.shape_rule = ConstPoolShape;
  op.axioms = R"(
pool_avg_as_conv (x:4) (pool_avg[activation=none] x) = (conv2d[activation=none,group=dw] x (const_pool x))
)";
  return op;
}

}  // namespace verisub::specs::ops
