// erf in ONNX: Erf both ways.
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ImportErf(ImportContext& c) { ImportUnary(c, specs::OpKind::kErf); }

Status ExportErf(ExportContext& c, const Node& n) {
  c.Emit("Erf", n.name, c.InputNames(n), {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterErf(OnnxOpTable* table) {
  table->AddImport("Erf", ImportErf);
  table->SetExport(specs::OpKind::kErf, ExportErf);
}

}  // namespace verisub::runtime
