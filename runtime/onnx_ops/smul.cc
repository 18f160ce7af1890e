// smul in ONNX: written as Mul by a one-element tensor (imported from Mul: see ewmul.cc).
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

Status ExportSmul(ExportContext& c, const Node& n) {
  c.Emit("Mul", n.name, c.InputNames(n), {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterSmul(OnnxOpTable* table) { table->SetExport(specs::OpKind::kSmul, ExportSmul); }

}  // namespace verisub::runtime
