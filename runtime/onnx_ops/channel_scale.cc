// channel_scale in ONNX: imported from BatchNormalization with constant statistics (its file) and
// from a Mul by a tensor that varies along one axis only (elementwise_import.cc); written as Mul
// with the scale viewed as [C,1,...,1] so that ONNX broadcasting aligns it with its axis.
#include "specs/ops/channel_scale.h"

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

Status ExportChannelScale(ExportContext& c, const Node& n) {
  std::vector<std::string> in = c.InputNames(n);
  in[1] = VectorAlongAxis(c, n, 1, n.params[specs::ops::kChannelScaleAxis]);
  c.Emit("Mul", n.name, in, {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterChannelScale(OnnxOpTable* table) {
  table->SetExport(specs::OpKind::kChannelScale, ExportChannelScale);
}

}  // namespace verisub::runtime
