// split in ONNX: a two-way Split whose first part matches the input's concat history; written
// back as Split (sizes as an input from opset 13, as an attribute before). Any other Split of
// static parts becomes one slice per part.
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
  if (!c.InputsFloatStatic(1) || n.outputs.empty()) return c.Fail();
  for (int v : n.outputs)
    if (v == kNoValue) return c.Fail();
  const Value& x = c.In(0);
  auto axis =
      NormalizeAxis(c.attrs().AttrInt("axis", 0), static_cast<int64_t>(x.dims.size()), "Split");
  if (!axis.ok()) return c.Fail();
  // The output shapes from ONNX shape inference already reflect the requested sizes (an
  // attribute, a sizes input, or equal parts).
  const specs::SplitTree& tree = x.spec_type->trees[*axis];
  if (n.outputs.size() == 2 && tree && !tree->conflict &&
      tree->left_size == c.OutValue(0).dims[*axis]) {
    specs::Params p = Defaults(OpKind::kSplit);
    p[ops::kSplitAxis] = *axis;
    return c.Add(OpKind::kSplit, p, {c.InId(0)}, {c.Out(0), c.Out(1)});
  }
  // Without that history (a GPT block's fused q, k, v projection split three ways): one slice
  // per part.
  int64_t start = 0;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const int64_t size = c.OutValue(k).dims[*axis];
    if (size <= 0) return c.Fail();
    c.AddSlice(c.InId(0), *axis, start, start + size, c.Out(k));
    start += size;
  }
  if (start != x.dims[*axis]) c.Fail();
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
