// ewmul in ONNX: Mul (with its broadcasting forms, see elementwise_import.h) and back.
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ImportMul(ImportContext& c) { ImportBroadcastBinary(c, false); }

Status ExportEwMul(ExportContext& c, const Node& n) {
  c.Emit("Mul", n.name, c.InputNames(n), {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterEwMul(OnnxOpTable* table) {
  table->AddImport("Mul", ImportMul);
  table->SetExport(specs::OpKind::kEwMul, ExportEwMul);
}

}  // namespace verisub::runtime
