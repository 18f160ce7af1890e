// sqrt in ONNX: written as Sqrt, never imported (a sub-operator; the fusion level lowers Sqrt).
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterSqrt(OnnxOpTable* table) { RegisterExportOnly(table, specs::OpKind::kSqrt, "Sqrt"); }

}  // namespace verisub::runtime
