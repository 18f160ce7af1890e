// select in ONNX: written as its definition b + m * (a - b) (Sub, Mul, Add), which is Where for a
// 0/1 mask and the spec's meaning for any other; never imported (a sub-operator).
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

Status ExportSelect(ExportContext& c, const Node& n) {
  std::vector<std::string> in = c.InputNames(n);
  const std::string diff = c.Fresh(n.name + "_diff"), scaled = c.Fresh(n.name + "_scaled");
  c.Emit("Sub", n.name + "_sub", {in[1], in[2]}, {diff});
  c.Emit("Mul", n.name + "_mul", {in[0], diff}, {scaled});
  c.Emit("Add", n.name, {in[2], scaled}, {c.Name(n.outputs[0])});
  return Status::Ok();
}

}  // namespace

void RegisterSelect(OnnxOpTable* table) { table->SetExport(specs::OpKind::kSelect, ExportSelect); }

}  // namespace verisub::runtime
