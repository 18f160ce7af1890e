// softmax in ONNX: Softmax both ways. Opset >= 13 normalises along one axis; before, Softmax
// flattens the input to 2-D at the axis, which is the same thing only for the last axis (the
// others stay opaque). Exported as Softmax with the axis (before opset 13 only the last one).
#include "specs/ops/softmax.h"

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

void ImportSoftmax(ImportContext& c) {
  if (!c.InputsFloatStatic(1) || c.SingleOutput() == kNoValue) return c.Fail();
  const int64_t rank = static_cast<int64_t>(c.In(0).dims.size());
  const bool legacy = c.attrs().opset() < 13;
  auto axis = NormalizeAxis(c.attrs().AttrInt("axis", legacy ? 1 : -1), rank, "Softmax");
  if (!axis.ok() || (legacy && *axis != rank - 1)) return c.Fail();
  specs::Params p = Defaults(OpKind::kSoftmax);
  p[ops::kSoftmaxAxis] = *axis;
  c.Add(OpKind::kSoftmax, p, {c.InId(0)}, {c.Out(0)});
}

Status ExportSoftmax(ExportContext& c, const Node& n) {
  const int64_t axis = n.params[ops::kSoftmaxAxis];
  const int64_t rank = static_cast<int64_t>(c.value(n.inputs[0]).dims.size());
  if (c.opset() < 13 && axis != rank - 1)
    return InvalidArgument("softmax along axis " + std::to_string(axis) + " of rank " +
                           std::to_string(rank) +
                           " has no ONNX Softmax before opset 13 (only the last axis)");
  ExportContext::AttrInt(c.Emit("Softmax", n.name, c.InputNames(n), {c.Name(n.outputs[0])}),
                         "axis", axis);
  return Status::Ok();
}

}  // namespace

void RegisterSoftmax(OnnxOpTable* table) {
  table->AddImport("Softmax", ImportSoftmax);
  table->SetExport(OpKind::kSoftmax, ExportSoftmax);
}

}  // namespace verisub::runtime
