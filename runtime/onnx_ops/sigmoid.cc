// sigmoid in ONNX: Sigmoid both ways.
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterSigmoid(OnnxOpTable* table) {
  RegisterOneToOneActivation(table, specs::OpKind::kSigmoid, specs::Activation::kSigmoid,
                             "Sigmoid");
}

}  // namespace verisub::runtime
