// Normalizations and softmax: batch normalization (inference form, global statistics), layer
// normalization over the trailing dimensions, softmax along one axis.
#include "onnx/onnx_pb.h"
#include "runtime/dnnl/builder.h"
#include "runtime/onnx_kernels.h"
#include "specs/ops/batchnorm.h"
#include "specs/ops/layer_norm.h"
#include "specs/ops/softmax.h"

namespace verisub::runtime::dnnl_backend {
namespace {

using dnnl::normalization_flags;

Status BatchnormKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!b.AllDnnl() || n.inputs.size() != 5 || n.outputs.size() != 1)
    return Unimplemented("batchnorm: inputs");
  float eps = 1e-5f;
  if (n.op) {
    eps = static_cast<float>(specs::DecodeFloat(n.params[specs::ops::kBatchnormEpsilon]));
  } else {
    KernelContext ctx(*n.onnx, b.Opset(), {});
    if (ctx.AttrInt("training_mode", 0) != 0) return Unimplemented("batchnorm: training");
    eps = ctx.AttrFloat("epsilon", eps);
  }
  int x = n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(x);
  if (xd.size() < 2) return Unimplemented("batchnorm: rank");
  for (int k = 1; k < 5; ++k)
    if (!b.constant(n.inputs[k]) || CountElements(b.dims(n.inputs[k])) != xd[1])
      return Unimplemented("batchnorm: parameters are not constant");
  Desc src = b.StoredDesc(x);
  dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, src, eps,
                                               normalization_flags::use_global_stats |
                                                   normalization_flags::use_scale |
                                                   normalization_flags::use_shift);
  dnnl::batch_normalization_forward::primitive_desc pd(desc, b.engine());
  Desc c = PlainDesc({xd[1]});
  b.Read(DNNL_ARG_SRC, x, pd.src_desc());
  b.Read(DNNL_ARG_SCALE, n.inputs[1], c);
  b.Read(DNNL_ARG_SHIFT, n.inputs[2], c);
  b.Read(DNNL_ARG_MEAN, n.inputs[3], c);
  b.Read(DNNL_ARG_VARIANCE, n.inputs[4], c);
  b.Write(DNNL_ARG_DST, y, pd.dst_desc());
  b.Emit(dnnl::batch_normalization_forward(pd));
  return Status::Ok();
}

// ONNX LayerNormalization and the layer_norm spec operator: normalizes over dims [axis, rank)
// (viewed as one trailing dim).
Status LayerNormKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (n.inputs.size() < 2 || !b.Dnnl(n.inputs[0]) || !b.Dnnl(n.outputs[0]))
    return Unimplemented("layernorm: inputs");
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (n.outputs[k] != kNoValue && b.graph().UseCounts()[n.outputs[k]] > 0)
      return Unimplemented("layernorm: statistics outputs are read");
  int x = n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(x);
  StatusOr<int64_t> axis = n.op ? StatusOr<int64_t>(n.params[specs::ops::kLayerNormAxis])
                                : StatusOr<int64_t>(Unimplemented("layernorm: axis"));
  float eps = 1e-5f;
  if (n.op) {
    eps = static_cast<float>(specs::DecodeFloat(n.params[specs::ops::kLayerNormEpsilon]));
  } else {
    KernelContext ctx(*n.onnx, b.Opset(), {});
    axis = NormalizeAxis(ctx.AttrInt("axis", -1), static_cast<int64_t>(xd.size()), "axis");
    if (ctx.AttrInt("stash_type", 1) != 1) return Unimplemented("layernorm: stash_type");
    eps = ctx.AttrFloat("epsilon", eps);
  }
  if (!axis.ok()) return Unimplemented("layernorm: axis");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(xd.size()); ++d)
    (d < *axis ? outer : inner) *= xd[d];
  auto scale = b.ConstantFloats(n.inputs[1]);
  std::vector<float> shift(inner, 0.f);
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    auto s = b.ConstantFloats(n.inputs[2]);
    if (!s) return Unimplemented("layernorm: bias is not constant");
    shift = *s;
  }
  if (!scale || static_cast<int64_t>(scale->size()) != inner ||
      static_cast<int64_t>(shift.size()) != inner)
    return Unimplemented("layernorm: scale");
  Desc flat = PlainDesc({outer, inner});
  dnnl::layer_normalization_forward::desc desc(
      dnnl::prop_kind::forward_inference, flat, eps,
      normalization_flags::use_scale | normalization_flags::use_shift);
  dnnl::layer_normalization_forward::primitive_desc pd(desc, b.engine());
  Desc c = PlainDesc({inner});
  b.Read(DNNL_ARG_SRC, x, flat);
  b.Fixed(DNNL_ARG_SCALE, b.ConstantMemory(*scale, c, c));
  b.Fixed(DNNL_ARG_SHIFT, b.ConstantMemory(shift, c, c));
  b.Write(DNNL_ARG_DST, y, PlainDesc(b.dims(y)));
  b.View(DNNL_ARG_DST, flat);
  b.Emit(dnnl::layer_normalization_forward(pd));
  return Status::Ok();
}

// A softmax along an axis that is not the innermost one of its storage runs in oneDNN 2.6's
// reference loop (YOLOv8's box distributions, [1, 4, 16, 1600] along the 16: 5.5 ms). Read with
// that axis innermost (one transposing reorder), its jit kernel runs, and a reorder writes the
// result back in row-major order: 0.2 ms for that shape. False when no jit kernel takes it.
bool MiddleAxisSoftmax(KernelBuilder& b, int axis) {
  const Node& n = b.node();
  const int x = n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(x);
  const int rank = static_cast<int>(xd.size());
  memory::dims strides(rank);
  int64_t stride = xd[axis];
  strides[axis] = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (d == axis) continue;
    strides[d] = stride;
    stride *= xd[d];
  }
  const Desc inner(xd, memory::data_type::f32, strides);
  dnnl::softmax_forward::primitive_desc pd(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, inner, axis), b.engine());
  if (IsReferenceImpl(pd)) return false;
  const int t = b.Temporary(b.slot(y).name + "_axis_inner", inner);
  b.Read(DNNL_ARG_SRC, x, inner);
  b.Write(DNNL_ARG_DST, t, inner);
  b.Emit(dnnl::softmax_forward(pd));
  const Desc plain = PlainDesc(b.dims(y));
  b.Read(DNNL_ARG_FROM, t, inner);
  b.Write(DNNL_ARG_TO, y, plain);
  b.Emit(dnnl::reorder(dnnl::reorder::primitive_desc(b.engine(), inner, b.engine(), plain)));
  b.CountVariant("softmax along an inner axis");
  return true;
}

// The kernel variant a softmax in the backend's pass counts (SoftmaxInHostPass).
constexpr char kSoftmaxPass[] = "softmax in the backend's pass";

// y = softmax of float32 x along its last axis in the backend's pass (SoftmaxRowsOf), x read
// row-major (converted where stored otherwise), y over x's buffer where x dies here. nullopt where
// the types are not float32 or x is a constant.
std::optional<Status> SoftmaxPass(KernelBuilder& b, int x, int y) {
  const auto& xd = b.dims(x);
  const int64_t cols = xd.back(), rows = cols == 0 ? 0 : CountElements(xd) / cols;
  std::optional<Status> done = EmitFloatPass(
      b, x, y, PlainDesc(xd), /*may_overwrite=*/true,
      [rows, cols](const float* in, float* out) { SoftmaxRowsInChunks(in, out, rows, cols); });
  if (done) b.CountVariant(kSoftmaxPass);
  return done;
}

Status SoftmaxKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!b.AllDnnl() || n.outputs.size() != 1) return Unimplemented("softmax: inputs");
  int x = n.inputs[0], y = n.outputs[0];
  int64_t rank = static_cast<int64_t>(b.dims(x).size());
  StatusOr<int64_t> axis = n.op ? StatusOr<int64_t>(n.params[specs::ops::kSoftmaxAxis])
                                : StatusOr<int64_t>(Unimplemented("softmax: axis"));
  if (!n.op) {
    KernelContext ctx(*n.onnx, b.Opset(), {});
    axis = NormalizeAxis(ctx.AttrInt("axis", b.Opset() >= 13 ? -1 : 1), rank, "axis");
    if (!axis.ok()) return Unimplemented("softmax: axis");
    // Before opset 13 Softmax flattens at the axis; the same thing only for the last axis.
    if (b.Opset() < 13 && *axis != rank - 1) return Unimplemented("softmax: legacy axis");
  }
  if (*axis == rank - 1 && SoftmaxInHostPass())
    if (auto done = SoftmaxPass(b, x, y)) return *done;
  Desc src = b.StoredDesc(x);
  dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, src,
                                   static_cast<int>(*axis));
  dnnl::softmax_forward::primitive_desc pd(desc, b.engine());
  if (IsReferenceImpl(pd) && *axis < rank - 1 && MiddleAxisSoftmax(b, static_cast<int>(*axis)))
    return Status::Ok();
  b.Read(DNNL_ARG_SRC, x, pd.src_desc());
  b.Write(DNNL_ARG_DST, y, pd.dst_desc());
  b.Emit(dnnl::softmax_forward(pd));
  return Status::Ok();
}

// ONNX InstanceNormalization (style transfer, GAN generators, and every GroupNorm PyTorch
// exports: a reshape to [N, groups, rest], an instance norm with unit scale, a reshape back, a
// per-channel affine): each (instance, channel) row of the spatial elements is normalized by its
// own statistics, which is oneDNN's layer normalization over the rows of the [N*C, S] view; the
// per-channel scale and shift follow as one binary multiply with an add post-op. oneDNN's batch
// normalization computing statistics (the earlier form) ran its reference loop on these plain
// 3-D shapes: wav2vec 2.0's [1,512,3199] GroupNorm 14 ms, now well under one.
Status InstanceNormKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!n.onnx || !b.AllDnnl() || n.inputs.size() != 3 || n.outputs.size() != 1)
    return Unimplemented("instancenorm: inputs");
  const int x = n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(x);
  if (xd.size() < 3) return Unimplemented("instancenorm: rank");
  if (b.OutputType(y) != memory::data_type::f32) return Unimplemented("instancenorm: bf16");
  auto scale = b.ConstantFloats(n.inputs[1]);
  auto shift = b.ConstantFloats(n.inputs[2]);
  const int64_t channels = xd[1], rows = xd[0] * xd[1];
  if (!scale || !shift || static_cast<int64_t>(scale->size()) != channels ||
      static_cast<int64_t>(shift->size()) != channels)
    return Unimplemented("instancenorm: parameters are not constant");
  KernelContext ctx(*n.onnx, b.Opset(), {});
  const float eps = ctx.AttrFloat("epsilon", 1e-5f);
  int64_t spatial = 1;
  for (size_t d = 2; d < xd.size(); ++d) spatial *= xd[d];
  const Desc flat = PlainDesc({rows, spatial});
  dnnl::layer_normalization_forward::primitive_desc norm(
      dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, flat, eps,
                                              normalization_flags::none),
      b.engine());
  const int normalized = b.Temporary(b.slot(y).name + "_normalized", flat);
  b.Read(DNNL_ARG_SRC, x, flat);
  b.Write(DNNL_ARG_DST, normalized, flat);
  b.Emit(dnnl::layer_normalization_forward(norm));
  // Per row (instance n, channel c): times scale[c], plus shift[c].
  std::vector<float> row_scale(rows), row_shift(rows);
  for (int64_t r = 0; r < rows; ++r) {
    row_scale[r] = (*scale)[r % channels];
    row_shift[r] = (*shift)[r % channels];
  }
  // As [1, rows, spatial] by [1, rows, 1]: a broadcast along the channel axis, which oneDNN's
  // jit binary kernel takes (a [rows, 1] operand of a 2-D view ran its reference loop, 39 ms).
  const Desc rows3 = PlainDesc({1, rows, spatial}), column = PlainDesc({1, rows, 1});
  dnnl::post_ops po;
  po.append_binary(dnnl::algorithm::binary_add, column);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  dnnl::binary::primitive_desc affine(
      dnnl::binary::desc(dnnl::algorithm::binary_mul, rows3, column, rows3), attr, b.engine());
  b.Read(DNNL_ARG_SRC_0, normalized, flat);
  b.View(DNNL_ARG_SRC_0, rows3);
  b.Fixed(DNNL_ARG_SRC_1, b.ConstantMemory(row_scale, column, column));
  b.Fixed(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
          b.ConstantMemory(row_shift, column, column));
  b.Write(DNNL_ARG_DST, y, PlainDesc(b.dims(y)));
  b.View(DNNL_ARG_DST, rows3);
  b.Emit(dnnl::binary(affine));
  return Status::Ok();
}

// LRN across channels (AlexNet- and GoogLeNet-era exports): oneDNN's formula is ONNX's, alpha
// divided by the window size, the window centred the same way for odd sizes (even sizes run on
// the reference kernel).
Status LrnKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!n.onnx || n.inputs.empty() || n.outputs.size() != 1 || !b.Dnnl(n.inputs[0]) ||
      !b.Dnnl(n.outputs[0]) || b.dims(n.inputs[0]).size() != 4)
    return Unimplemented("lrn: inputs");
  KernelContext ctx(*n.onnx, b.Opset(), {});
  const int64_t size = ctx.AttrInt("size", 0);
  if (size < 1 || size % 2 == 0) return Unimplemented("lrn: an even window");
  const int x = n.inputs[0], y = n.outputs[0];
  Desc src = WithType(b.StoredDesc(x), memory::data_type::f32);
  dnnl::lrn_forward::primitive_desc pd(
      dnnl::lrn_forward::desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::lrn_across_channels, src, size,
          ctx.AttrFloat("alpha", 1e-4f), ctx.AttrFloat("beta", 0.75f), ctx.AttrFloat("bias", 1.0f)),
      b.engine());
  b.Read(DNNL_ARG_SRC, x, pd.src_desc());
  b.Write(DNNL_ARG_DST, y, pd.dst_desc());
  b.Emit(dnnl::lrn_forward(pd));
  return Status::Ok();
}

}  // namespace

void AddNormKernels(KernelRegistry* r) {
  r->Add("onnx:LRN", LrnKernel);
  r->Add("onnx:InstanceNormalization", InstanceNormKernel);
  r->Add("batchnorm", BatchnormKernel);
  r->Add("onnx:BatchNormalization", BatchnormKernel);
  r->Add("onnx:LayerNormalization", LayerNormKernel);
  r->Add("layer_norm", LayerNormKernel);
  r->Add("onnx:Softmax", SoftmaxKernel);
  r->Add("softmax", SoftmaxKernel);
}

}  // namespace verisub::runtime::dnnl_backend
