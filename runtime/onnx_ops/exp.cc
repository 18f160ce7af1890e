// exp in ONNX: Exp both ways.
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ImportExp(ImportContext& c) { ImportUnary(c, specs::OpKind::kExp); }

Status ExportExp(ExportContext& c, const Node& n) {
  c.Emit("Exp", n.name, c.InputNames(n), {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterExp(OnnxOpTable* table) {
  table->AddImport("Exp", ImportExp);
  table->SetExport(specs::OpKind::kExp, ExportExp);
}

}  // namespace verisub::runtime
