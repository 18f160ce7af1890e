// relu in ONNX: Relu both ways.
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterRelu(OnnxOpTable* table) { RegisterOneToOne(table, specs::OpKind::kRelu, "Relu"); }

}  // namespace verisub::runtime
