// relu6 in ONNX: Clip with bounds 0 and 6 (inputs from opset 11, attributes before), both ways.
#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

// The bound of Clip from input k (a one-element weight) or, before opset 11, attribute `name`;
// nullopt when it is absent or not a constant.
std::optional<double> ClipBound(const ImportContext& c, size_t k, const char* name) {
  if (c.attrs().opset() < 11) {
    if (c.attrs().FindAttr(name) == nullptr) return std::nullopt;
    return c.attrs().AttrFloat(name, 0.0f);
  }
  if (!c.Present(k)) return std::nullopt;
  const Value& v = c.In(k);
  if (!v.constant || CountElements(v.constant->dims) != 1) return std::nullopt;
  return v.constant->DoubleAt(0);
}

void ImportClip(ImportContext& c) {
  if (!c.Present(0) || !FloatStatic(c.In(0)) || c.SingleOutput() == kNoValue) return;
  auto lo = ClipBound(c, 1, "min"), hi = ClipBound(c, 2, "max");
  if (!lo || !hi || *lo != 0.0 || *hi != 6.0) return;
  c.Add(specs::OpKind::kRelu6, Defaults(specs::OpKind::kRelu6), {c.InId(0)}, {c.Out(0)});
}

void ExportRelu6(ExportContext& c, const std::string& name, const std::string& x,
                 const std::string& y, int32_t et) {
  if (c.opset() >= 11) {
    std::string lo = c.AddInitializer(HostTensor::FromDoubles(et, {}, {0.0}), name + "_min");
    std::string hi = c.AddInitializer(HostTensor::FromDoubles(et, {}, {6.0}), name + "_max");
    c.Emit("Clip", name, {x, lo, hi}, {y});
  } else {
    auto* clip = c.Emit("Clip", name, {x}, {y});
    c.AttrFloat(clip, "min", 0.0f);
    c.AttrFloat(clip, "max", 6.0f);
  }
}

}  // namespace

void RegisterRelu6(OnnxOpTable* table) {
  table->AddImport("Clip", ImportClip);
  table->SetActivationExport(specs::OpKind::kRelu6, specs::Activation::kRelu6, ExportRelu6);
}

}  // namespace verisub::runtime
