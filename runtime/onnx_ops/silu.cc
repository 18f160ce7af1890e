// silu in ONNX: no operator of its own before opset 22; imported from x * Sigmoid(x) by the
// import canonicalization (runtime/canonicalize.h), written back as Sigmoid and Mul.
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

Status ExportSilu(ExportContext& c, const Node& n) {
  std::string x = c.Name(n.inputs[0]), y = c.Name(n.outputs[0]);
  std::string gate = c.Fresh(y + "_sigmoid");
  c.Emit("Sigmoid", n.name + "_sigmoid", {x}, {gate});
  c.Emit("Mul", n.name, {x, gate}, {y});
  return Status::Ok();
}

}  // namespace

void RegisterSilu(OnnxOpTable* table) { table->SetExport(specs::OpKind::kSilu, ExportSilu); }

}  // namespace verisub::runtime
