// concat in ONNX: an n-ary Concat becomes a chain of binary concats; written back as Concat.
#include "specs/ops/concat.h"

#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

void ImportConcat(ImportContext& c) {
  size_t n = c.node().inputs.size();
  if (n < 2 || !c.InputsFloatStatic(n) || c.SingleOutput() == kNoValue) return c.Fail();
  int64_t rank = static_cast<int64_t>(c.In(0).dims.size());
  auto axis = NormalizeAxis(c.attrs().AttrInt("axis", 0), rank, "Concat");
  if (!axis.ok()) return c.Fail();
  specs::Params p = Defaults(OpKind::kConcat);
  p[ops::kConcatAxis] = *axis;
  int acc = c.InId(0);
  for (size_t k = 1; k < n; ++k) {
    int out = k + 1 == n ? c.Out(0) : c.NewValue(c.In(0).elem_type);
    c.Add(OpKind::kConcat, p, {acc, c.InId(k)}, {out});
    acc = out;
  }
}

Status ExportConcat(ExportContext& c, const Node& n) {
  c.AttrInt(c.Emit("Concat", n.name, c.InputNames(n), {c.Name(n.outputs[0])}), "axis",
            n.params[ops::kConcatAxis]);
  return Status::Ok();
}

}  // namespace

void RegisterConcat(OnnxOpTable* table) {
  table->AddImport("Concat", ImportConcat);
  table->SetExport(OpKind::kConcat, ExportConcat);
}

}  // namespace verisub::runtime
