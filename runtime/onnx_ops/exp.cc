// exp in ONNX: Exp both ways.
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterExp(OnnxOpTable* table) { RegisterOneToOne(table, specs::OpKind::kExp, "Exp"); }

}  // namespace verisub::runtime
