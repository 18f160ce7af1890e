// Import helpers shared by the elementwise operators' files.
#include "runtime/onnx_ops/elementwise_import.h"

#include <algorithm>

namespace verisub::runtime {

using specs::OpKind;

void ImportUnary(ImportContext& c, specs::OpKind kind) {
  if (!c.InputsFloatStatic(1) || c.SingleOutput() == kNoValue) return;
  c.Add(kind, Defaults(kind), {c.InId(0)}, {c.Out(0)});
}

void ImportBroadcastBinary(ImportContext& c, bool add) {
  if (!c.InputsFloatStatic(2) || c.SingleOutput() == kNoValue) return c.Fail();
  const Value& y = c.OutValue(0);
  for (int side = 0; side < 2; ++side) {
    const Value& x = c.In(side);
    const Value& o = c.In(1 - side);
    if (x.dims != y.dims) continue;
    if (o.dims == y.dims) {
      OpKind k = add ? OpKind::kEwAdd : OpKind::kEwMul;
      return c.Add(k, Defaults(k), {c.InId(0), c.InId(1)}, {c.Out(0)});
    }
    if (o.dims.size() > y.dims.size()) continue;
    std::vector<int64_t> aligned(y.dims.size() - o.dims.size(), 1);
    aligned.insert(aligned.end(), o.dims.begin(), o.dims.end());
    if (!add && CountElements(o.dims) == 1)
      return c.Add(OpKind::kSmul, Defaults(OpKind::kSmul),
                   {c.InId(side), c.Reshaped(c.InId(1 - side), {})}, {c.Out(0)});
    if (aligned == y.dims) {
      OpKind k = add ? OpKind::kEwAdd : OpKind::kEwMul;
      return c.Add(k, Defaults(k), {c.InId(side), c.Reshaped(c.InId(1 - side), y.dims)},
                   {c.Out(0)});
    }
    int axis = -1, count = 0;
    for (size_t d = 0; d < aligned.size(); ++d)
      if (aligned[d] != 1) axis = static_cast<int>(d), ++count;
    if (count == 1 && aligned[axis] == y.dims[axis]) {
      const int v = c.AsVector(c.InId(1 - side), y.dims[axis]);
      return add ? c.AddBias(c.InId(side), v, axis, c.Out(0))
                 : c.AddChannelScale(c.InId(side), v, axis, c.Out(0));
    }
    // Repeated along leading axes only: ones, then exactly y's trailing dimensions.
    size_t lead = 0;
    while (lead < aligned.size() && aligned[lead] == 1) ++lead;
    if (lead == 0 || lead == aligned.size() ||
        !std::equal(aligned.begin() + static_cast<std::ptrdiff_t>(lead), aligned.end(),
                    y.dims.begin() + static_cast<std::ptrdiff_t>(lead)))
      continue;
    int64_t rows = 1, cols = 1;
    for (size_t d = 0; d < y.dims.size(); ++d) (d < lead ? rows : cols) *= y.dims[d];
    const int rows_view = c.Reshaped(c.InId(side), {rows, cols});
    const int v = c.AsVector(c.InId(1 - side), cols);
    const int sum = c.NewValue(y.elem_type);
    if (add)
      c.AddBias(rows_view, v, 1, sum);
    else
      c.AddChannelScale(rows_view, v, 1, sum);
    return c.AddReshape(sum, y.dims, c.Out(0));
  }
  c.Fail();
}

}  // namespace verisub::runtime
