// ConvTranspose (ONNX, opaque to the rules) on oneDNN's deconvolution: constant weights
// reordered once from ONNX's [C, M/group, k...] order, any group, stride and dilation, the bias
// folded in; oneDNN picks the layouts. Negative effective pads (output_padding past the end
// pad) and run-time weights run on the reference kernel.
#include <algorithm>
#include <optional>

#include "onnx/onnx_pb.h"
#include "runtime/dnnl/builder.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime::dnnl_backend {
namespace {

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
