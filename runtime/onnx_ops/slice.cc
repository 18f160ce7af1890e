// slice in ONNX: a Slice of one axis with unit step and constant bounds (ShuffleNet's channel
// split); written back as Slice (bounds as inputs from opset 10, as attributes before).
#include "specs/ops/slice.h"

#include <algorithm>
#include <optional>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_ops/export_context.h"
#include "runtime/onnx_ops/import_context.h"
#include "runtime/onnx_ops/op_table.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

// The one value of constant integer input k; an absent input gives `absent`; nullopt when the
// input is computed at run time or holds other than one element.
std::optional<int64_t> OneConstantInt(const ImportContext& c, size_t k,
                                      std::optional<int64_t> absent) {
  if (!c.Present(k)) return absent;
  const Value& v = c.In(k);
  if (!v.constant || !IsIntegerType(v.constant->elem_type)) return std::nullopt;
  std::vector<int64_t> ints = v.constant->ToInts();
  if (ints.size() != 1) return std::nullopt;
  return ints[0];
}

void ImportSlice(ImportContext& c) {
  if (!c.InputsFloatStatic(1) || c.SingleOutput() == kNoValue) return c.Fail();
  const int64_t rank = static_cast<int64_t>(c.In(0).dims.size());
  std::optional<int64_t> start, end, axis;
  if (c.attrs().opset() < 10) {
    std::vector<int64_t> s = c.attrs().AttrInts("starts"), e = c.attrs().AttrInts("ends"),
                         a = c.attrs().AttrInts("axes");
    if (s.size() != 1 || e.size() != 1 || a.size() > 1) return c.Fail();
    start = s[0];
    end = e[0];
    axis = a.empty() ? 0 : a[0];
  } else {
    start = OneConstantInt(c, 1, std::nullopt);
    end = OneConstantInt(c, 2, std::nullopt);
    axis = OneConstantInt(c, 3, 0);
    std::optional<int64_t> step = OneConstantInt(c, 4, 1);
    if (!step || *step != 1) return c.Fail();
  }
  if (!start || !end || !axis) return c.Fail();
  auto a = NormalizeAxis(*axis, rank, "Slice");
  if (!a.ok()) return c.Fail();
  // ONNX's bounds: negative counts from the end, then clamped to the dimension.
  const int64_t dim = c.In(0).dims[*a];
  auto clamp = [dim](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + dim : v, 0, dim); };
  const int64_t s = clamp(*start), e = clamp(*end);
  if (s >= e) return c.Fail();
  specs::Params p = Defaults(OpKind::kSlice);
  p[ops::kSliceAxis] = *a;
  p[ops::kSliceStart] = s;
  p[ops::kSliceEnd] = e;
  c.Add(OpKind::kSlice, p, {c.InId(0)}, {c.Out(0)});
}

Status ExportSlice(ExportContext& c, const Node& n) {
  const std::vector<int64_t> starts = {n.params[ops::kSliceStart]},
                             ends = {n.params[ops::kSliceEnd]}, axes = {n.params[ops::kSliceAxis]};
  std::vector<std::string> in = c.InputNames(n);
  if (c.opset() >= 10) {
    in.push_back(c.Int64s(starts, n.name + "_starts"));
    in.push_back(c.Int64s(ends, n.name + "_ends"));
    in.push_back(c.Int64s(axes, n.name + "_axes"));
  }
  auto* s = c.Emit("Slice", n.name, in, {c.Name(n.outputs[0])});
  if (c.opset() < 10) {
    c.AttrInts(s, "starts", starts);
    c.AttrInts(s, "ends", ends);
    c.AttrInts(s, "axes", axes);
  }
  return Status::Ok();
}

}  // namespace

void RegisterSlice(OnnxOpTable* table) {
  table->AddImport("Slice", ImportSlice);
  table->SetExport(OpKind::kSlice, ExportSlice);
}

}  // namespace verisub::runtime
