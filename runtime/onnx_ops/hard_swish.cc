// hard_swish in ONNX: HardSwish (opset 14) both ways; before opset 14 written as
// x * HardSigmoid(x).
#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ImportHardSwish(ImportContext& c) { ImportUnary(c, specs::OpKind::kHardSwish); }

void ExportHardSwish(ExportContext& c, const std::string& name, const std::string& x,
                     const std::string& y, int32_t) {
  if (c.opset() >= 14) {
    c.Emit("HardSwish", name, {x}, {y});
    return;
  }
  std::string gate = c.Fresh(y + "_gate");
  auto* hs = c.Emit("HardSigmoid", name + "_gate", {x}, {gate});
  c.AttrFloat(hs, "alpha", static_cast<float>(1.0 / 6.0));
  c.AttrFloat(hs, "beta", 0.5f);
  c.Emit("Mul", name, {x, gate}, {y});
}

}  // namespace

void RegisterHardSwish(OnnxOpTable* table) {
  table->AddImport("HardSwish", ImportHardSwish);
  table->SetActivationExport(specs::OpKind::kHardSwish, specs::Activation::kHardSwish,
                             ExportHardSwish);
}

}  // namespace verisub::runtime
