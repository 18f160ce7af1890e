// relu in ONNX: Relu both ways.
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ImportRelu(ImportContext& c) { ImportUnary(c, specs::OpKind::kRelu); }

Status ExportRelu(ExportContext& c, const Node& n) {
  c.Emit("Relu", n.name, c.InputNames(n), {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterRelu(OnnxOpTable* table) {
  table->AddImport("Relu", ImportRelu);
  table->SetExport(specs::OpKind::kRelu, ExportRelu);
}

}  // namespace verisub::runtime
