// erf in ONNX: Erf both ways.
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterErf(OnnxOpTable* table) { RegisterOneToOne(table, specs::OpKind::kErf, "Erf"); }

}  // namespace verisub::runtime
