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

// One activation's nodes: named after `name`, from `x`, of element type `et`.
struct Writer {
  ExportContext& c;
  const std::string& name;
  int32_t et;

  // Emits `a OP b` into a fresh value (or `out` when given) and returns its name.
  std::string Binary(const std::string& op, const std::string& a, const std::string& b,
                     const std::string& out = "") const {
    std::string y = out.empty() ? c.Fresh(name + "_" + op) : out;
    c.Emit(op, c.Fresh(name + "_" + op), {a, b}, {y});
    return y;
  }
  std::string Scalar(double v) const {
    return c.AddInitializer(HostTensor::FromDoubles(et, {}, {v}), name + "_c");
  }
};

void ExportGelu(ExportContext& c, const std::string& name, const std::string& x,
                const std::string& y, int32_t et) {
  if (c.opset() >= 20) {
    c.Emit("Gelu", name, {x}, {y});
    return;
  }
  Writer w{c, name, et};
  std::string d = w.Binary("Div", x, w.Scalar(std::sqrt(2.0)));
  std::string e = c.Fresh(y + "_erf");
  c.Emit("Erf", c.Fresh(name + "_erf"), {d}, {e});
  std::string a = w.Binary("Add", e, w.Scalar(1.0));
  std::string m = w.Binary("Mul", x, a);
  w.Binary("Mul", m, w.Scalar(0.5), y);
}

void ExportGeluTanh(ExportContext& c, const std::string& name, const std::string& x,
                    const std::string& y, int32_t et) {
  if (c.opset() >= 20) {
    c.AttrString(c.Emit("Gelu", name, {x}, {y}), "approximate", "tanh");
    return;
  }
  Writer w{c, name, et};
  std::string cube = w.Binary("Pow", x, w.Scalar(3.0));
  std::string inner = w.Binary("Add", x, w.Binary("Mul", cube, w.Scalar(0.044715)));
  std::string scaled = w.Binary("Mul", inner, w.Scalar(std::sqrt(2.0 / M_PI)));
  std::string t = c.Fresh(y + "_tanh");
  c.Emit("Tanh", c.Fresh(name + "_tanh"), {scaled}, {t});
  std::string m = w.Binary("Mul", x, w.Binary("Add", t, w.Scalar(1.0)));
  w.Binary("Mul", m, w.Scalar(0.5), y);
}

}  // namespace

void RegisterGelu(OnnxOpTable* table) {
  table->AddImport("Gelu", ImportGeluOp);
  table->SetActivationExport(OpKind::kGelu, specs::Activation::kGelu, ExportGelu);
}

void RegisterGeluTanh(OnnxOpTable* table) {
  table->SetActivationExport(OpKind::kGeluTanh, specs::Activation::kGeluTanh, ExportGeluTanh);
}

}  // namespace verisub::runtime
