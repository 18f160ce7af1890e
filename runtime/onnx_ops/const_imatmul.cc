// const_imatmul in ONNX: computed from its static shape and written as an initializer; never
// imported.
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterConstIMatmul(OnnxOpTable* table) {
  table->SetExport(specs::OpKind::kConstIMatmul, ExportConstant);
}

}  // namespace verisub::runtime
