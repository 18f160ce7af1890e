// ONNX import and export shared by pool_max and pool_avg.
#include "runtime/onnx_ops/pooling_onnx.h"

#include "onnx/onnx_pb.h"
#include "specs/ops/pooling.h"

namespace verisub::runtime {

using specs::OpKind;
namespace ops = specs::ops;

void ImportWindowPool(ImportContext& c, bool max) {
  if (!c.InputsFloatStatic(1) || c.SingleOutput() == kNoValue) return c.Fail();
  const Value& x = c.In(0);
  const KernelContext& attrs = c.attrs();
  std::vector<int64_t> k = attrs.AttrInts("kernel_shape");
  if (x.dims.size() != 4 || k.size() != 2) return c.Fail();
  std::vector<int64_t> dil = attrs.AttrInts("dilations");
  if (!dil.empty() && !AllOnes(dil)) return c.Fail();
  std::vector<int64_t> strides = attrs.AttrInts("strides");
  if (strides.empty()) strides = {1, 1};
  if (strides.size() != 2) return c.Fail();
  auto pad = WindowPadding(attrs, {x.dims[2], x.dims[3]}, k, strides);
  if (!pad) return c.Fail();
  // ceil_mode rounds the output size up; where the windows tile the padded input exactly
  // (SqueezeNet's 3x3/2 pools of 111, 55 and 27), up and down agree and it changes nothing.
  if (attrs.AttrInt("ceil_mode", 0) != 0)
    for (int d = 0; d < 2; ++d) {
      const int64_t padded =
          x.dims[2 + d] + (*pad == specs::Padding::kSame ? 2 * ((k[d] - 1) / 2) : 0);
      if (padded < k[d] || (padded - k[d]) % strides[d] != 0) return c.Fail();
    }
  // The spec's average divides by the full window, as count_include_pad=1 does.
  if (!max && *pad == specs::Padding::kSame && (k[0] > 1 || k[1] > 1) &&
      attrs.AttrInt("count_include_pad", 0) == 0)
    return c.Fail();
  OpKind kind = max ? OpKind::kPoolMax : OpKind::kPoolAvg;
  specs::Params p = Defaults(kind);
  p[ops::kPoolKernelH] = k[0];
  p[ops::kPoolKernelW] = k[1];
  p[ops::kPoolStrideH] = strides[0];
  p[ops::kPoolStrideW] = strides[1];
  p[ops::kPoolPadding] = static_cast<int64_t>(*pad);
  p[ops::kPoolActivation] = static_cast<int64_t>(specs::Activation::kNone);
  c.Add(kind, p, {c.InId(0)}, {c.Out(0)});
}

void ImportGlobalPool(ImportContext& c, bool max) {
  if (!c.InputsFloatStatic(1) || c.In(0).dims.size() != 4) return;
  OpKind k = max ? OpKind::kPoolMax : OpKind::kPoolAvg;
  specs::Params p = Defaults(k);
  p[ops::kPoolKernelH] = c.In(0).dims[2];
  p[ops::kPoolKernelW] = c.In(0).dims[3];
  p[ops::kPoolStrideH] = p[ops::kPoolStrideW] = 1;
  p[ops::kPoolPadding] = static_cast<int64_t>(specs::Padding::kValid);
  p[ops::kPoolActivation] = static_cast<int64_t>(specs::Activation::kNone);
  c.Add(k, p, {c.InId(0)}, {c.Out(0)});
}

Status ExportPool(ExportContext& c, const Node& n, bool max) {
  const specs::Params& p = n.params;
  int64_t kh = p[ops::kPoolKernelH], kw = p[ops::kPoolKernelW];
  bool same = p[ops::kPoolPadding] == static_cast<int64_t>(specs::Padding::kSame);
  int64_t ph = same ? (kh - 1) / 2 : 0, pw = same ? (kw - 1) / 2 : 0;
  // A valid window over the whole image is the global pool, which engines run as a reduction
  // (PyTorch's 13x13 average pool of SqueezeNet's head took longer than its mean).
  const std::vector<int64_t>& xd = c.value(n.inputs[0]).dims;
  if (!same && xd.size() == 4 && xd[2] == kh && xd[3] == kw) {
    c.EmitWithActivation(max ? "GlobalMaxPool" : "GlobalAveragePool", n, c.InputNames(n),
                         p[ops::kPoolActivation]);
    return Status::Ok();
  }
  auto* q = c.EmitWithActivation(max ? "MaxPool" : "AveragePool", n, c.InputNames(n),
                                 p[ops::kPoolActivation]);
  c.AttrInts(q, "kernel_shape", {kh, kw});
  c.AttrInts(q, "strides", {p[ops::kPoolStrideH], p[ops::kPoolStrideW]});
  c.AttrInts(q, "pads", {ph, pw, ph, pw});
  if (!max) c.AttrInt(q, "count_include_pad", 1);
  return Status::Ok();
}

}  // namespace verisub::runtime
