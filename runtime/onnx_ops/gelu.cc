// gelu and gelu_tanh in ONNX: Gelu from opset 20 (approximate="tanh" for the tanh form); before,
// the decompositions PyTorch exports (which ONNX Runtime fuses back into one kernel). Imported
// from those decompositions by the import canonicalization (runtime/canonicalize.h) and from
// Gelu.
#include <cmath>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/elementwise_import.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;

void ImportGeluOp(ImportContext& c) {
  std::string approximate = c.attrs().AttrString("approximate", "none");
  if (approximate == "none") return ImportUnary(c, OpKind::kGelu);
  if (approximate == "tanh") return ImportUnary(c, OpKind::kGeluTanh);
}

// Emits `a OP b` into a fresh value (or `out` when given) and returns its name.
std::string Binary(ExportContext& c, const Node& n, const std::string& op, const std::string& a,
                   const std::string& b, const std::string& out = "") {
  std::string y = out.empty() ? c.Fresh(c.Name(n.outputs[0]) + "_" + op) : out;
  c.Emit(op, c.Fresh(n.name + "_" + op), {a, b}, {y});
  return y;
}

std::string Scalar(ExportContext& c, const Node& n, double v) {
  return c.AddInitializer(HostTensor::FromDoubles(c.value(n.inputs[0]).elem_type, {}, {v}),
                          n.name + "_c");
}

Status ExportGelu(ExportContext& c, const Node& n) {
  std::string x = c.Name(n.inputs[0]), y = c.Name(n.outputs[0]);
  if (c.opset() >= 20) {
    c.Emit("Gelu", n.name, {x}, {y});
    return Status::Ok();
  }
  std::string d = Binary(c, n, "Div", x, Scalar(c, n, std::sqrt(2.0)));
  std::string e = c.Fresh(y + "_erf");
  c.Emit("Erf", c.Fresh(n.name + "_erf"), {d}, {e});
  std::string a = Binary(c, n, "Add", e, Scalar(c, n, 1.0));
  std::string m = Binary(c, n, "Mul", x, a);
  Binary(c, n, "Mul", m, Scalar(c, n, 0.5), y);
  return Status::Ok();
}

Status ExportGeluTanh(ExportContext& c, const Node& n) {
  std::string x = c.Name(n.inputs[0]), y = c.Name(n.outputs[0]);
  if (c.opset() >= 20) {
    c.AttrString(c.Emit("Gelu", n.name, {x}, {y}), "approximate", "tanh");
    return Status::Ok();
  }
  std::string cube = Binary(c, n, "Pow", x, Scalar(c, n, 3.0));
  std::string inner = Binary(c, n, "Add", x, Binary(c, n, "Mul", cube, Scalar(c, n, 0.044715)));
  std::string scaled = Binary(c, n, "Mul", inner, Scalar(c, n, std::sqrt(2.0 / M_PI)));
  std::string t = c.Fresh(y + "_tanh");
  c.Emit("Tanh", c.Fresh(n.name + "_tanh"), {scaled}, {t});
  std::string m = Binary(c, n, "Mul", x, Binary(c, n, "Add", t, Scalar(c, n, 1.0)));
  Binary(c, n, "Mul", m, Scalar(c, n, 0.5), y);
  return Status::Ok();
}

}  // namespace

void RegisterGelu(OnnxOpTable* table) {
  table->AddImport("Gelu", ImportGeluOp);
  table->SetExport(OpKind::kGelu, ExportGelu);
}

void RegisterGeluTanh(OnnxOpTable* table) { table->SetExport(OpKind::kGeluTanh, ExportGeluTanh); }

}  // namespace verisub::runtime
