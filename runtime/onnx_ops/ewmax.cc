// ewmax in ONNX: written as Max, never imported (a sub-operator; the fusion level lowers Max).
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterEwMax(OnnxOpTable* table) { RegisterExportOnly(table, specs::OpKind::kEwMax, "Max"); }

}  // namespace verisub::runtime
