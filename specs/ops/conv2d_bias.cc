// conv2d_bias: parameters, shape rule and axioms.
#include "specs/ops/conv2d_bias.h"

namespace verisub::specs::ops {
namespace {

Status Conv2dBiasShape(const Params& p, const TensorType* const* in, TensorType* out) {
  VERISUB_RETURN_IF_ERROR(Conv2dShape(p, in, out));
  const TensorType& b = *in[2];
  VERISUB_RETURN_IF_ERROR(ExpectRank(b, 2, 1));
  if (b.shape[0] != out[0].shape[1])
    return InvalidArgument("bias " + b.shape.ToString() + " does not match the " +
                           std::to_string(out[0].shape[1]) + " output channels");
  out[0].trees[1] = MergeTrees(out[0].trees[1], b.trees[0]);
  return Status::Ok();
}

}  // namespace

OpSpec Conv2dBiasSpec() {
  OpSpec op;
  op.kind = OpKind::kConv2dBias;
  op.name = "conv2d_bias";
  op.summary = "conv2d plus a bias b [O] per output channel, then the activation";
  op.num_inputs = 3;
  op.params = Conv2dParams();
  op.shape_rule = Conv2dBiasShape;
  op.flops = Conv2dFlops;
  op.layouts.layouts = {Layout::kPlain, Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};
  op.axioms = R"(
conv_bias_def (x:4 w:4 b:1) (conv2d_bias[activation=none] x w b) = (bias_add[axis=1] (conv2d[activation=none] x w) b)
conv_bias_relu_fusion (x:4 w:4 b:1) (conv2d_bias[activation=relu] x w b) = (relu (conv2d_bias[activation=none] x w b))
conv_bias_sigmoid_fusion (x:4 w:4 b:1) (conv2d_bias[activation=sigmoid] x w b) = (sigmoid (conv2d_bias[activation=none] x w b))
conv_bias_tanh_fusion (x:4 w:4 b:1) (conv2d_bias[activation=tanh] x w b) = (tanh (conv2d_bias[activation=none] x w b))
)" + ConvEpilogueAxioms("conv2d_bias", "conv_bias", "x:4 w:4 b:1", "x w b");
  return op;
}

}  // namespace verisub::specs::ops
