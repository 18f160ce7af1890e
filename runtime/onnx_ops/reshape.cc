// reshape in ONNX: Reshape and Flatten to the statically inferred output shape; written back as
// Reshape with the shape as an initializer.
#include "specs/ops/reshape.h"

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

void ImportReshape(ImportContext& c) {
  if (!c.InputsFloatStatic(1) || c.SingleOutput() == kNoValue) return;
  const Value& out = c.OutValue(0);
  specs::Params p = Defaults(OpKind::kReshape);
  p[ops::kReshapeShape] = static_cast<int64_t>(out.dims.size());
  for (size_t d = 0; d < out.dims.size(); ++d) p[ops::kReshapeShape + 1 + d] = out.dims[d];
  c.Add(OpKind::kReshape, p, {c.InId(0)}, {c.Out(0)});
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
  table->SetExport(OpKind::kReshape, ExportReshape);
}

}  // namespace verisub::runtime
