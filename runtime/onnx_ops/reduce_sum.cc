// reduce_sum in ONNX: ReduceSum over one axis with keepdims=1 (axes an input from opset 13);
// never imported (a sub-operator; the fusion level lowers ONNX's ReduceSum itself).
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterReduceSum(OnnxOpTable* table) {
  table->SetExport(specs::OpKind::kReduceSum, [](ExportContext& c, const Node& n) {
    return ExportOneAxisReduce(c, n, "ReduceSum", 13);
  });
}

}  // namespace verisub::runtime
