// recip in ONNX: Reciprocal imports as recip, as does Div(1, y) (canonicalize.cc: torch.rsqrt,
// LLaMA's and T5's RMSNorm, 1 / sqrt(mean(x^2) + eps)); written back as Div(1, y), the form
// exporters write and ONNX Runtime's RMSNorm fusion (SimplifiedLayerNormalization) matches: with
// Reciprocal, ONNX Runtime ran the LLaMA-style model's export at 0.96x of the original.
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterRecip(OnnxOpTable* table) {
  table->AddImport("Reciprocal", [](ImportContext& c) { ImportUnary(c, specs::OpKind::kRecip); });
  table->SetExport(specs::OpKind::kRecip, [](ExportContext& c, const Node& n) {
    const std::string one = c.AddInitializer(
        HostTensor::FromDoubles(c.value(n.inputs[0]).elem_type, {}, {1.0}), n.name + "_one");
    c.Emit("Div", n.name, {one, c.Name(n.inputs[0])}, {c.Name(n.outputs[0])});
    return Status::Ok();
  });
}

}  // namespace verisub::runtime
