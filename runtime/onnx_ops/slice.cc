// slice in ONNX: a Slice with constant bounds (ShuffleNet's channel split; a window padding cut
// back off, one slice per axis it narrows; a strided patch merging through a reshaped view), and
// a Gather of one constant index (a transformer's q, k, v = qkv[0], qkv[1], qkv[2])
// as a slice of that index and a reshape dropping its axis; written back as Slice (bounds as
// inputs from opset 10, as attributes before).
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

// The values of constant integer input k; an absent input gives `absent`; nullopt when the input
// is computed at run time.
std::optional<std::vector<int64_t>> ConstantInts(const ImportContext& c, size_t k,
                                                 std::optional<std::vector<int64_t>> absent) {
  if (!c.Present(k)) return absent;
  const Value& v = c.In(k);
  if (!v.constant || !IsIntegerType(v.constant->elem_type)) return std::nullopt;
  return v.constant->ToInts();
}

// A Slice with constant bounds and positive steps, of one axis or several: one slice per axis it
// narrows, chained (an axis it keeps whole needs none); a step that divides its axis through a
// reshaped view (below).
void ImportSlice(ImportContext& c) {
  if (!c.InputsFloatStatic(1) || c.SingleOutput() == kNoValue) return c.Fail();
  const std::vector<int64_t>& xd = c.In(0).dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (c.attrs().opset() < 10) {
    starts = c.attrs().AttrInts("starts");
    ends = c.attrs().AttrInts("ends");
    axes = c.attrs().AttrInts("axes");
    if (axes->empty()) axes.reset();
  } else {
    starts = ConstantInts(c, 1, std::nullopt);
    ends = ConstantInts(c, 2, std::nullopt);
    axes = ConstantInts(c, 3, std::vector<int64_t>());
    steps = ConstantInts(c, 4, std::vector<int64_t>());
    if (!axes || !steps) return c.Fail();
    if (axes->empty()) axes.reset();
  }
  if (!starts || !ends || starts->size() != ends->size() || starts->empty()) return c.Fail();
  const size_t n = starts->size();
  if (!axes) {
    axes.emplace();
    for (size_t k = 0; k < n; ++k) axes->push_back(static_cast<int64_t>(k));
  }
  if (axes->size() != n || (steps && !steps->empty() && steps->size() != n)) return c.Fail();
  // Per axis (in x's order): the range kept and the step.
  struct Cut {
    int64_t start, end, step;
  };
  std::vector<std::optional<Cut>> cut(rank);
  for (size_t k = 0; k < n; ++k) {
    const int64_t step = steps && !steps->empty() ? (*steps)[k] : 1;
    if (step < 1) return c.Fail();
    auto a = NormalizeAxis((*axes)[k], rank, "Slice");
    if (!a.ok() || cut[*a]) return c.Fail();
    // ONNX's bounds: negative counts from the end, then clamped to the dimension.
    const int64_t dim = xd[*a];
    auto clamp = [dim](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + dim : v, 0, dim); };
    const int64_t s = clamp((*starts)[k]), e = clamp((*ends)[k]);
    if (s >= e) return c.Fail();
    cut[*a] = Cut{s, e, step};
  }
  // A step s on an axis of n = q * s elements: the axis viewed as [q, s], the element of the
  // stride picked on the second and the range of strides kept on the first (Swin's patch
  // merging, x[:, 0::2, 1::2, :]); x is reshaped to that view first and back at the end.
  std::vector<int64_t> view;
  std::vector<int64_t> at(rank);  // x's axis d is axis at[d] of the view
  bool strided = false;
  for (int64_t d = 0; d < rank; ++d) {
    at[d] = static_cast<int64_t>(view.size());
    if (cut[d] && cut[d]->step > 1) {
      if (xd[d] % cut[d]->step != 0) return c.Fail();
      view.push_back(xd[d] / cut[d]->step);
      view.push_back(cut[d]->step);
      strided = true;
    } else {
      view.push_back(xd[d]);
    }
  }
  if (view.size() > static_cast<size_t>(specs::kMaxRank)) return c.Fail();
  struct Piece {
    int64_t axis, start, end;
  };
  std::vector<Piece> pieces;
  for (int64_t d = 0; d < rank; ++d) {
    if (!cut[d]) continue;
    const Cut& k = *cut[d];
    if (k.step == 1) {
      if (k.start > 0 || k.end < xd[d]) pieces.push_back({at[d], k.start, k.end});
      continue;
    }
    const int64_t r = k.start % k.step, q0 = k.start / k.step,
                  q1 = (k.end - r + k.step - 1) / k.step;
    pieces.push_back({at[d] + 1, r, r + 1});
    if (q0 > 0 || q1 < view[at[d]]) pieces.push_back({at[d], q0, q1});
  }
  if (pieces.empty()) {  // the whole tensor: one slice of its full range keeps the node mapped
    for (int64_t d = 0; d < rank && pieces.empty(); ++d)
      if (cut[d]) pieces.push_back({at[d], 0, xd[d]});
  }
  int x = strided ? c.Reshaped(c.InId(0), view) : c.InId(0);
  for (size_t k = 0; k < pieces.size(); ++k) {
    const bool last = k + 1 == pieces.size() && !strided;
    const int y = last ? c.Out(0) : c.NewValue(c.In(0).elem_type);
    c.AddSlice(x, pieces[k].axis, pieces[k].start, pieces[k].end, y);
    x = y;
  }
  if (strided) c.AddReshape(x, c.OutValue(0).dims, c.Out(0));
}

// Gather(x, i) with i one constant integer: x's sub-tensor at index i of `axis`, without that axis
// when i is a scalar, with it (of extent 1) when i has shape [1].
void ImportGather(ImportContext& c) {
  if (!c.InputsFloatStatic(1) || !c.Present(1) || c.SingleOutput() == kNoValue) return c.Fail();
  const Value& index = c.In(1);
  if (!index.constant || !IsIntegerType(index.constant->elem_type) ||
      index.constant->NumElements() != 1 || index.dims.size() > 1)
    return c.Fail();
  const std::vector<int64_t>& xd = c.In(0).dims;
  auto axis =
      NormalizeAxis(c.attrs().AttrInt("axis", 0), static_cast<int64_t>(xd.size()), "Gather");
  if (!axis.ok()) return c.Fail();
  int64_t i = index.constant->IntAt(0);
  if (i < 0) i += xd[*axis];
  if (i < 0 || i >= xd[*axis]) return c.Fail();
  if (index.dims.size() == 1) return c.AddSlice(c.InId(0), *axis, i, i + 1, c.Out(0));
  const int row = c.NewValue(c.In(0).elem_type);
  c.AddSlice(c.InId(0), *axis, i, i + 1, row);
  c.AddReshape(row, c.OutValue(0).dims, c.Out(0));
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
  table->AddImport("Gather", ImportGather);
  table->SetExport(OpKind::kSlice, ExportSlice);
}

}  // namespace verisub::runtime
