// broadcast in ONNX: Expand to the output's shape; never imported (a sub-operator; the fusion
// level lowers Expand's broadcasts as reindexes).
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterBroadcast(OnnxOpTable* table) {
  table->SetExport(specs::OpKind::kBroadcast, [](ExportContext& c, const Node& n) {
    const std::string shape = c.Int64s(c.value(n.outputs[0]).dims, n.name + "_shape");
    c.Emit("Expand", n.name, {c.InputNames(n)[0], shape}, {c.Name(n.outputs[0])});
    return Status::Ok();
  });
}

}  // namespace verisub::runtime
