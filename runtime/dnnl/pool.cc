// Pooling (spec pool_max/pool_avg, ONNX MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool):
// explicit and ceil-mode pads, in the layout of the input.
#include "onnx/onnx_pb.h"
#include "runtime/dnnl/builder.h"
#include "runtime/dnnl/fusion.h"
#include "runtime/dnnl/window.h"
#include "runtime/onnx_kernels.h"
#include "specs/ops/pooling.h"

namespace verisub::runtime::dnnl_backend {
namespace {

Status PoolKernel(KernelBuilder& b) {
  const Node& n = b.node();
  if (!b.AllDnnl() || n.inputs.size() != 1 || n.outputs.size() != 1)
    return Unimplemented("pool: inputs");
  const Group& grp = b.group();
  int x = grp.pad_input != kNoValue ? grp.pad_input : n.inputs[0], y = n.outputs[0];
  const auto& xd = b.dims(n.inputs[0]);  // the window geometry sees the padded input
  const auto& yd = b.dims(y);
  if (xd.size() < 3 || yd.size() != xd.size()) return Unimplemented("pool: rank");
  std::vector<int64_t> in_sp(xd.begin() + 2, xd.end());
  bool max =
      n.op == specs::OpKind::kPoolMax || n.op_type == "MaxPool" || n.op_type == "GlobalMaxPool";
  bool global = n.opaque() && n.op_type.rfind("Global", 0) == 0;
  bool include_pad = n.op.has_value();  // the spec's average divides by the full window
  bool ceil = false;
  Window win;
  if (global) {
    win.kernel = in_sp;
    win.strides.assign(in_sp.size(), 1);
    win.dilations.assign(in_sp.size(), 1);
    win.pad_l.assign(in_sp.size(), 0);
    win.pad_r = win.pad_l;
  } else {
    auto w = WindowOf(b.graph(), n, in_sp, {});
    if (!w) return Unimplemented("pool: window attributes");
    win = *w;
    if (n.opaque()) {
      KernelContext ctx(*n.onnx, b.Opset(), {});
      include_pad = ctx.AttrInt("count_include_pad", 0) != 0;
      ceil = ctx.AttrInt("ceil_mode", 0) != 0;
      if (n.outputs.size() > 1) return Unimplemented("pool: indices output");
    }
  }
  for (int64_t d : win.dilations)
    if (d != 1) return Unimplemented("pool: dilation");
  if (grp.pad_input != kNoValue) {
    // Padded zeros count in the average: only equal when the pool's own pads count too.
    for (size_t d = 0; d < win.pad_l.size(); ++d)
      if (!include_pad && (win.pad_l[d] || win.pad_r[d])) return Unimplemented("pool: pads");
    include_pad = true;
    AddExtraPads(grp, &win);
    in_sp.assign(b.dims(x).begin() + 2, b.dims(x).end());
  }
  // Ceil mode: the last window may run past the right pad; oneDNN wants it as padding.
  for (size_t d = 0; d < in_sp.size(); ++d) {
    int64_t need = (yd[d + 2] - 1) * win.strides[d] + win.kernel[d] - in_sp[d] - win.pad_l[d];
    if (need > win.pad_r[d]) {
      if (!ceil || (!max && include_pad)) return Unimplemented("pool: output size");
      win.pad_r[d] = need;
    }
  }
  auto alg = max           ? dnnl::algorithm::pooling_max
             : include_pad ? dnnl::algorithm::pooling_avg_include_padding
                           : dnnl::algorithm::pooling_avg_exclude_padding;
  const memory::data_type type = b.OutputType(y);  // the input is read in the output's type
  Desc src = WithType(b.StoredDesc(x), type);
  Desc dst = b.OutputDesc(y);
  // An assigned output layout is the input's too (the layout DP prices the conversion): oneDNN
  // pools across two layouts only in its reference implementation (measured: 25 ms for one
  // Inception-v3 max pool, blocked in and plain out).
  if (auto l = b.AssignedLayout(y))
    if (auto s = LayoutDesc(b.dims(x), *l, type)) src = *s;
  dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src, dst, win.strides,
                                   win.kernel, win.pad_l, win.pad_r);
  dnnl::primitive_attr attr;
  if (n.op) {
    auto a = static_cast<specs::Activation>(n.params[specs::ops::kPoolActivation]);
    if (a != specs::Activation::kNone) {
      dnnl::algorithm e = a == specs::Activation::kRelu      ? dnnl::algorithm::eltwise_relu
                          : a == specs::Activation::kSigmoid ? dnnl::algorithm::eltwise_logistic
                                                             : dnnl::algorithm::eltwise_tanh;
      dnnl::post_ops po;
      po.append_eltwise(1.f, e, 0.f, 0.f);
      attr.set_post_ops(po);
    }
  }
  dnnl::pooling_forward::primitive_desc pd(desc, attr, b.engine());
  b.Read(DNNL_ARG_SRC, x, pd.src_desc());
  b.Write(DNNL_ARG_DST, y, pd.dst_desc());
  b.Emit(dnnl::pooling_forward(pd));
  return Status::Ok();
}

}  // namespace

void AddPoolKernels(KernelRegistry* r) {
  for (const char* k : {"pool_max", "pool_avg", "onnx:MaxPool", "onnx:AveragePool",
                        "onnx:GlobalAveragePool", "onnx:GlobalMaxPool"})
    r->Add(k, PoolKernel);
}

}  // namespace verisub::runtime::dnnl_backend
