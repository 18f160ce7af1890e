// log in ONNX: written as Log, never imported (a sub-operator; the fusion level lowers Log).
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterLog(OnnxOpTable* table) { RegisterExportOnly(table, specs::OpKind::kLog, "Log"); }

}  // namespace verisub::runtime
