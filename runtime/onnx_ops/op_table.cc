// The table of every operator's ONNX import and export.
#include "runtime/onnx_ops/op_table.h"

#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"

namespace verisub::runtime {

void OnnxOpTable::AddImport(std::string op_type, OnnxImportFn fn) {
  VERISUB_CHECK(fn != nullptr);
  VERISUB_CHECK(imports_.emplace(std::move(op_type), fn).second);
}

void OnnxOpTable::SetExport(specs::OpKind op, OnnxExportFn fn) {
  int k = static_cast<int>(op);
  VERISUB_CHECK(k >= 0 && k < specs::kNumOpKinds && exports_[k] == nullptr && fn != nullptr);
  exports_[k] = fn;
}

void OnnxOpTable::SetActivationExport(specs::OpKind op, specs::Activation act,
                                      OnnxActivationFn fn) {
  VERISUB_CHECK(fn != nullptr && activations_.emplace(act, fn).second);
  SetExport(op, [fn](ExportContext& c, const Node& n) {
    fn(c, n.name, c.Name(n.inputs[0]), c.Name(n.outputs[0]), c.value(n.inputs[0]).elem_type);
    return Status::Ok();
  });
}

const OnnxActivationFn* OnnxOpTable::ActivationExport(specs::Activation act) const {
  auto it = activations_.find(act);
  return it == activations_.end() ? nullptr : &it->second;
}

const OnnxImportFn* OnnxOpTable::FindImport(std::string_view op_type) const {
  auto it = imports_.find(op_type);
  return it == imports_.end() ? nullptr : &it->second;
}

const OnnxExportFn& OnnxOpTable::Export(specs::OpKind op) const {
  int k = static_cast<int>(op);
  VERISUB_CHECK(k >= 0 && k < specs::kNumOpKinds);
  return exports_[k];
}

void RegisterOneToOne(OnnxOpTable* table, specs::OpKind op, const std::string& onnx_type) {
  table->AddImport(onnx_type, [op](ImportContext& c) {
    if (c.node().inputs.size() == 1) return ImportUnary(c, op);
    if (!c.InputsFloatStatic(c.node().inputs.size()) || c.SingleOutput() == kNoValue) return;
    c.Add(op, Defaults(op), c.node().inputs, {c.Out(0)});
  });
  table->SetExport(op, [onnx_type](ExportContext& c, const Node& n) {
    c.Emit(onnx_type, n.name, c.InputNames(n), {c.Name(n.outputs[0])});
    return Status::Ok();
  });
}

void RegisterExportOnly(OnnxOpTable* table, specs::OpKind op, const std::string& onnx_type) {
  table->SetExport(op, [onnx_type](ExportContext& c, const Node& n) {
    c.Emit(onnx_type, n.name, c.InputNames(n), {c.Name(n.outputs[0])});
    return Status::Ok();
  });
}

void RegisterOneToOneActivation(OnnxOpTable* table, specs::OpKind op, specs::Activation act,
                                const std::string& onnx_type) {
  table->AddImport(onnx_type, [op](ImportContext& c) { ImportUnary(c, op); });
  table->SetActivationExport(
      op, act,
      [onnx_type](ExportContext& c, const std::string& name, const std::string& x,
                  const std::string& y, int32_t) { c.Emit(onnx_type, name, {x}, {y}); });
}

namespace {

OnnxOpTable BuildTable() {
  OnnxOpTable table;
#define VERISUB_REGISTER_ONNX(name, file) Register##name(&table);
  VERISUB_FOR_EACH_OP(VERISUB_REGISTER_ONNX)
#undef VERISUB_REGISTER_ONNX
  for (int k = 0; k < specs::kNumOpKinds; ++k)
    VERISUB_CHECK(table.Export(static_cast<specs::OpKind>(k)) != nullptr);
  return table;
}

}  // namespace

const OnnxOpTable& OnnxOps() {
  static const OnnxOpTable table = BuildTable();
  return table;
}

}  // namespace verisub::runtime
