// tanh in ONNX: Tanh both ways.
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterTanh(OnnxOpTable* table) {
  RegisterOneToOneActivation(table, specs::OpKind::kTanh, specs::Activation::kTanh, "Tanh");
}

}  // namespace verisub::runtime
