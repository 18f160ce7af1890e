// ewsub in ONNX: Sub of two tensors of the output's shape, both ways (a broadcast Sub stays
// opaque: the shape rule refuses it; Sub of a constant is canonicalized into Add first, see
// runtime/canonicalize.h).
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

void RegisterEwSub(OnnxOpTable* table) { RegisterOneToOne(table, specs::OpKind::kEwSub, "Sub"); }

}  // namespace verisub::runtime
