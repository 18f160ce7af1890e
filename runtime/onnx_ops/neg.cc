// neg in ONNX: Neg both ways (a rotary embedding's rotate_half; the fusion level takes it as a
// sub-operator).
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterNeg(OnnxOpTable* table) { RegisterOneToOne(table, specs::OpKind::kNeg, "Neg"); }

}  // namespace verisub::runtime
