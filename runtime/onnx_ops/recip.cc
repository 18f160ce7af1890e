// recip in ONNX: written as Reciprocal, never imported (a sub-operator; the fusion level lowers
// Reciprocal).
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterRecip(OnnxOpTable* table) {
  RegisterExportOnly(table, specs::OpKind::kRecip, "Reciprocal");
}

}  // namespace verisub::runtime
