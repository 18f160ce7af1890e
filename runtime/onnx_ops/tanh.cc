// tanh in ONNX: Tanh both ways.
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ImportTanh(ImportContext& c) { ImportUnary(c, specs::OpKind::kTanh); }

Status ExportTanh(ExportContext& c, const Node& n) {
  c.Emit("Tanh", n.name, c.InputNames(n), {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterTanh(OnnxOpTable* table) {
  table->AddImport("Tanh", ImportTanh);
  table->SetExport(specs::OpKind::kTanh, ExportTanh);
}

}  // namespace verisub::runtime
