// ewsub in ONNX: Sub of two tensors of the output's shape, both ways (a broadcast Sub stays
// opaque).
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ImportSub(ImportContext& c) {
  if (!c.InputsFloatStatic(2) || c.SingleOutput() == kNoValue) return;
  const Value& y = c.OutValue(0);
  if (c.In(0).dims != y.dims || c.In(1).dims != y.dims) return;
  c.Add(specs::OpKind::kEwSub, Defaults(specs::OpKind::kEwSub), {c.InId(0), c.InId(1)}, {c.Out(0)});
}

Status ExportEwSub(ExportContext& c, const Node& n) {
  c.Emit("Sub", n.name, c.InputNames(n), {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterEwSub(OnnxOpTable* table) {
  table->AddImport("Sub", ImportSub);
  table->SetExport(specs::OpKind::kEwSub, ExportEwSub);
}

}  // namespace verisub::runtime
