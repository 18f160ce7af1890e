// reduce_mean in ONNX: ReduceMean with constant axes (an attribute before opset 18, an int64 input
// from 18), keepdims 0 or 1; no axes means all of them (unless noop_with_empty_axes, which stays
// opaque). Exported as ReduceMean in the opset's form. GlobalAveragePool imports as pool_avg.
#include "specs/ops/reduce_mean.h"

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

void ImportReduceMean(ImportContext& c) {
  if (!c.InputsFloatStatic(1) || c.SingleOutput() == kNoValue) return c.Fail();
  const int64_t rank = static_cast<int64_t>(c.In(0).dims.size());
  std::vector<int64_t> axes = c.attrs().AttrInts("axes");
  if (c.Present(1)) {
    const Value& a = c.In(1);
    if (!a.constant || !IsIntegerType(a.constant->elem_type)) return c.Fail();
    axes = a.constant->ToInts();
  }
  if (axes.empty()) {
    if (c.attrs().AttrInt("noop_with_empty_axes", 0) != 0) return c.Fail();
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  int64_t mask = 0;
  for (int64_t a : axes) {
    auto axis = NormalizeAxis(a, rank, "ReduceMean");
    if (!axis.ok()) return c.Fail();
    mask |= int64_t{1} << *axis;
  }
  const int64_t keep = c.attrs().AttrInt("keepdims", 1);
  if (keep != 0 && keep != 1) return c.Fail();
  specs::Params p = Defaults(OpKind::kReduceMean);
  p[ops::kReduceMeanAxes] = mask;
  p[ops::kReduceMeanKeepdims] = keep;
  c.Add(OpKind::kReduceMean, p, {c.InId(0)}, {c.Out(0)});
}

Status ExportReduceMean(ExportContext& c, const Node& n) {
  std::vector<int64_t> axes;
  for (int d = 0; d < specs::kMaxRank; ++d)
    if (specs::ops::ReducesAxis(n.params, d)) axes.push_back(d);
  std::vector<std::string> in = c.InputNames(n);
  if (c.opset() >= 18) in.push_back(c.Int64s(axes, n.name + "_axes"));
  auto* node = c.Emit("ReduceMean", n.name, in, {c.Name(n.outputs[0])});
  if (c.opset() < 18) ExportContext::AttrInts(node, "axes", axes);
  ExportContext::AttrInt(node, "keepdims", n.params[ops::kReduceMeanKeepdims]);
  return Status::Ok();
}

}  // namespace

void RegisterReduceMean(OnnxOpTable* table) {
  table->AddImport("ReduceMean", ImportReduceMean);
  table->SetExport(OpKind::kReduceMean, ExportReduceMean);
}

}  // namespace verisub::runtime
