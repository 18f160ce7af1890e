// sigmoid in ONNX: Sigmoid both ways.
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterSigmoid(OnnxOpTable* table) {
  RegisterOneToOne(table, specs::OpKind::kSigmoid, "Sigmoid");
}

}  // namespace verisub::runtime
