// layer_norm in ONNX: LayerNormalization (opset 17) with the normalised output only, float
// statistics (stash_type 1) and scale and bias of exactly the normalised shape. A missing bias
// imports as a zero weight (the spec operator always has three inputs); export writes
// LayerNormalization back, leaving out a bias that is all zeros.
#include "specs/ops/layer_norm.h"

#include <algorithm>

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

void ImportLayerNormalization(ImportContext& c) {
  if (!c.InputsFloatStatic(2) || c.SingleOutput() == kNoValue) return c.Fail();
  if (c.attrs().AttrInt("stash_type", 1) != 1) return c.Fail();
  const std::vector<int64_t>& xd = c.In(0).dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  auto axis = NormalizeAxis(c.attrs().AttrInt("axis", -1), rank, "LayerNormalization");
  if (!axis.ok()) return c.Fail();
  const std::vector<int64_t> trailing(xd.begin() + *axis, xd.end());
  if (c.In(1).dims != trailing) return c.Fail();
  int bias;
  if (c.Present(2)) {
    if (!c.InputsFloatStatic(3) || c.In(2).dims != trailing) return c.Fail();
    bias = c.InId(2);
  } else {
    bias = c.NewWeight(HostTensor::FromDoubles(c.In(1).elem_type, trailing,
                                               std::vector<double>(CountElements(trailing), 0.0)));
  }
  specs::Params p = Defaults(OpKind::kLayerNorm);
  p[ops::kLayerNormAxis] = *axis;
  p[ops::kLayerNormEpsilon] = specs::EncodeFloat(c.attrs().AttrFloat("epsilon", 1e-5f));
  c.Add(OpKind::kLayerNorm, p, {c.InId(0), c.InId(1), bias}, {c.Out(0)});
}

Status ExportLayerNorm(ExportContext& c, const Node& n) {
  if (c.opset() < 17)
    return InvalidArgument("layer_norm has no ONNX operator before opset 17 (LayerNormalization)");
  std::vector<std::string> in = c.InputNames(n);
  const Value& bias = c.value(n.inputs[2]);
  if (bias.constant && !bias.input_default) {
    const std::vector<double> b = bias.constant->ToDoubles();
    if (std::all_of(b.begin(), b.end(), [](double v) { return v == 0.0; })) in.pop_back();
  }
  auto* node = c.Emit("LayerNormalization", n.name, in, {c.Name(n.outputs[0])});
  ExportContext::AttrInt(node, "axis", n.params[ops::kLayerNormAxis]);
  ExportContext::AttrFloat(node, "epsilon",
                           static_cast<float>(specs::DecodeFloat(n.params[ops::kLayerNormEpsilon])));
  return Status::Ok();
}

}  // namespace

void RegisterLayerNorm(OnnxOpTable* table) {
  table->AddImport("LayerNormalization", ImportLayerNormalization);
  table->SetExport(OpKind::kLayerNorm, ExportLayerNorm);
}

}  // namespace verisub::runtime
