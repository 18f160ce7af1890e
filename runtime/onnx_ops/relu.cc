// relu in ONNX: Relu both ways.
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterRelu(OnnxOpTable* table) {
  RegisterOneToOneActivation(table, specs::OpKind::kRelu, specs::Activation::kRelu, "Relu");
}

}  // namespace verisub::runtime
