// recip in ONNX: Reciprocal both ways (1 / y, as canonicalize.cc writes Div(1, y): an RMSNorm's
// 1 / sqrt(mean(x^2) + eps)); the fusion level takes it as a sub-operator.
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterRecip(OnnxOpTable* table) {
  RegisterOneToOne(table, specs::OpKind::kRecip, "Reciprocal");
}

}  // namespace verisub::runtime
