// ONNX import and export shared by pool_max and pool_avg.
#include "runtime/onnx_ops/pooling_onnx.h"

#include "onnx/onnx_pb.h"
#include "specs/ops/pad.h"
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
  auto pads = WindowPads(attrs, {x.dims[2], x.dims[3]}, k, strides);
  const Value& y = c.OutValue(0);
  if (!pads || !y.StaticShape() || y.dims.size() != 4) return c.Fail();
  // ceil_mode rounds the output size up: the last window may reach past the end pad, by `over`
  // (where the windows tile the padded input exactly, SqueezeNet's 3x3/2 pools of 111, 55 and
  // 27, it does not).
  const bool ceil = attrs.AttrInt("ceil_mode", 0) != 0;
  std::vector<int64_t> full = *pads;  // top, left, bottom, right with the overhang
  bool over = false;
  for (int d = 0; d < 2; ++d) {
    const int64_t begin = full[d], end = full[d + 2], out = y.dims[2 + d];
    const int64_t need = (out - 1) * strides[d] + k[d] - (x.dims[2 + d] + begin + end);
    if (need > 0) {
      if (!ceil) return c.Fail();
      full[d + 2] += need;
      over = true;
    }
    // Every window holds an element of the image (ONNX drops a window wholly in the end pad).
    if (begin >= k[d] || (out - 1) * strides[d] - begin >= x.dims[2 + d]) return c.Fail();
  }
  // The window's own padding where same or valid state it (not with an overhang).
  std::optional<specs::Padding> own;
  if (!over) own = WindowPadding(attrs, {x.dims[2], x.dims[3]}, k, strides);
  // The spec's average divides by the full window, as count_include_pad=1 does.
  const bool include_pad = attrs.AttrInt("count_include_pad", 0) != 0;
  if (!max && own == specs::Padding::kSame && (k[0] > 1 || k[1] > 1) && !include_pad)
    return c.Fail();
  // Other pads before a valid window: a max pool's as copies of the edge (the maximum of a window
  // over the image's edge is that of its part inside), an average pool's as zeros where they
  // count (not past the end: ceil mode divides those windows by what they cover).
  int input = c.InId(0);
  if (!own) {
    if (!max && (over || !include_pad)) return c.Fail();
    input = c.AddPad(input, full, /*edge=*/max);
    if (input == kNoValue) return c.Fail();
  }
  const specs::Padding pad = own.value_or(specs::Padding::kValid);
  OpKind kind = max ? OpKind::kPoolMax : OpKind::kPoolAvg;
  specs::Params p = Defaults(kind);
  p[ops::kPoolKernelH] = k[0];
  p[ops::kPoolKernelW] = k[1];
  p[ops::kPoolStrideH] = strides[0];
  p[ops::kPoolStrideW] = strides[1];
  p[ops::kPoolPadding] = static_cast<int64_t>(pad);
  p[ops::kPoolActivation] = static_cast<int64_t>(specs::Activation::kNone);
  c.Add(kind, p, {input}, {c.Out(0)});
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
  std::vector<int64_t> pads = {ph, pw, ph, pw};
  std::vector<std::string> inputs = c.InputNames(n);
  if (auto folded = c.PadFoldedInto(n)) {
    inputs[0] = c.Name(folded->input);
    pads = folded->pads;
  }
  auto* q =
      c.EmitWithActivation(max ? "MaxPool" : "AveragePool", n, inputs, p[ops::kPoolActivation]);
  c.AttrInts(q, "kernel_shape", {kh, kw});
  c.AttrInts(q, "strides", {p[ops::kPoolStrideH], p[ops::kPoolStrideW]});
  c.AttrInts(q, "pads", pads);
  if (!max) c.AttrInt(q, "count_include_pad", 1);
  return Status::Ok();
}

}  // namespace verisub::runtime
