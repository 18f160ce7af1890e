// conv2d: parameters, shape rule and axioms.
#include "specs/ops/conv2d.h"

namespace verisub::specs::ops {

Status Conv2dShape(const Params& p, const TensorType* const* in, TensorType* out) {
  const TensorType& x = *in[0];
  const TensorType& w = *in[1];
  VERISUB_RETURN_IF_ERROR(ExpectRank(x, 0, 4));
  VERISUB_RETURN_IF_ERROR(ExpectRank(w, 1, 4));
  int64_t groups = ConvGroups(p, x.shape);
  if (p[kConvGroup] == kDepthwiseGroup && w.shape[1] != 1)
    return InvalidArgument("group=dw needs a weight with 1 input channel per group, got weight " +
                           w.shape.ToString());
  if (x.shape[1] != w.shape[1] * groups)
    return InvalidArgument("input 0 has " + std::to_string(x.shape[1]) + " channels but weight " +
                           w.shape.ToString() + " with " + std::to_string(groups) +
                           " group(s) expects " + std::to_string(w.shape[1] * groups));
  if (w.shape[0] % groups != 0)
    return InvalidArgument("weight's " + std::to_string(w.shape[0]) +
                           " output channels are not divisible by group=" + std::to_string(groups));
  auto pad = static_cast<Padding>(p[kConvPadding]);
  int64_t oh, ow, ph, pw;
  VERISUB_RETURN_IF_ERROR(
      WindowGeometry("height", x.shape[2], w.shape[2], p[kConvStrideH], pad, &oh, &ph));
  VERISUB_RETURN_IF_ERROR(
      WindowGeometry("width", x.shape[3], w.shape[3], p[kConvStrideW], pad, &ow, &pw));
  out[0] = TensorType(Shape{x.shape[0], w.shape[0], oh, ow});
  out[0].trees[0] = x.trees[0];
  out[0].trees[1] = w.trees[0];
  return Status::Ok();
}

// Two operations per multiply-add: every output element reads C/group x KH x KW inputs.
std::vector<ParamDesc> Conv2dParams() {
  std::vector<ParamDesc> params = {IntParam("stride_h", kConvStrideH, {1, 2}),
                                   IntParam("stride_w", kConvStrideW, {1, 2}),
                                   PaddingParam(kConvPadding), ActivationParam(kConvActivation),
                                   IntParam("group", kConvGroup, {1, kDepthwiseGroup})};
  params.back().names = {{kDepthwiseGroup, "dw"}};
  ParamDesc& act = params[kConvActivation];
  for (const ConvEpilogue& e : ConvEpilogues())
    act.names.emplace_back(static_cast<int64_t>(e.activation), e.name);
  return params;
}

const std::vector<ConvEpilogue>& ConvEpilogues() {
  static const std::vector<ConvEpilogue> kEpilogues = {{Activation::kRelu6, "relu6"},
                                                       {Activation::kHardSigmoid, "hard_sigmoid"},
                                                       {Activation::kHardSwish, "hard_swish"},
                                                       {Activation::kSilu, "silu"},
                                                       {Activation::kGelu, "gelu"},
                                                       {Activation::kGeluTanh, "gelu_tanh"}};
  return kEpilogues;
}

std::string ConvEpilogueAxioms(const std::string& op, const std::string& prefix,
                               const std::string& args, const std::string& operands) {
  std::string text;
  for (const ConvEpilogue& e : ConvEpilogues()) {
    const std::string name = e.name;
    text += prefix + "_" + name + "_fusion (" + args + ") (" + op + "[activation=" + name + "] " +
            operands + ") = (" + name + " (" + op + "[activation=none] " + operands + "))\n";
  }
  return text;
}

double Conv2dFlops(const Params&, const Shape* in, const Shape* out) {
  return 2.0 * static_cast<double>(out[0].NumElements()) * in[1][1] * in[1][2] * in[1][3];
}

OpSpec Conv2dSpec() {
  OpSpec op;
  op.kind = OpKind::kConv2d;
  op.name = "conv2d";
  op.summary = "2-D convolution, NCHW input x [N,C,H,W], weight w [O,C/group,KH,KW]";
  op.num_inputs = 2;
  op.params = Conv2dParams();
  op.shape_rule = Conv2dShape;
  op.flops = Conv2dFlops;
  op.layouts.layouts = {Layout::kPlain, Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c};
  // Omitted parameters are shared variables named after the parameter. The grouped-convolution
  // identity concat1(conv(x,y), conv(z,w)) = conv[group=2](concat1(x,z), concat0(y,w)) is
  // deliberately absent: it is false when the two convolutions' output channels differ.
  op.axioms = R"(
conv_relu_fusion (x:4 w:4) (conv2d[activation=relu] x w) = (relu (conv2d[activation=none] x w))
conv_sigmoid_fusion (x:4 w:4) (conv2d[activation=sigmoid] x w) = (sigmoid (conv2d[activation=none] x w))
conv_tanh_fusion (x:4 w:4) (conv2d[activation=tanh] x w) = (tanh (conv2d[activation=none] x w))
conv_linear_input (x:4 y:4 w:4) (conv2d[activation=none] (ewadd x y) w) = (ewadd (conv2d[activation=none] x w) (conv2d[activation=none] y w))
conv_linear_weight (x:4 w:4 v:4) (conv2d[activation=none] x (ewadd w v)) = (ewadd (conv2d[activation=none] x w) (conv2d[activation=none] x v))
conv_smul_input (x:4 w:4 s:0) (conv2d[activation=none] (smul x s) w) = (smul (conv2d[activation=none] x w) s)
conv_smul_weight (x:4 w:4 s:0) (conv2d[activation=none] x (smul w s)) = (smul (conv2d[activation=none] x w) s)
conv_enlarge (x:4 w:4) (conv2d[padding=same] x (enlarge w)) = (conv2d[padding=same] x w)
conv_concat_batch (x:4 y:4 w:4) (concat[axis=0] (conv2d x w) (conv2d y w)) = (conv2d (concat[axis=0] x y) w)
conv_concat_out_channels (x:4 w:4 v:4) (concat[axis=1] (conv2d[group=1] x w) (conv2d[group=1] x v)) = (conv2d[group=1] x (concat[axis=0] w v))
conv_concat_in_channels (x:4 y:4 w:4 v:4) (conv2d[activation=none,group=1] (concat[axis=1] x y) (concat[axis=1] w v)) = (ewadd (conv2d[activation=none,group=1] x w) (conv2d[activation=none,group=1] y v))
)" + ConvEpilogueAxioms("conv2d", "conv", "x:4 w:4", "x w");
  return op;
}

}  // namespace verisub::specs::ops
