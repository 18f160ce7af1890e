// pad in ONNX: a Pad of an image's spatial axes by zeros or by its edge (any other Pad stays
// ONNX's: reflections, other axes, crops, other constants); also made by the Conv and pool imports
// for explicit paddings the window operators' same/valid cannot state (ImportContext::AddPad).
// Written back as Pad (constant 0 or edge; pads as an input from opset 11, an attribute before).
#include "specs/ops/pad.h"

#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {

namespace {

void ImportPad(ImportContext& c) {
  if (!c.InputsFloatStatic(1) || c.SingleOutput() == kNoValue || c.In(0).dims.size() != 4)
    return c.Fail();
  const KernelContext& attrs = c.attrs();
  const std::string mode = attrs.AttrString("mode", "constant");
  if (mode != "constant" && mode != "edge") return c.Fail();
  std::vector<int64_t> pads;
  if (attrs.opset() < 11) {
    pads = attrs.AttrInts(attrs.opset() < 2 ? "paddings" : "pads");
    if (attrs.AttrFloat("value", 0.f) != 0.f) return c.Fail();
  } else {
    if (!c.Present(1) || !c.In(1).constant || !IsIntegerType(c.In(1).constant->elem_type))
      return c.Fail();
    pads = c.In(1).constant->ToInts();
    if (c.Present(2)) {  // the constant
      const Value& v = c.In(2);
      if (!v.constant || v.constant->NumElements() != 1 || v.constant->DoubleAt(0) != 0.0)
        return c.Fail();
    }
    if (c.Present(3)) return c.Fail();  // axes (opset 18)
  }
  if (pads.size() != 8 || pads[0] || pads[1] || pads[4] || pads[5]) return c.Fail();
  if (c.AddPad(c.InId(0), {pads[2], pads[3], pads[6], pads[7]}, mode == "edge", c.Out(0)) ==
      kNoValue)
    return c.Fail();
}

}  // namespace

void RegisterPad(OnnxOpTable* table) {
  namespace ops = specs::ops;
  table->AddImport("Pad", ImportPad);
  table->SetExport(specs::OpKind::kPad, [](ExportContext& c, const Node& n) {
    if (c.PadFoldsIntoItsWindow(n)) return Status::Ok();  // its window writes it
    const std::vector<int64_t> a = ops::PadAmounts(n.params);
    const std::vector<int64_t> pads = {0, 0, a[0], a[1], 0, 0, a[2], a[3]};
    std::vector<std::string> in = c.InputNames(n);
    if (c.opset() >= 11) in.push_back(c.Int64s(pads, n.name + "_pads"));
    auto* pad = c.Emit("Pad", n.name, in, {c.Name(n.outputs[0])});
    const bool edge = ops::PadModeOf(n.params) == ops::PadMode::kEdge;
    c.AttrString(pad, "mode", edge ? "edge" : "constant");
    if (c.opset() < 11) c.AttrInts(pad, c.opset() < 2 ? "paddings" : "pads", pads);
    return Status::Ok();
  });
}

}  // namespace verisub::runtime
