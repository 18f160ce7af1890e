// Resize and Upsample (ONNX, opaque to the rules) on oneDNN's resampling primitive, where its
// arithmetic is the node's: linear interpolation with half-pixel centres (PyTorch's bilinear and
// trilinear with align_corners=False, what segmentation heads export), and nearest-neighbour
// upsampling by whole factors. Anything else (align_corners, cubic, fractional nearest, a
// tf_crop_and_resize roi) runs on the reference kernel, which implements the whole spec.
#include <cmath>
#include <functional>
#include <numeric>

#include "onnx/onnx_pb.h"
#include "runtime/dnnl/builder.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime::dnnl_backend {
namespace {

// oneDNN's resampling maps output index o of an axis resized from `in` to `out` to input
// coordinate (o + 0.5) * in / out - 0.5: linear interpolates there with edge clamping, nearest
// rounds it half up. Whether `p`'s arithmetic on spatial axis `d` is that.
bool OneDnnComputesAxis(const ResizePlan& p, size_t d, int64_t in) {
  const int64_t out = p.out_dims[d];
  const double factor = static_cast<double>(out) / static_cast<double>(in);
  if (std::abs(p.scales[d] - factor) > 1e-9 * factor) return false;  // scales given, sizes floored
  const std::string& c = p.coordinate_mode;
  const bool half_pixel = c == "half_pixel" || (c == "pytorch_half_pixel" && out > 1);
  if (p.mode == "linear") return half_pixel;
  if (p.mode != "nearest" || out % in != 0) return false;
  // Upsampling by a whole factor k: floor((o + 0.5) / k) is every one of these roundings of the
  // node's coordinate (half-pixel coordinates never fall on a tie there).
  const std::string& r = p.nearest_mode;
  return (c == "asymmetric" && r == "floor") || (c == "tf_half_pixel_for_nn" && r == "floor") ||
         (half_pixel && (r == "round_prefer_floor" || r == "round_prefer_ceil"));
}

Status ResizeKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!n.onnx || n.inputs.empty() || n.outputs.size() != 1 || !b.Dnnl(n.inputs[0]) ||
      !b.Dnnl(n.outputs[0]))
    return Unimplemented("resize: inputs");
  // The roi, scales and sizes must be constants (a shape computation folded at import).
  std::vector<const HostTensor*> inputs = {nullptr};
  for (size_t k = 1; k < n.inputs.size(); ++k) {
    if (n.inputs[k] == kNoValue) {
      inputs.push_back(nullptr);
      continue;
    }
    const HostTensor* c = b.constant(n.inputs[k]);
    if (!c) return Unimplemented("resize: computed scales or sizes");
    inputs.push_back(c);
  }
  const int x = n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(x);
  KernelContext ctx(*n.onnx, b.Opset(), inputs);
  auto plan = PlanResize(ctx, xd);
  if (!plan.ok()) return Unimplemented("resize: " + plan.status().message());
  const ResizePlan& p = *plan;
  if (xd.size() < 3 || xd.size() > 5 || p.out_dims != b.dims(y) || p.out_dims[0] != xd[0] ||
      p.out_dims[1] != xd[1])
    return Unimplemented("resize: batch or channels resized");
  for (size_t d = 2; d < xd.size(); ++d)
    if (xd[d] <= 0 || !OneDnnComputesAxis(p, d, xd[d]))
      return Unimplemented("resize: arithmetic oneDNN does not compute");
  const memory::data_type type = b.OutputType(y);
  Desc src = WithType(b.StoredDesc(x), type);
  Desc dst(p.out_dims, type, memory::format_tag::any);
  // oneDNN's jit resampling wants the source and destination in one format; given two (the layout
  // DP may store a blocked input and a plain output), it falls back to its reference kernel, 750x
  // slower (DeepLabV3's pooled branch, 256 channels 1x1 -> 14x14: 7.6 ms against 0.01 ms). So the
  // smaller side is converted: an upsampling reads its input in the output's layout, a
  // downsampling writes in the input's (and its readers convert).
  if (auto l = b.AssignedLayout(y)) {
    auto d = LayoutDesc(p.out_dims, *l, type);
    auto src_in_l = LayoutDesc(xd, *l, type);
    auto elements = [](const std::vector<int64_t>& e) {
      return std::accumulate(e.begin(), e.end(), int64_t{1}, std::multiplies<>());
    };
    // Equal descriptors may still name two formats (oneDNN ignores the strides of extent-1
    // axes: a 1x1 image stored channels-last equals plain), and the jit kernel asks for one.
    if (d && src_in_l && (*src_in_l == src || elements(xd) <= elements(p.out_dims))) {
      src = *src_in_l;
      dst = *d;
    }
    // Else a downsampling into another layout: dst stays `any`, which follows the source.
  }
  dnnl::resampling_forward::primitive_desc pd(
      dnnl::resampling_forward::desc(dnnl::prop_kind::forward_inference,
                                     p.mode == "linear" ? dnnl::algorithm::resampling_linear
                                                        : dnnl::algorithm::resampling_nearest,
                                     src, dst),
      b.engine());
  b.Read(DNNL_ARG_SRC, x, pd.src_desc());
  b.Write(DNNL_ARG_DST, y, pd.dst_desc());
  b.Emit(dnnl::resampling_forward(pd));
  // Named in the statistics: a reference resampling is the slow path the formats above avoid.
  if (IsReferenceImpl(pd)) b.CountVariant("reference resampling");
  return Status::Ok();
}

}  // namespace

void AddResizeKernels(KernelRegistry* r) {
  r->Add("onnx:Resize", ResizeKernel);
  r->Add("onnx:Upsample", ResizeKernel);
}

}  // namespace verisub::runtime::dnnl_backend
