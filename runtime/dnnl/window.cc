// Window geometry of spec and ONNX window operators.
#include "runtime/dnnl/window.h"

#include <algorithm>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/pooling.h"

namespace verisub::runtime::dnnl_backend {

std::optional<Window> WindowOf(const Graph& g, const Node& n, const std::vector<int64_t>& in,
                               std::vector<int64_t> kernel) {
  namespace ops = specs::ops;
  const size_t r = in.size();
  Window w;
  if (n.op) {
    bool conv = n.op == specs::OpKind::kConv2d || n.op == specs::OpKind::kConv2dBias;
    if (!conv) kernel = {n.params[ops::kPoolKernelH], n.params[ops::kPoolKernelW]};
    if (kernel.size() != 2 || r != 2) return std::nullopt;
    w.kernel = kernel;
    w.strides =
        conv ? std::vector<int64_t>{n.params[ops::kConvStrideH], n.params[ops::kConvStrideW]}
             : std::vector<int64_t>{n.params[ops::kPoolStrideH], n.params[ops::kPoolStrideW]};
    bool same = n.params[conv ? ops::kConvPadding : ops::kPoolPadding] ==
                static_cast<int64_t>(specs::Padding::kSame);
    w.dilations = {1, 1};
    for (size_t d = 0; d < 2; ++d) w.pad_l.push_back(same ? (kernel[d] - 1) / 2 : 0);
    w.pad_r = w.pad_l;
    return w;
  }
  KernelContext ctx(*n.onnx, g.DefaultOpset(), {});
  std::vector<int64_t> ks = ctx.AttrInts("kernel_shape");
  if (!ks.empty()) kernel = ks;
  if (kernel.size() != r) return std::nullopt;
  w.kernel = kernel;
  w.strides = ctx.AttrInts("strides");
  if (w.strides.empty()) w.strides.assign(r, 1);
  w.dilations = ctx.AttrInts("dilations");
  if (w.dilations.empty()) w.dilations.assign(r, 1);
  if (w.strides.size() != r || w.dilations.size() != r) return std::nullopt;
  std::vector<int64_t> pads = ctx.AttrInts("pads");
  std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    pads.assign(2 * r, 0);
    for (size_t d = 0; d < r; ++d) {
      int64_t out = (in[d] + w.strides[d] - 1) / w.strides[d];
      int64_t ext = (kernel[d] - 1) * w.dilations[d] + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[d] + ext - in[d]);
      int64_t small = total / 2, big = total - small;
      pads[d] = auto_pad == "SAME_UPPER" ? small : big;
      pads[d + r] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else if (auto_pad == "VALID" || pads.empty()) {
    pads.assign(2 * r, 0);
  } else if (auto_pad != "NOTSET") {
    return std::nullopt;
  }
  if (pads.size() != 2 * r) return std::nullopt;
  w.pad_l.assign(pads.begin(), pads.begin() + r);
  w.pad_r.assign(pads.begin() + r, pads.end());
  return w;
}

void AddExtraPads(const Group& g, Window* w) {
  const size_t r = w->pad_l.size();
  if (g.pad_input == kNoValue || g.extra_pads.size() != 2 * r) return;
  for (size_t d = 0; d < r; ++d) {
    w->pad_l[d] += g.extra_pads[d];
    w->pad_r[d] += g.extra_pads[d + r];
  }
}

}  // namespace verisub::runtime::dnnl_backend
