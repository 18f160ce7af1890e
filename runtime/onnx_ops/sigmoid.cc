// sigmoid in ONNX: Sigmoid both ways.
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ImportSigmoid(ImportContext& c) { ImportUnary(c, specs::OpKind::kSigmoid); }

Status ExportSigmoid(ExportContext& c, const Node& n) {
  c.Emit("Sigmoid", n.name, c.InputNames(n), {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterSigmoid(OnnxOpTable* table) {
  table->AddImport("Sigmoid", ImportSigmoid);
  table->SetExport(specs::OpKind::kSigmoid, ExportSigmoid);
}

}  // namespace verisub::runtime
