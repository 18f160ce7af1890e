// reshape in ONNX: Reshape, Flatten, Squeeze and Unsqueeze to the statically inferred output
// shape; written back as Reshape with the shape as an initializer.
#include "specs/ops/reshape.h"

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;

void ImportReshape(ImportContext& c) {
  if (!c.InputsFloatStatic(1) || c.SingleOutput() == kNoValue) return;
  c.AddReshape(c.InId(0), c.OutValue(0).dims, c.Out(0));
}

Status ExportReshape(ExportContext& c, const Node& n) {
  c.Emit("Reshape", n.name,
         {c.Name(n.inputs[0]), c.Int64s(c.value(n.outputs[0]).dims, n.name + "_shape")},
         {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterReshape(OnnxOpTable* table) {
  table->AddImport("Reshape", ImportReshape);
  table->AddImport("Flatten", ImportReshape);
  table->AddImport("Squeeze", ImportReshape);
  table->AddImport("Unsqueeze", ImportReshape);
  table->SetExport(OpKind::kReshape, ExportReshape);
}

}  // namespace verisub::runtime
