// silu in ONNX: no operator of its own before opset 22; imported from x * Sigmoid(x) by the
// import canonicalization (runtime/canonicalize.h), written back as Sigmoid and Mul.
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ExportSilu(ExportContext& c, const std::string& name, const std::string& x,
                const std::string& y, int32_t) {
  std::string gate = c.Fresh(y + "_sigmoid");
  c.Emit("Sigmoid", name + "_sigmoid", {x}, {gate});
  c.Emit("Mul", name, {x, gate}, {y});
}

}  // namespace

void RegisterSilu(OnnxOpTable* table) {
  table->SetActivationExport(specs::OpKind::kSilu, specs::Activation::kSilu, ExportSilu);
}

}  // namespace verisub::runtime
