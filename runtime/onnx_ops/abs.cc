// abs in ONNX: written as Abs, never imported (a sub-operator; the fusion level lowers Abs).
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterAbs(OnnxOpTable* table) { RegisterExportOnly(table, specs::OpKind::kAbs, "Abs"); }

}  // namespace verisub::runtime
