// ewmin in ONNX: written as Min, never imported (a sub-operator; the fusion level lowers Min).
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterEwMin(OnnxOpTable* table) { RegisterExportOnly(table, specs::OpKind::kEwMin, "Min"); }

}  // namespace verisub::runtime
