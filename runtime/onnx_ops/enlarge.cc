// enlarge in ONNX: written as a zero Pad of the kernel's spatial dimensions (pads as an input
// from opset 11, as an attribute before); never imported (rules create it).
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

Status ExportEnlarge(ExportContext& c, const Node& n) {
  const Value& w = c.value(n.inputs[0]);
  const Value& y = c.value(n.outputs[0]);
  int64_t th = (y.dims[2] - w.dims[2]) / 2, tw = (y.dims[3] - w.dims[3]) / 2;
  std::vector<int64_t> pads = {
      0, 0, th, tw, 0, 0, y.dims[2] - w.dims[2] - th, y.dims[3] - w.dims[3] - tw};
  std::vector<std::string> in = c.InputNames(n);
  if (c.opset() >= 11) {
    c.Emit("Pad", n.name, {in[0], c.Int64s(pads, n.name + "_pads")}, {c.Name(n.outputs[0])});
  } else {
    c.AttrInts(c.Emit("Pad", n.name, in, {c.Name(n.outputs[0])}), "pads", pads);
  }
  return Status::Ok();
}

}  // namespace

void RegisterEnlarge(OnnxOpTable* table) {
  table->SetExport(specs::OpKind::kEnlarge, ExportEnlarge);
}

}  // namespace verisub::runtime
