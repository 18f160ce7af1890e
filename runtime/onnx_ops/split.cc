// split in ONNX: a two-way Split whose first part matches the input's concat history; written
// back as Split (sizes as an input from opset 13, as an attribute before).
#include "specs/ops/split.h"

#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

void ImportSplit(ImportContext& c) {
  const Node& n = c.node();
  if (!c.InputsFloatStatic(1) || n.outputs.size() != 2 || n.outputs[0] == kNoValue ||
      n.outputs[1] == kNoValue)
    return c.Fail();
  const Value& x = c.In(0);
  auto axis =
      NormalizeAxis(c.attrs().AttrInt("axis", 0), static_cast<int64_t>(x.dims.size()), "Split");
  if (!axis.ok()) return c.Fail();
  const specs::SplitTree& tree = x.spec_type->trees[*axis];
  int64_t first = c.OutValue(0).dims[*axis];
  // The output shapes from ONNX shape inference already reflect the requested sizes.
  if (!tree || tree->conflict || tree->left_size != first) return c.Fail();
  specs::Params p = Defaults(OpKind::kSplit);
  p[ops::kSplitAxis] = *axis;
  c.Add(OpKind::kSplit, p, {c.InId(0)}, {c.Out(0), c.Out(1)});
}

Status ExportSplit(ExportContext& c, const Node& n) {
  int64_t axis = n.params[ops::kSplitAxis];
  std::vector<int64_t> sizes = {c.value(n.outputs[0]).dims[axis], c.value(n.outputs[1]).dims[axis]};
  std::vector<std::string> in = c.InputNames(n);
  if (c.opset() >= 13) in.push_back(c.Int64s(sizes, n.name + "_split"));
  auto* s = c.Emit("Split", n.name, in, {c.Name(n.outputs[0]), c.Name(n.outputs[1])});
  c.AttrInt(s, "axis", axis);
  if (c.opset() < 13) c.AttrInts(s, "split", sizes);
  return Status::Ok();
}

}  // namespace

void RegisterSplit(OnnxOpTable* table) {
  table->AddImport("Split", ImportSplit);
  table->SetExport(OpKind::kSplit, ExportSplit);
}

}  // namespace verisub::runtime
