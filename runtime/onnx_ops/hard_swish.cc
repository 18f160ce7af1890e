// hard_swish in ONNX: HardSwish (opset 14) both ways; before opset 14 written as
// x * HardSigmoid(x).
#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ImportHardSwish(ImportContext& c) { ImportUnary(c, specs::OpKind::kHardSwish); }

Status ExportHardSwish(ExportContext& c, const Node& n) {
  std::string x = c.Name(n.inputs[0]), y = c.Name(n.outputs[0]);
  if (c.opset() >= 14) {
    c.Emit("HardSwish", n.name, {x}, {y});
    return Status::Ok();
  }
  std::string gate = c.Fresh(y + "_gate");
  auto* hs = c.Emit("HardSigmoid", n.name + "_gate", {x}, {gate});
  c.AttrFloat(hs, "alpha", static_cast<float>(1.0 / 6.0));
  c.AttrFloat(hs, "beta", 0.5f);
  c.Emit("Mul", n.name, {x, gate}, {y});
  return Status::Ok();
}

}  // namespace

void RegisterHardSwish(OnnxOpTable* table) {
  table->AddImport("HardSwish", ImportHardSwish);
  table->SetExport(specs::OpKind::kHardSwish, ExportHardSwish);
}

}  // namespace verisub::runtime
