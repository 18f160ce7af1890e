// broadcast in ONNX: an Expand of a float value that repeats one axis of extent 1 (grouped-query
// attention's repeat of its keys and values over the heads of a group) imports as broadcast; it
// is written back as Expand to the output's shape. Other Expands stay opaque (the fusion level
// lowers their broadcasts as reindexes).
#include "specs/ops/broadcast.h"

#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

void ImportExpand(ImportContext& c) {
  if (!c.InputsFloatStatic(1) || c.SingleOutput() == kNoValue) return;
  const std::vector<int64_t>& xd = c.In(0).dims;
  const std::vector<int64_t>& yd = c.OutValue(0).dims;
  if (xd.size() != yd.size()) return;
  int axis = -1;
  for (size_t d = 0; d < yd.size(); ++d) {
    if (xd[d] == yd[d]) continue;
    if (xd[d] != 1 || axis >= 0) return;  // a second repeated axis: stays opaque
    axis = static_cast<int>(d);
  }
  if (axis < 0) return;
  specs::Params p = Defaults(specs::OpKind::kBroadcast);
  p[specs::ops::kBroadcastAxis] = axis;
  p[specs::ops::kBroadcastExtent] = yd[axis];
  c.Add(specs::OpKind::kBroadcast, p, {c.InId(0)}, {c.Out(0)});
}

}  // namespace

void RegisterBroadcast(OnnxOpTable* table) {
  table->AddImport("Expand", ImportExpand);
  table->SetExport(specs::OpKind::kBroadcast, [](ExportContext& c, const Node& n) {
    const std::string shape = c.Int64s(c.value(n.outputs[0]).dims, n.name + "_shape");
    c.Emit("Expand", n.name, {c.InputNames(n)[0], shape}, {c.Name(n.outputs[0])});
    return Status::Ok();
  });
}

}  // namespace verisub::runtime
