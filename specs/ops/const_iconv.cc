// const_iconv: parameters, shape rule and axioms.
#include "specs/ops/const_iconv.h"

namespace verisub::specs::ops {
namespace {

Status ConstIConvShape(const Params& p, const TensorType* const* in, TensorType* out) {
  return ConstKernelShape(*in[0], p, 0, &out[0]);
}

}  // namespace

OpSpec ConstIConvSpec() {
  OpSpec op;
  op.kind = OpKind::kConstIConv;
  op.name = "const_iconv";
  op.summary = "identity convolution kernel [C,C,kernel_h,kernel_w] for an input [N,C,H,W]";
  op.num_inputs = 1;
  op.is_constant = true;
  op.params = ConstKernelParams();
  op.shape_rule = ConstIConvShape;
  op.axioms = R"(
conv_identity (x:4) (conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] x (const_iconv x)) = x
conv_identity_any_ref (x:4 y:4) (conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] x (const_iconv y)) = x
)";
  return op;
}

}  // namespace verisub::specs::ops
