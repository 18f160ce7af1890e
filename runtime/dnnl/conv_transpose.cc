// ConvTranspose (ONNX, opaque to the rules) on oneDNN's deconvolution: constant weights
// reordered once from ONNX's [C, M/group, k...] order, any group, stride and dilation, the bias
// folded in; oneDNN picks the layouts. Negative effective pads (output_padding past the end
// pad) and run-time weights run on the reference kernel.
#include <algorithm>
#include <cstdlib>
#include <optional>

#include "onnx/onnx_pb.h"
#include "runtime/dnnl/builder.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime::dnnl_backend {
namespace {

using ConvPd = dnnl::convolution_forward::primitive_desc;

// A 2-D transposed convolution of stride s as s^2 ordinary convolutions, one per output phase
// (r_h, r_w): output rows r, r + s, ... read only the taps k = k0, k0 + s, ... of the kernel, at
// input rows m + q - j (the sub-pixel form of a transposed convolution). Each phase is a small
// convolution that oneDNN's direct kernels run well; its output is written into its rows and
// columns of the output by a strided reorder. DCGAN's stride-2 4x4 layers, one thread, channels-
// last: 315-417 us as oneDNN's deconvolution, 224-252 us as four 2x2 convolutions (ONNX Runtime
// 321-358 us).
struct Phase {
  ConvPd pd;
  std::vector<float> weights;  // [O, C, Jh, Jw]
  Desc temp;                   // the phase's output, in the convolution's format
  Desc view;                   // its rows and columns of the output
};

std::optional<std::vector<Phase>> SubPixelPhases(KernelBuilder& b, const ConvTransposeGeometry& g,
                                                 const std::vector<int64_t>& xd,
                                                 const std::vector<float>& w, const Desc& bias_md,
                                                 memory::format_tag format,
                                                 const std::vector<int64_t>& out_strides) {
  if (xd.size() != 4 || g.group != 1 || g.kernel.size() != 2) return std::nullopt;
  for (size_t a = 0; a < 2; ++a)
    if (g.dilations[a] != 1 || g.strides[a] < 2 || g.pad_begin[a] < 0) return std::nullopt;
  const int64_t c = xd[1], o = g.out_channels;
  const auto f32 = memory::data_type::f32;
  // Per axis and phase r: the first tap k0, the tap count j, the offset q, the outputs m.
  struct Axis {
    int64_t k0, taps, q, outputs, pad_b, pad_e;
  };
  std::vector<Axis> axes[2];
  for (size_t a = 0; a < 2; ++a) {
    const int64_t s = g.strides[a], k = g.kernel[a], pb = g.pad_begin[a], h = xd[2 + a];
    for (int64_t r = 0; r < s; ++r) {
      Axis x;
      x.k0 = (r + pb) % s;
      x.taps = x.k0 < k ? (k - x.k0 + s - 1) / s : 0;
      x.q = (r + pb - x.k0) / s;
      x.outputs = (g.out[a] - r + s - 1) / s;
      if (x.taps == 0 || x.outputs <= 0) return std::nullopt;
      x.pad_b = x.taps - 1 - x.q;
      x.pad_e = x.outputs - h - x.pad_b + x.taps - 1;
      if (x.pad_b < 0 || x.pad_e < 0) return std::nullopt;
      axes[a].push_back(x);
    }
  }
  std::vector<Phase> phases;
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  for (size_t rh = 0; rh < axes[0].size(); ++rh)
    for (size_t rw = 0; rw < axes[1].size(); ++rw) {
      const Axis &ah = axes[0][rh], &aw = axes[1][rw];
      const std::vector<int64_t> wdims = {o, c, ah.taps, aw.taps};
      std::vector<float> pw(static_cast<size_t>(o * c * ah.taps * aw.taps));
      for (int64_t oc = 0; oc < o; ++oc)
        for (int64_t ic = 0; ic < c; ++ic)
          for (int64_t th = 0; th < ah.taps; ++th)
            for (int64_t tw = 0; tw < aw.taps; ++tw) {
              const int64_t yh = ah.k0 + g.strides[0] * (ah.taps - 1 - th);
              const int64_t yw = aw.k0 + g.strides[1] * (aw.taps - 1 - tw);
              pw[static_cast<size_t>(((oc * c + ic) * ah.taps + th) * aw.taps + tw)] =
                  w[static_cast<size_t>(((ic * o + oc) * kh + yh) * kw + yw)];
            }
      const Desc temp({xd[0], o, ah.outputs, aw.outputs}, f32, format);
      ConvPd pd(dnnl::convolution_forward::desc(
                    dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                    Desc(xd, f32, format), Desc(wdims, f32, memory::format_tag::any), bias_md, temp,
                    {1, 1}, {ah.pad_b, aw.pad_b}, {ah.pad_e, aw.pad_e}),
                b.engine());
      if (!(pd.dst_desc() == temp)) return std::nullopt;
      Desc view({xd[0], o, ah.outputs, aw.outputs}, f32,
                memory::dims{out_strides[0], out_strides[1], out_strides[2] * g.strides[0],
                             out_strides[3] * g.strides[1]});
      view.data.offset0 =
          static_cast<int64_t>(rh) * out_strides[2] + static_cast<int64_t>(rw) * out_strides[3];
      phases.push_back({pd, std::move(pw), temp, view});
    }
  return phases;
}

Status ConvTransposeKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!n.onnx || n.inputs.size() < 2 || n.outputs.size() != 1 || !b.AllDnnl())
    return Unimplemented("conv_transpose: inputs");
  const int x = n.inputs[0], w = n.inputs[1], y = n.outputs[0];
  const auto& xd = b.dims(x);
  const auto& wd = b.dims(w);
  KernelContext ctx(*n.onnx, b.Opset(), {});
  auto geometry = PlanConvTranspose(ctx, xd, wd);
  if (!geometry.ok()) return Unimplemented("conv_transpose: " + geometry.status().message());
  const ConvTransposeGeometry& g = *geometry;
  std::vector<int64_t> out = {xd[0], g.out_channels};
  out.insert(out.end(), g.out.begin(), g.out.end());
  if (out != b.dims(y) || xd.size() > 5) return Unimplemented("conv_transpose: output shape");
  for (size_t d = 0; d < g.out.size(); ++d)
    if (g.pad_begin[d] < 0 || g.pad_end[d] < 0) return Unimplemented("conv_transpose: pads");
  std::optional<std::vector<float>> copy;  // a weight still in its model file is read into it
  const std::vector<float>* weights = b.ConstantFloatsInPlaceOrCopy(w, false, &copy);
  if (!weights) return Unimplemented("conv_transpose: run-time weights");
  const int64_t m = g.out_channels, groups = g.group;
  std::vector<float> bias(m, 0.f);
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    auto cb = b.ConstantFloats(n.inputs[2]);
    if (!cb || static_cast<int64_t>(cb->size()) != m) return Unimplemented("conv_transpose: bias");
    bias = *cb;
  }
  // oneDNN's weights are [G,] O/G, I/G, k...; ONNX stores [G x I/G], O/G, k...: the same bytes
  // with the O/G and I/G strides swapped.
  const size_t lead = groups > 1 ? 1 : 0;  // index of O/G in oneDNN's dims
  std::vector<int64_t> wdims = {m / groups, xd[1] / groups};
  wdims.insert(wdims.end(), g.kernel.begin(), g.kernel.end());
  if (groups > 1) wdims.insert(wdims.begin(), groups);
  std::vector<int64_t> strides(wdims.size(), 1);
  int64_t k_count = 1;
  for (int64_t k : g.kernel) k_count *= k;
  for (size_t d = wdims.size() - 1; d > lead + 1; --d) strides[d - 1] = strides[d] * wdims[d];
  strides[lead] = k_count;                    // O/G: next to the kernel
  strides[lead + 1] = k_count * wdims[lead];  // I/G: outside O/G
  if (groups > 1) strides[0] = strides[lead + 1] * wdims[lead + 1];
  using T = memory::format_tag;
  const auto f32 = memory::data_type::f32;
  memory::dims dil;
  for (int64_t d : g.dilations) dil.push_back(d - 1);
  Desc src_any(xd, f32, T::any), w_any(wdims, f32, T::any), dst_any = b.OutputDesc(y);
  Desc bias_md({m}, f32, T::a);
  using Pd = dnnl::deconvolution_forward::primitive_desc;
  auto make = [&](const Desc& src, const Desc& dst) {
    return Pd(dnnl::deconvolution_forward::desc(
                  dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src,
                  w_any, bias_md, dst, g.strides, dil, g.pad_begin, g.pad_end),
              b.engine());
  };
  Pd pd = make(src_any, dst_any);
  const char* variant = nullptr;
  // oneDNN's own choice is channel blocks of 16, which pads a few output channels to a whole
  // block and runs its direct kernel (DCGAN's last layer, 64 -> 3 channels: 0.245 ms; 0.169
  // channels-last; 0.05 plain, where oneDNN runs a gemm; its other stride-2 layers 0.58-0.75 ms
  // blocked against 0.34-0.41 channels-last). Where no layout is assigned to the output, the
  // three are timed once per shape, and the fastest kept.
  if (!b.AssignedLayout(y) && (xd.size() == 4 || xd.size() == 5)) {
    auto time = [&b](const Pd& p) {
      return WindowPrimitiveTimer<dnnl::deconvolution_forward>(p, b.engine());
    };
    const std::string key = "deconv x" + DimsToString(xd) + " w" + DimsToString(wdims) + " s" +
                            DimsToString(g.strides) + " p" + DimsToString(g.pad_begin) +
                            DimsToString(g.pad_end) + " d" + DimsToString(g.dilations);
    const std::vector<std::pair<T, const char*>> formats = {
        {xd.size() == 4 ? T::acdb : T::acdeb, "channels-last deconvolution"},
        {xd.size() == 4 ? T::abcd : T::abcde, "plain deconvolution"}};
    for (const auto& [format, name] : formats) {
      std::optional<Pd> other;
      try {
        other.emplace(make(Desc(xd, f32, format), Desc(out, f32, format)));
      } catch (const dnnl::error&) {
        continue;
      }
      if (other->dst_desc() == pd.dst_desc() && other->src_desc() == pd.src_desc()) continue;
      // The kept one so far against this one, each pair timed once per process.
      if (FirstFasterOnce(key + " " + name + " vs " + (variant ? variant : "oneDNN's choice"),
                          time(*other), time(pd))) {
        pd = std::move(*other);
        variant = name;
      }
    }
    if (variant) b.CountVariant(variant);
  }
  // The sub-pixel form, timed against the deconvolution kept, where the output is channels-last
  // (no layout assigned: the form's own choice) or plain (as assigned).
  const std::optional<specs::Layout> assigned = b.AssignedLayout(y);
  if (xd.size() == 4 && (!assigned || *assigned == specs::Layout::kPlain)) {
    const bool plain = assigned.has_value();
    const int64_t oh = out[2], ow = out[3];
    const std::vector<int64_t> strides_y = plain ? std::vector<int64_t>{m * oh * ow, oh * ow, ow, 1}
                                                 : std::vector<int64_t>{oh * ow * m, 1, ow * m, m};
    std::optional<std::vector<Phase>> phases;
    try {
      phases = SubPixelPhases(b, g, xd, *weights, bias_md, plain ? T::abcd : T::acdb, strides_y);
    } catch (const dnnl::error&) {
      phases.reset();
    }
    // VERISUB_SUBPIXEL=on takes the form wherever it applies, =off never (tests, diagnosis).
    const char* force = std::getenv("VERISUB_SUBPIXEL");
    const std::string policy = force ? force : "";
    if (phases && policy != "off") {
      auto time_phases = [&b, &phases] {
        double us = 0;
        for (const Phase& ph : *phases) {
          us += WindowPrimitiveTimer<dnnl::convolution_forward>(ph.pd, b.engine())();
          // Timed into a scratch buffer of the view's strides from its start (a buffer of the
          // view's size holds no offset).
          Desc at_start = ph.view;
          at_start.data.offset0 = 0;
          us += PrimitiveUs(dnnl::reorder(dnnl::reorder::primitive_desc(b.engine(), ph.temp,
                                                                        b.engine(), at_start)),
                            {{DNNL_ARG_SRC, ph.temp}, {DNNL_ARG_DST, at_start}}, b.engine());
        }
        return us;
      };
      const std::string key = "deconv sub-pixel x" + DimsToString(xd) + " w" + DimsToString(wd) +
                              " s" + DimsToString(g.strides) + " p" + DimsToString(g.pad_begin) +
                              DimsToString(g.pad_end) + (plain ? " plain" : " nhwc") + " vs " +
                              (variant ? variant : "oneDNN's choice");
      if (policy == "on" ||
          FirstFasterOnce(key, time_phases,
                          WindowPrimitiveTimer<dnnl::deconvolution_forward>(pd, b.engine()))) {
        const Desc y_desc(out, f32, memory::dims(strides_y.begin(), strides_y.end()));
        for (const Phase& ph : *phases) {
          const int temp = b.Temporary(n.name + ".phase", ph.temp);
          b.Read(DNNL_ARG_SRC, x, ph.pd.src_desc());
          b.Fixed(DNNL_ARG_WEIGHTS,
                  b.ConstantMemory(ph.weights, PlainDesc(DimsOf(ph.pd.weights_desc())),
                                   ph.pd.weights_desc()));
          b.Fixed(DNNL_ARG_BIAS, b.ConstantMemory(bias, PlainDesc({m}), ph.pd.bias_desc()));
          b.Write(DNNL_ARG_DST, temp, ph.temp);
          b.Emit(dnnl::convolution_forward(ph.pd));
          b.Read(DNNL_ARG_SRC, temp, ph.temp);
          b.Write(DNNL_ARG_DST, y, y_desc);
          b.View(DNNL_ARG_DST, ph.view);
          b.Emit(dnnl::reorder(
              dnnl::reorder::primitive_desc(b.engine(), ph.temp, b.engine(), ph.view)));
        }
        b.CountVariant("sub-pixel deconvolution");
        return Status::Ok();
      }
    }
  }
  b.Read(DNNL_ARG_SRC, x, pd.src_desc());
  b.Fixed(DNNL_ARG_WEIGHTS,
          b.ConstantMemory(*weights, Desc(wdims, f32, strides), pd.weights_desc()));
  b.Fixed(DNNL_ARG_BIAS, b.ConstantMemory(bias, PlainDesc({m}), pd.bias_desc()));
  b.Write(DNNL_ARG_DST, y, pd.dst_desc());
  b.Emit(dnnl::deconvolution_forward(pd));
  return Status::Ok();
}

}  // namespace

void AddConvTransposeKernels(KernelRegistry* r) {
  r->Add("onnx:ConvTranspose", ConvTransposeKernel);
}

}  // namespace verisub::runtime::dnnl_backend
