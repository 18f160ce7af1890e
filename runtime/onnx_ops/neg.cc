// neg in ONNX: written as Neg, never imported (a sub-operator; the fusion level lowers Neg).
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterNeg(OnnxOpTable* table) { RegisterExportOnly(table, specs::OpKind::kNeg, "Neg"); }

}  // namespace verisub::runtime
