// sqrt in ONNX: Sqrt both ways (an RMSNorm's root; the fusion level takes it as a sub-operator).
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterSqrt(OnnxOpTable* table) { RegisterOneToOne(table, specs::OpKind::kSqrt, "Sqrt"); }

}  // namespace verisub::runtime
