// conv2d_bias in ONNX: Conv with its bias input [+ activation]; imported as conv2d + bias_add
// (conv2d.cc), which rules fuse.
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"
#include "specs/ops/conv2d.h"

namespace verisub::runtime {
namespace {

Status ExportConv2dBias(ExportContext& c, const Node& n) { return ExportConvNode(c, n); }

}  // namespace

void RegisterConv2dBias(OnnxOpTable* table) {
  table->SetExport(specs::OpKind::kConv2dBias, ExportConv2dBias);
}

}  // namespace verisub::runtime
