// reduce_max in ONNX: ReduceMax over one axis with keepdims=1 (axes an input from opset 18);
// never imported (a sub-operator; the fusion level lowers ONNX's ReduceMax itself).
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterReduceMax(OnnxOpTable* table) {
  table->SetExport(specs::OpKind::kReduceMax, [](ExportContext& c, const Node& n) {
    return ExportOneAxisReduce(c, n, "ReduceMax", 18);
  });
}

}  // namespace verisub::runtime
