// channel_scale: parameters, shape rule and axioms.
#include "specs/ops/channel_scale.h"

namespace verisub::specs::ops {
namespace {

Status ChannelScaleShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  const TensorType& s = *in[1];
  VERISUB_RETURN_IF_ERROR(ExpectPositiveDims(x, 0));
  VERISUB_RETURN_IF_ERROR(ExpectRank(s, 1, 1));
  int axis = static_cast<int>(p[kChannelScaleAxis]);
  if (axis >= x.shape.rank)
    return InvalidArgument("parameter 'axis'=" + std::to_string(axis) +
                           " is out of range for input 0 " + x.shape.ToString());
  if (s.shape[0] != x.shape[axis])
    return InvalidArgument("scale " + s.shape.ToString() + " does not match dimension " +
                           std::to_string(axis) + " of input 0 " + x.shape.ToString());
  out[0] = x;
  out[0].trees[axis] = MergeTrees(x.trees[axis], s.trees[0]);
  return Status::Ok();
}

}  // namespace

OpSpec ChannelScaleSpec() {
  OpSpec op;
  op.kind = OpKind::kChannelScale;
  op.name = "channel_scale";
  op.summary =
      "x times a vector s broadcast along dimension axis (images: 1, matmul/features: last, "
      "conv kernel output channels: 0)";
  op.num_inputs = 2;
  // As bias_add: the axis is a dimension number, so a matmul's columns are axis 1 at rank 2 and
  // rank-1 for batched products. The generator tries image channels first, then kernels.
  op.params = {AxisParam(kChannelScaleAxis)};
  op.params[0].domain = {1, 0};
  op.shape_rule = ChannelScaleShape;
  op.layouts.layouts = {Layout::kPlain, Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};
  // A convolution's output channel o is the input convolved with kernel row w[o] (for every group
  // count: a depthwise kernel's axis 0 is its output channel too), so scaling it scales w[o]; a
  // matmul's column j is x times column j of w, whatever the batch dimensions.
  op.axioms = R"(
scale_conv_fold (x:4 w:4 s:1) (channel_scale[axis=1] (conv2d[activation=none] x w) s) = (conv2d[activation=none] x (channel_scale[axis=0] w s))
scale_conv_bias_fold (x:4 w:4 b:1 s:1) (channel_scale[axis=1] (conv2d_bias[activation=none] x w b) s) = (conv2d_bias[activation=none] x (channel_scale[axis=0] w s) (ewmul b s))
scale_bias (x b:1 s:1) (channel_scale[axis=?k] (bias_add[axis=?k] x b) s) = (bias_add[axis=?k] (channel_scale[axis=?k] x s) (ewmul b s))
scale_scale (x s:1 t:1) (channel_scale[axis=?k] (channel_scale[axis=?k] x s) t) = (channel_scale[axis=?k] x (ewmul s t))
scale_matmul_cols (x:2 w:2 s:1) (channel_scale[axis=1] (matmul[activation=none] x w) s) = (matmul[activation=none] x (channel_scale[axis=1] w s))
scale_matmul_cols_batched (x:3 w:2 s:1) (channel_scale[axis=2] (matmul[activation=none] x w) s) = (matmul[activation=none] x (channel_scale[axis=1] w s))
scale_matmul_cols_batched3 (x:3 w:3 s:1) (channel_scale[axis=2] (matmul[activation=none] x w) s) = (matmul[activation=none] x (channel_scale[axis=2] w s))
scale_smul (x s:1 t:0) (smul (channel_scale x s) t) = (channel_scale x (smul s t))
)";
  return op;
}

}  // namespace verisub::specs::ops
