// tanh in ONNX: Tanh both ways.
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterTanh(OnnxOpTable* table) { RegisterOneToOne(table, specs::OpKind::kTanh, "Tanh"); }

}  // namespace verisub::runtime
