// conv2d in ONNX: Conv [+ bias as bias_add] on import; Conv [+ activation] on export.
#include "specs/ops/conv2d.h"

#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"
#include "specs/ops/pad.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

void ImportConv(ImportContext& c) {
  if (!c.InputsFloatStatic(2) || c.SingleOutput() == kNoValue) return c.Fail();
  const Value &x = c.In(0), &w = c.In(1);
  if (x.dims.size() != 4 || w.dims.size() != 4) return c.Fail();
  const KernelContext& attrs = c.attrs();
  std::vector<int64_t> k = {w.dims[2], w.dims[3]};
  std::vector<int64_t> ks = attrs.AttrInts("kernel_shape");
  if (!ks.empty() && ks != k) return c.Fail();
  std::vector<int64_t> dil = attrs.AttrInts("dilations");
  if (!dil.empty() && !AllOnes(dil)) return c.Fail();
  std::vector<int64_t> strides = attrs.AttrInts("strides");
  if (strides.empty()) strides = {1, 1};
  if (strides.size() != 2) return c.Fail();
  auto pad = WindowPadding(attrs, {x.dims[2], x.dims[3]}, k, strides);
  // Other pads (AlexNet's 2 around an 11x11 window, TensorFlow's SAME_UPPER on even inputs) are
  // a zero pad before a valid convolution, which the backends fold back into the window.
  int input = c.InId(0);
  if (!pad) {
    auto pads = WindowPads(attrs, {x.dims[2], x.dims[3]}, k, strides);
    if (!pads) return c.Fail();
    input = c.AddPad(input, *pads, /*edge=*/false);
    if (input == kNoValue) return c.Fail();
    pad = specs::Padding::kValid;
  }
  int64_t group = attrs.AttrInt("group", 1);
  specs::Params p = Defaults(OpKind::kConv2d);
  p[ops::kConvStrideH] = strides[0];
  p[ops::kConvStrideW] = strides[1];
  p[ops::kConvPadding] = static_cast<int64_t>(*pad);
  p[ops::kConvActivation] = static_cast<int64_t>(specs::Activation::kNone);
  p[ops::kConvGroup] =
      group > 1 && group == x.dims[1] && w.dims[1] == 1 ? specs::kDepthwiseGroup : group;
  bool bias = c.Present(2);
  if (bias && (!FloatStatic(c.In(2)) || c.In(2).dims.size() != 1)) return c.Fail();
  int conv_out = bias ? c.NewValue(x.elem_type) : c.Out(0);
  c.Add(OpKind::kConv2d, p, {input, c.InId(1)}, {conv_out});
  if (bias) c.AddBias(conv_out, c.InId(2), 1, c.Out(0));
}

}  // namespace

Status ExportConvNode(ExportContext& c, const Node& n) {
  const specs::Params& p = n.params;
  const Value& x = c.value(n.inputs[0]);
  const Value& w = c.value(n.inputs[1]);
  int64_t kh = w.dims[2], kw = w.dims[3];
  bool same = p[ops::kConvPadding] == static_cast<int64_t>(specs::Padding::kSame);
  int64_t ph = same ? (kh - 1) / 2 : 0, pw = same ? (kw - 1) / 2 : 0;
  std::vector<int64_t> pads = {ph, pw, ph, pw};
  std::vector<std::string> inputs = c.InputNames(n);
  if (auto folded = c.PadFoldedInto(n)) {
    inputs[0] = c.Name(folded->input);
    pads = folded->pads;
  }
  auto* conv = c.EmitWithActivation("Conv", n, inputs, p[ops::kConvActivation]);
  c.AttrInts(conv, "kernel_shape", {kh, kw});
  c.AttrInts(conv, "strides", {p[ops::kConvStrideH], p[ops::kConvStrideW]});
  c.AttrInts(conv, "pads", pads);
  c.AttrInt(conv, "group",
            p[ops::kConvGroup] == specs::kDepthwiseGroup ? x.dims[1] : p[ops::kConvGroup]);
  return Status::Ok();
}

void RegisterConv2d(OnnxOpTable* table) {
  table->AddImport("Conv", ImportConv);
  table->SetExport(OpKind::kConv2d, ExportConvNode);
}

}  // namespace verisub::runtime
