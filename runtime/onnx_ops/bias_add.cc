// bias_add in ONNX: imported from Conv, Gemm and broadcasting Add (their files); written as Add
// with the bias viewed as [C,1,...,1] so that ONNX broadcasting aligns it with its axis.
#include "specs/ops/bias_add.h"

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

namespace ops = specs::ops;

// bias_add along axis k of a rank-r tensor: the bias gets r-1-k trailing ones.
Status ExportBiasAdd(ExportContext& c, const Node& n) {
  std::vector<std::string> in = c.InputNames(n);
  in[1] = VectorAlongAxis(c, n, 1, n.params[ops::kBiasAxis]);
  c.Emit("Add", n.name, in, {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterBiasAdd(OnnxOpTable* table) {
  table->SetExport(specs::OpKind::kBiasAdd, ExportBiasAdd);
}

}  // namespace verisub::runtime
