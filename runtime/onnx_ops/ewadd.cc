// ewadd in ONNX: Add (with its broadcasting forms, see elementwise_import.h) and back.
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ImportAdd(ImportContext& c) { ImportBroadcastBinary(c, true); }

Status ExportEwAdd(ExportContext& c, const Node& n) {
  c.Emit("Add", n.name, c.InputNames(n), {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterEwAdd(OnnxOpTable* table) {
  table->AddImport("Add", ImportAdd);
  table->SetExport(specs::OpKind::kEwAdd, ExportEwAdd);
}

}  // namespace verisub::runtime
