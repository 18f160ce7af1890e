// Convolution (spec conv2d and ONNX Conv): any group, stride, dilation and explicit pads, with
// the group's bias and batch normalization folded into the weights and its activations and
// residual add as post-ops. oneDNN picks the layouts (format any); weights are reordered once.
// A 3x3 stride-1 float32 convolution may run on oneDNN's Winograd kernels instead of its direct
// ones, where they are faster for its shape (timed once per shape and process).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "onnx/onnx_pb.h"
#include "runtime/dnnl/builder.h"
#include "runtime/dnnl/window.h"
#include "runtime/onnx_kernels.h"
#include "specs/ops/conv2d.h"

namespace verisub::runtime::dnnl_backend {
namespace {

using ConvPd = dnnl::convolution_forward::primitive_desc;

// oneDNN 2.6's Winograd convolutions (F(2x2,3x3) and F(4x4,3x3) on AVX-512, float32, blocked
// layouts) run a 3x3 stride-1 convolution at 1.2-2.8x the speed of its direct kernels on most
// shapes of ResNets, VGG and Inception (docs/bench-zoo.md), and at half of it on some (16
// channels at 112x112). oneDNN's own choice (convolution_auto) took the direct kernel on every
// one of them at batch 1, so both are timed here, once per shape, thread count and post-ops in a
// process, and the faster kept.
//
// Those kernels take ReLU and sums as post-ops but no SiLU, GELU or hard-swish, so a convolution
// with such an activation (YOLO's and EfficientNet's Conv-BN-SiLU) had only the direct kernels.
// There the Winograd convolution may run without post-ops, followed by one eltwise step over its
// output computing them (`tail`: the first activation, the others as its post-ops) and, for a
// trailing sum, a binary add of the addend (`add`; oneDNN 2.6 runs an eltwise with a sum or
// binary post-op only on its reference kernel): one or two more passes over the output, against
// 1.5-1.9x less convolution time on 64-128 channels (docs/bench-zoo.md). Timed the same
// way, all steps together against the direct kernel.
// VERISUB_WINOGRAD=on takes it wherever oneDNN has one, =off never (tests, diagnosis).
struct WinogradChoice {
  ConvPd conv;
  std::optional<dnnl::eltwise_forward::primitive_desc> tail;
  std::optional<dnnl::binary::primitive_desc> add;
};

// The steps computing post-ops `ops` (eltwise functions, then at most one sum) over a
// convolution's output `dst`; false where they are not of that form or oneDNN has only its
// reference kernels for them.
bool EltwiseTail(const std::vector<PostOp>& ops, const Desc& dst, const dnnl::engine& engine,
                 WinogradChoice* choice) {
  std::vector<Eltwise> activations;
  bool sum = false;
  for (const PostOp& op : ops) {
    if (op.kind == PostOp::kSum) {
      if (sum) return false;  // a second sum
      sum = true;
    } else if (op.kind == PostOp::kEltwise) {
      if (sum) return false;  // an activation after the sum
      activations.push_back(op.eltwise);
    }
  }
  if (activations.empty()) return false;
  try {
    choice->tail.emplace(EltwiseChain(activations, dst, engine));
    if (sum)
      choice->add.emplace(dnnl::binary::desc(dnnl::algorithm::binary_add, dst, dst, dst), engine);
  } catch (const dnnl::error&) {
    return false;
  }
  return !IsReferenceImpl(*choice->tail) && !(sum && IsReferenceImpl(*choice->add));
}

std::optional<WinogradChoice> WinogradIfFaster(KernelBuilder& b, const ConvPd& direct,
                                               const dnnl::convolution_forward::desc& winograd,
                                               const dnnl::primitive_attr& attr,
                                               const std::vector<PostOp>& post_ops,
                                               const std::string& key) {
  const char* force = std::getenv("VERISUB_WINOGRAD");
  const std::string policy = force ? force : "";
  if (policy == "off") return std::nullopt;
  std::optional<WinogradChoice> wino;
  try {
    wino.emplace(WinogradChoice{ConvPd(winograd, attr, b.engine()), std::nullopt, std::nullopt});
  } catch (const dnnl::error&) {
  }
  if (!wino) {  // the post-ops, as steps of their own after a convolution without any
    try {
      wino.emplace(WinogradChoice{ConvPd(winograd, dnnl::primitive_attr(), b.engine()),
                                  std::nullopt, std::nullopt});
    } catch (const dnnl::error&) {
      return std::nullopt;  // no Winograd kernel for these shapes or layouts
    }
    if (!EltwiseTail(post_ops, wino->conv.dst_desc(), b.engine(), &*wino)) return std::nullopt;
  }
  if (policy == "on") return wino;
  const WinogradChoice& w = *wino;
  auto time_winograd = [&b, &w] {
    double us = WindowPrimitiveTimer<dnnl::convolution_forward>(w.conv, b.engine())();
    if (w.tail)
      us += PrimitiveUs(dnnl::eltwise_forward(*w.tail),
                        {{DNNL_ARG_SRC, w.tail->src_desc()}, {DNNL_ARG_DST, w.tail->dst_desc()}},
                        b.engine());
    if (w.add)
      us += PrimitiveUs(dnnl::binary(*w.add),
                        {{DNNL_ARG_SRC_0, w.add->src_desc(0)},
                         {DNNL_ARG_SRC_1, w.add->src_desc(1)},
                         {DNNL_ARG_DST, w.add->dst_desc()}},
                        b.engine());
    return us;
  };
  if (!FirstFasterOnce("conv " + key, time_winograd,
                       WindowPrimitiveTimer<dnnl::convolution_forward>(direct, b.engine())))
    return std::nullopt;
  return wino;
}

// A convolution's taps that read only padding, for every output position, contribute nothing
// (their products are zeros): a dilated kernel larger than its input does that. DeepLabV3's
// atrous pyramid has 3x3 kernels dilated 24 and 36 on 14x14 or 28x28 maps, where only the centre
// tap ever reads the image: a 1x1 convolution computing 9x fewer products (ONNX Runtime runs all
// nine). The taps are cut from both ends of each spatial axis and the pads shrunk with them, so
// the output is the same. nullopt when nothing is cut, or when a pad would go negative.
struct TrimmedTaps {
  std::vector<int64_t> dims;  // the kernel's [O, I/groups, k...] after the cut
  std::vector<float> weights;
  std::vector<int64_t> pad_l, pad_r;
};

std::optional<TrimmedTaps> TrimUnreachableTaps(const std::vector<int64_t>& in_sp,
                                               const std::vector<int64_t>& out_sp,
                                               const Window& win, const std::vector<int64_t>& wd,
                                               const std::vector<float>& weights) {
  const size_t r = in_sp.size();
  if (out_sp.size() != r || wd.size() != r + 2 || win.strides.size() != r ||
      win.dilations.size() != r || win.pad_l.size() != r || win.pad_r.size() != r)
    return std::nullopt;
  std::vector<int64_t> lo(r), hi(r);
  bool cut = false;
  for (size_t i = 0; i < r; ++i) {
    const int64_t k = wd[2 + i], h = in_sp[i], ho = out_sp[i], s = win.strides[i],
                  d = win.dilations[i], p = win.pad_l[i];
    if (s < 1 || d < 1 || ho < 1 || h < 1) return std::nullopt;
    // Tap t reads row o*s - p + t*d at output o: inside for some o in [0, ho)?
    auto reaches = [&](int64_t t) {
      const int64_t need = p - t * d;  // o*s >= need
      const int64_t o = need <= 0 ? 0 : (need + s - 1) / s;
      return o < ho && o * s - p + t * d < h;
    };
    lo[i] = 0;
    while (lo[i] < k && !reaches(lo[i])) ++lo[i];
    if (lo[i] == k) return std::nullopt;  // no tap reads the image: left as it is
    hi[i] = k - 1;
    while (!reaches(hi[i])) --hi[i];
    cut |= lo[i] > 0 || hi[i] < k - 1;
  }
  if (!cut) return std::nullopt;
  TrimmedTaps t;
  t.dims = wd;
  for (size_t i = 0; i < r; ++i) {
    t.dims[2 + i] = hi[i] - lo[i] + 1;
    t.pad_l.push_back(win.pad_l[i] - lo[i] * win.dilations[i]);
    t.pad_r.push_back(win.pad_r[i] - (wd[2 + i] - 1 - hi[i]) * win.dilations[i]);
    if (t.pad_l.back() < 0 || t.pad_r.back() < 0) return std::nullopt;
  }
  // Copy the kept window of every (o, c) kernel, row-major over the spatial axes.
  int64_t planes = wd[0] * wd[1], kept = 1, full = 1;
  for (size_t i = 0; i < r; ++i) {
    kept *= t.dims[2 + i];
    full *= wd[2 + i];
  }
  if (static_cast<int64_t>(weights.size()) != planes * full) return std::nullopt;
  t.weights.resize(static_cast<size_t>(planes * kept));
  std::vector<int64_t> idx(r);
  for (int64_t q = 0; q < planes; ++q)
    for (int64_t e = 0; e < kept; ++e) {
      int64_t rest = e, src = 0;
      for (size_t i = r; i-- > 0;) {
        idx[i] = rest % t.dims[2 + i] + lo[i];
        rest /= t.dims[2 + i];
      }
      for (size_t i = 0; i < r; ++i) src = src * wd[2 + i] + idx[i];
      t.weights[static_cast<size_t>(q * kept + e)] = weights[static_cast<size_t>(q * full + src)];
    }
  return t;
}

// Where the convolution writes: the group's output, or a temporary holding the value before the
// group's trailing pair (Group::trailing_quantize) when the convolution does not write that pair's
// 8-bit steps itself.
int OutputBeforeTrailingPair(KernelBuilder& b, const Desc& desc) {
  const Group& grp = b.group();
  if (grp.trailing_quantize < 0) return grp.output;
  return b.Temporary(b.slot(grp.output).name + " before its quantization", desc);
}

// The trailing pair over `target` into the group's output, where `target` is not the output.
Status ApplyTrailingPair(KernelBuilder& b, int target) {
  const Group& grp = b.group();
  if (target == grp.output) return Status::Ok();
  const std::optional<FakeQuant> fq = FakeQuantOf(b.graph(), grp.trailing_quantize, grp.last_node);
  if (!fq) return Unimplemented("conv: the trailing QuantizeLinear pair no longer matches");
  if (b.slot(target).desc.data_type() != memory::data_type::f32)  // bfloat16 assigned
    return Unimplemented("conv: a trailing QuantizeLinear pair over a float32 value only");
  EmitFakeQuantPass(b, target, grp.output, *fq);
  return Status::Ok();
}

// A convolution of a QDQ model (ONNX Runtime's static quantization) as an int8 oneDNN
// convolution: its input computed by a QuantizeLinear / DequantizeLinear pair (FakeQuantOf), its
// weights a DequantizeLinear of int8 constants with zero points 0 (QuantizedWeight), no weight
// folding (batch normalization) in the group. The input is requantized into its 8-bit steps (exact:
// it holds nothing else), the products accumulate in int32 and the output scales (the input's
// scale times each channel's) make float32 of them, before the group's post-ops as in float. This
// computes the model's own arithmetic (sums of products of integers times scales) with fewer
// rounding errors than float32 does. nullopt where this does not apply or oneDNN has no int8
// kernel for it (the caller runs the float32 convolution).
std::optional<Status> Int8Convolution(KernelBuilder& b, const Window& win, const memory::dims& dil,
                                      const std::vector<int64_t>& wdims,
                                      const std::vector<float>& bias) {
  const Node& n = b.node();
  const Group& grp = b.group();
  const int x = n.inputs[0];
  const std::optional<Int8Operands> ops = b.Int8OperandsOfGroup();
  if (!ops || !b.Dnnl(x)) return std::nullopt;
  const FakeQuant& fq = ops->input;
  const int64_t o = b.dims(n.inputs[1])[0];
  const std::vector<float> scales = ops->OutputScales(), int_bias = ops->BiasInSums(bias);
  const int32_t zero = static_cast<int32_t>(fq.zero);
  const auto any = memory::format_tag::any;
  // The input already in 8 bits (its producer wrote the steps): read as stored where oneDNN
  // takes that layout. The output in 8 bits where only int8 kernels read it.
  const bool eight_bit_input = b.slot(x).quant_scale > 0.f;
  const std::optional<KernelBuilder::EightBitOutput> eight_bit = b.EightBitOutputOf();
  const Desc bias_md({o}, memory::data_type::f32, memory::format_tag::a);
  std::optional<ConvPd> pd;
  bool wrote_eight_bit = false;
  for (int attempt = 0; attempt < 4 && !pd; ++attempt) {
    const bool as_stored = attempt % 2 == 0, out8 = attempt < 2;
    if ((as_stored && !eight_bit_input) || (out8 && !eight_bit)) continue;
    dnnl::primitive_attr attr;
    attr.set_output_scales(scales.size() > 1 ? 1 << 1 : 0, scales);
    if (zero != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {zero});
    attr.set_post_ops(out8 ? eight_bit->post_ops : MakePostOps(grp));
    const Desc src = as_stored ? b.slot(x).desc : Desc(b.dims(x), fq.StepType(), any);
    const Desc dst =
        out8 ? Desc(b.dims(grp.output), eight_bit->type, any) : b.OutputDesc(grp.output);
    try {
      pd.emplace(dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::convolution_direct, src,
                                                 Desc(wdims, memory::data_type::s8, any), bias_md,
                                                 dst, win.strides, dil, win.pad_l, win.pad_r),
                 attr, b.engine());
      if (IsReferenceImpl(*pd)) pd.reset();
    } catch (const dnnl::error&) {
      pd.reset();
    }
    wrote_eight_bit = pd && out8;
  }
  if (!pd) return std::nullopt;
  const std::vector<int8_t> w8 = ops->weights->Values();
  b.Read(DNNL_ARG_SRC, b.Quantized(x, pd->src_desc(), fq), pd->src_desc());
  b.Fixed(DNNL_ARG_WEIGHTS,
          b.ConstantMemory(w8, PlainDesc(wdims, memory::data_type::s8), pd->weights_desc()));
  b.Fixed(DNNL_ARG_BIAS, b.ConstantMemory(int_bias, PlainDesc({o}), pd->bias_desc()));
  const int target = wrote_eight_bit ? grp.output : OutputBeforeTrailingPair(b, pd->dst_desc());
  const int addend = SumAddend(grp);
  if (addend != kNoValue)
    b.WriteAccumulating(DNNL_ARG_DST, target, pd->dst_desc(), addend);
  else
    b.Write(DNNL_ARG_DST, target, pd->dst_desc());
  if (wrote_eight_bit) {
    b.MarkEightBit(grp.output, eight_bit->fq);
    b.CountVariant("8-bit output");
  }
  b.Emit(dnnl::convolution_forward(*pd));
  b.CountVariant("int8");
  return ApplyTrailingPair(b, target);
}

Status ConvKernel(KernelBuilder& b) {
  const Node& n = b.node();
  const Group& grp = b.group();
  if (!b.AllDnnl() || n.inputs.size() < 2) return Unimplemented("conv: inputs");
  if (n.op &&
      !SpecActivation(static_cast<specs::Activation>(n.params[specs::ops::kConvActivation])))
    return Unimplemented("conv: an activation oneDNN has no eltwise for");
  int x = grp.pad_input != kNoValue      ? grp.pad_input
          : grp.scaled_input != kNoValue ? grp.scaled_input
                                         : n.inputs[0];
  const int w = n.inputs[1];
  const auto& xd = b.dims(n.inputs[0]);  // the window geometry sees the padded input
  if (!b.Dnnl(x)) return Unimplemented("conv: padded input");
  const auto& wd = b.dims(w);
  const auto& yd = b.dims(grp.output);
  if (xd.size() < 3 || xd.size() > 5 || wd.size() != xd.size() || yd.size() != xd.size())
    return Unimplemented("conv: rank");
  // Constant weights are reordered once at prepare time, with the group's bias and batch
  // normalization folded in; weights computed at run time (a rewritten graph can compute a kernel)
  // are converted to the kernel's layout on every run, and only a bias can be folded then.
  bool folds_weights = false;
  for (const PostOp& op : grp.post_ops)
    folds_weights |= op.kind == PostOp::kBatchnorm || op.kind == PostOp::kScale;
  std::optional<std::vector<float>> folded;  // the weights' copy where they are folded into
  const std::vector<float>* weights = b.ConstantFloatsInPlaceOrCopy(w, folds_weights, &folded);
  if (!weights && (!b.Dnnl(w) || folds_weights)) return Unimplemented("conv: weights");
  std::vector<int64_t> in_sp(xd.begin() + 2, xd.end()), k_sp(wd.begin() + 2, wd.end());
  auto win = WindowOf(b.graph(), n, in_sp, k_sp);
  if (!win) return Unimplemented("conv: window attributes");
  AddExtraPads(grp, &*win);
  int64_t groups = 1;
  if (n.op) {
    specs::Shape xs = *specs::Shape::FromVector(xd);
    groups = specs::ops::ConvGroups(n.params, xs);
  } else {
    KernelContext ctx(*n.onnx, b.Opset(), {});
    groups = ctx.AttrInt("group", 1);
  }
  const int64_t o = wd[0];
  if (groups < 1 || xd[1] != wd[1] * groups || o % groups != 0)
    return Unimplemented("conv: groups");
  if (!weights && groups != 1) return Unimplemented("conv: grouped run-time weights");
  int64_t per_o = 1;
  for (size_t i = 1; i < wd.size(); ++i) per_o *= wd[i];
  std::vector<float> bias(o, 0.f);
  if ((n.opaque() || n.op == specs::OpKind::kConv2dBias) && n.inputs.size() > 2 &&
      n.inputs[2] != kNoValue) {
    auto cb = b.ConstantFloats(n.inputs[2]);
    if (!cb || static_cast<int64_t>(cb->size()) != o) return Unimplemented("conv: bias");
    bias = *cb;
  }
  for (const PostOp& op : grp.post_ops) {
    if (op.kind == PostOp::kBias) {
      auto add = b.ConstantFloats(op.operands[0]);
      if (!add || static_cast<int64_t>(add->size()) != o) return Unimplemented("conv: bias_add");
      for (int64_t c = 0; c < o; ++c) bias[c] += (*add)[c];
    } else if (op.kind == PostOp::kScale) {
      auto s = b.ConstantFloats(op.operands[0]);
      if (!s || static_cast<int64_t>(s->size()) != o) return Unimplemented("conv: channel_scale");
      for (int64_t c = 0; c < o; ++c) {
        for (int64_t e = 0; e < per_o; ++e) (*folded)[c * per_o + e] *= (*s)[c];
        bias[c] *= (*s)[c];
      }
    } else if (op.kind == PostOp::kBatchnorm) {
      std::vector<float> p[4];
      for (int k = 0; k < 4; ++k) {
        auto t = b.ConstantFloats(op.operands[k]);
        if (!t || static_cast<int64_t>(t->size()) != o) return Unimplemented("conv: batchnorm");
        p[k] = *t;
      }
      for (int64_t c = 0; c < o; ++c) {
        float s = p[0][c] / std::sqrt(p[3][c] + op.epsilon);
        for (int64_t e = 0; e < per_o; ++e) (*folded)[c * per_o + e] *= s;
        bias[c] = (bias[c] - p[2][c]) * s + p[1][c];
      }
    }
  }
  memory::dims dil;
  for (int64_t d : win->dilations) dil.push_back(d - 1);
  {
    std::vector<int64_t> wdims = wd;
    if (groups > 1) {
      wdims[0] = o / groups;
      wdims.insert(wdims.begin(), groups);
    }
    if (auto done = Int8Convolution(b, *win, dil, wdims, bias)) return *done;
  }
  std::vector<int64_t> kernel_dims = wd;  // after any cut of taps that read only padding
  std::optional<TrimmedTaps> trimmed;
  if (weights) {
    const auto& x_dims = b.dims(x);  // the geometry after AddExtraPads is the unpadded input's
    std::vector<int64_t> x_sp(x_dims.begin() + 2, x_dims.end()), y_sp(yd.begin() + 2, yd.end());
    trimmed = TrimUnreachableTaps(x_sp, y_sp, *win, wd, *weights);
    if (trimmed) {
      kernel_dims = trimmed->dims;
      win->pad_l = trimmed->pad_l;
      win->pad_r = trimmed->pad_r;
      weights = &trimmed->weights;
      b.CountVariant("taps reading padding cut");
    }
  }
  std::vector<int64_t> wdims = kernel_dims;
  if (groups > 1) {
    wdims[0] = o / groups;
    wdims.insert(wdims.begin(), groups);
  }
  const auto any = memory::format_tag::any;
  const auto f32 = memory::data_type::f32;
  // Source, weights and destination in the output's type (bfloat16 where assigned: float32
  // accumulation inside oneDNN); the bias stays float32.
  const memory::data_type type = b.OutputType(grp.output);
  Desc src_any(b.dims(x), type, any), w_any(wdims, type, any), dst_any = b.OutputDesc(grp.output);
  Desc bias_md({o}, f32, memory::format_tag::a);
  auto desc_of = [&](dnnl::algorithm algorithm) {
    return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src_any,
                                           w_any, bias_md, dst_any, win->strides, dil, win->pad_l,
                                           win->pad_r);
  };
  // A trailing SiLU runs after the convolution (SiluAfterPrimitive): its post-ops are the others.
  const bool silu_after = SiluAfterPrimitive(grp, type);
  std::vector<PostOp> post_ops = grp.post_ops;
  if (silu_after) post_ops.pop_back();
  dnnl::primitive_attr attr;
  attr.set_post_ops(MakePostOps(grp, silu_after));
  ConvPd pd(desc_of(dnnl::algorithm::convolution_direct), attr, b.engine());
  std::optional<WinogradChoice> winograd;
  const bool all_ones =
      std::all_of(win->strides.begin(), win->strides.end(), [](int64_t s) { return s == 1; });
  const bool scaled = grp.input_scale != kNoValue;
  if (scaled && (!weights || groups != 1 || !b.Dnnl(grp.input_scale)))
    return Unimplemented("conv: an input scale on run-time or grouped weights");
  if (weights && !scaled && groups == 1 && type == f32 && kernel_dims.size() == 4 &&
      kernel_dims[2] == 3 && kernel_dims[3] == 3 && all_ones &&
      std::all_of(dil.begin(), dil.end(), [](int64_t d) { return d == 0; })) {
    // The shape, the output's layout and the post-ops decide which kernel is faster.
    std::string key = "x" + DimsToString(xd) + " w" + DimsToString(kernel_dims) + " pad" +
                      DimsToString(win->pad_l) + DimsToString(win->pad_r) + " y";
    const std::optional<specs::Layout> out_layout = b.AssignedLayout(grp.output);
    key += out_layout ? std::string(specs::LayoutName(*out_layout)) : "any";
    for (const PostOp& op : post_ops)
      if (op.kind == PostOp::kEltwise || op.kind == PostOp::kSum)
        key += " " + std::to_string(static_cast<int>(op.kind)) + ":" +
               std::to_string(static_cast<int>(op.eltwise.alg));
    winograd = WinogradIfFaster(b, pd, desc_of(dnnl::algorithm::convolution_winograd), attr,
                                post_ops, key);
    if (winograd) pd = winograd->conv;
  }
  int scaled_weights = kNoValue;
  if (scaled) {
    // w'[o, c, taps] = w[o, c, taps] * scale[c] on every run, into a plain buffer the builder
    // then converts to the kernel's weight layout: weights and scale are read once each, where
    // scaling the input would read and write all of it. A step of its own, emitted before the
    // convolution's arguments are bound.
    const int s = b.PlainFloat(grp.input_scale);
    const int64_t cin = kernel_dims[1];
    int64_t taps = 1;
    for (size_t i = 2; i < kernel_dims.size(); ++i) taps *= kernel_dims[i];
    if (b.dims(grp.input_scale) != std::vector<int64_t>{cin} ||
        static_cast<int64_t>(weights->size()) != o * cin * taps)
      return Unimplemented("conv: input scale size");
    scaled_weights = b.Temporary(n.name + " weights x input scale", PlainDesc(wdims));
    auto base = std::make_shared<const std::vector<float>>(*weights);
    b.EmitHost(
        [base, s, scaled_weights, o, cin, taps](RunState& st) -> Status {
          const float* scale = static_cast<const float*>(st.mem[s].get_data_handle());
          float* out = static_cast<float*>(st.mem[scaled_weights].get_data_handle());
          const float* in = base->data();
          if (taps == 1) {  // a 1x1 kernel: rows of input channels, one vector loop each
            for (int64_t oc = 0; oc < o; ++oc) {
              const float* row = in + oc * cin;
              float* dst = out + oc * cin;
              for (int64_t c = 0; c < cin; ++c) dst[c] = row[c] * scale[c];
            }
            return Status::Ok();
          }
          for (int64_t oc = 0; oc < o; ++oc)
            for (int64_t c = 0; c < cin; ++c) {
              const float k = scale[c];
              const int64_t at = (oc * cin + c) * taps;
              for (int64_t t = 0; t < taps; ++t) out[at + t] = in[at + t] * k;
            }
          return Status::Ok();
        },
        {s}, {scaled_weights});
    b.SetStepKind("conv_input_scale");
  }
  b.Read(DNNL_ARG_SRC, x, pd.src_desc());
  if (scaled) {
    b.Read(DNNL_ARG_WEIGHTS, scaled_weights, pd.weights_desc());
    b.CountVariant("input scale folded into the weights");
  } else if (weights) {
    b.Fixed(DNNL_ARG_WEIGHTS, b.ConstantMemory(*weights, PlainDesc(wdims), pd.weights_desc()));
  } else {
    b.Read(DNNL_ARG_WEIGHTS, w, pd.weights_desc());
  }
  b.Fixed(DNNL_ARG_BIAS, b.ConstantMemory(bias, PlainDesc({o}), pd.bias_desc()));
  const int target = OutputBeforeTrailingPair(b, pd.dst_desc());
  int addend = SumAddend(grp);
  // With Winograd's post-ops as steps of their own, the convolution writes its bare output and
  // they update it in place: the activations, then the sum's addend added.
  const bool steps_after = winograd && winograd->tail;
  if (addend != kNoValue && !steps_after)
    b.WriteAccumulating(DNNL_ARG_DST, target, pd.dst_desc(), addend);
  else
    b.Write(DNNL_ARG_DST, target, pd.dst_desc());
  b.Emit(dnnl::convolution_forward(pd));
  if (steps_after) {
    const dnnl::eltwise_forward::primitive_desc& tail = *winograd->tail;
    b.Read(DNNL_ARG_SRC, target, tail.src_desc());
    b.Update(DNNL_ARG_DST, target);
    b.Emit(dnnl::eltwise_forward(tail));
    if (winograd->add) {
      b.Read(DNNL_ARG_SRC_0, target, winograd->add->src_desc(0));
      b.Read(DNNL_ARG_SRC_1, addend, winograd->add->src_desc(1));
      b.Update(DNNL_ARG_DST, target);
      b.Emit(dnnl::binary(*winograd->add));
    }
  }
  if (winograd) b.CountVariant(steps_after ? "winograd, activation after it" : "winograd");
  if (silu_after) EmitSiluPass(b, target);
  return ApplyTrailingPair(b, target);
}

}  // namespace

void AddConvKernels(KernelRegistry* r) {
  r->Add("conv2d", ConvKernel);
  r->Add("conv2d_bias", ConvKernel);
  r->Add("onnx:Conv", ConvKernel);
}

}  // namespace verisub::runtime::dnnl_backend
