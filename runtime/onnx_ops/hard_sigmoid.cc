// hard_sigmoid in ONNX: HardSigmoid with alpha = 1/6 and beta = 1/2 (PyTorch's), both ways.
#include <cmath>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

// Float attributes hold 1/6 to float precision.
bool NearFloat(float a, double b) { return std::abs(a - b) <= 1e-7 * std::abs(b) + 1e-9; }

void ImportHardSigmoid(ImportContext& c) {
  if (!NearFloat(c.attrs().AttrFloat("alpha", 0.2f), 1.0 / 6.0) ||
      !NearFloat(c.attrs().AttrFloat("beta", 0.5f), 0.5))
    return;
  ImportUnary(c, specs::OpKind::kHardSigmoid);
}

void ExportHardSigmoid(ExportContext& c, const std::string& name, const std::string& x,
                       const std::string& y, int32_t) {
  auto* hs = c.Emit("HardSigmoid", name, {x}, {y});
  c.AttrFloat(hs, "alpha", static_cast<float>(1.0 / 6.0));
  c.AttrFloat(hs, "beta", 0.5f);
}

}  // namespace

void RegisterHardSigmoid(OnnxOpTable* table) {
  table->AddImport("HardSigmoid", ImportHardSigmoid);
  table->SetActivationExport(specs::OpKind::kHardSigmoid, specs::Activation::kHardSigmoid,
                             ExportHardSigmoid);
}

}  // namespace verisub::runtime
