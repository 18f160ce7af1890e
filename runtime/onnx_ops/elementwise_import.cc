// Import helpers shared by the elementwise operators' files.
#include "runtime/onnx_ops/elementwise_import.h"

#include <algorithm>

#include "runtime/scalar_constant.h"

namespace verisub::runtime {

using specs::OpKind;

void ImportUnary(ImportContext& c, specs::OpKind kind) {
  if (!c.InputsFloatStatic(1) || c.SingleOutput() == kNoValue) return;
  c.Add(kind, Defaults(kind), {c.InId(0)}, {c.Out(0)});
}

bool AddBroadcastBinary(ImportContext& c, int x_id, int o_id, bool add, int out) {
  const Value& x = c.graph().value(x_id);
  const Value& o = c.graph().value(o_id);
  const std::vector<int64_t>& y = x.dims;
  if (o.dims == y) {
    const OpKind k = add ? OpKind::kEwAdd : OpKind::kEwMul;
    c.Add(k, Defaults(k), {x_id, o_id}, {out});
    return true;
  }
  if (o.dims.size() > y.size()) return false;
  std::vector<int64_t> aligned(y.size() - o.dims.size(), 1);
  aligned.insert(aligned.end(), o.dims.begin(), o.dims.end());
  if (!add && CountElements(o.dims) == 1) {
    c.Add(OpKind::kSmul, Defaults(OpKind::kSmul), {x_id, c.Reshaped(o_id, {})}, {out});
    return true;
  }
  // A constant scalar added: the same value added along the last axis, a bias of that many
  // copies (bit for bit what the scalar add computes; `1 + tanh(...)` of a tanh GELU).
  if (add && CountElements(o.dims) == 1 && !y.empty()) {
    const std::optional<double> v = ScalarConstant(c.graph(), o_id);
    if (!v) return false;
    const int bias =
        c.NewWeight(HostTensor::FromDoubles(kFloat, {y.back()}, std::vector<double>(y.back(), *v)));
    c.AddBias(x_id, bias, static_cast<int>(y.size()) - 1, out);
    return true;
  }
  if (aligned == y) {
    const OpKind k = add ? OpKind::kEwAdd : OpKind::kEwMul;
    c.Add(k, Defaults(k), {x_id, c.Reshaped(o_id, y)}, {out});
    return true;
  }
  int axis = -1, count = 0;
  for (size_t d = 0; d < aligned.size(); ++d)
    if (aligned[d] != 1) axis = static_cast<int>(d), ++count;
  if (count == 1 && aligned[axis] == y[axis]) {
    const int v = c.AsVector(o_id, y[axis]);
    if (add)
      c.AddBias(x_id, v, axis, out);
    else
      c.AddChannelScale(x_id, v, axis, out);
    return true;
  }
  // Repeated along leading axes only: ones, then exactly y's trailing dimensions.
  size_t lead = 0;
  while (lead < aligned.size() && aligned[lead] == 1) ++lead;
  if (lead == 0 || lead == aligned.size() ||
      !std::equal(aligned.begin() + static_cast<std::ptrdiff_t>(lead), aligned.end(),
                  y.begin() + static_cast<std::ptrdiff_t>(lead)))
    return false;
  int64_t rows = 1, cols = 1;
  for (size_t d = 0; d < y.size(); ++d) (d < lead ? rows : cols) *= y[d];
  const std::vector<int64_t> y_dims = y;  // `x` may move when values are added
  const int rows_view = c.Reshaped(x_id, {rows, cols});
  const int v = c.AsVector(o_id, cols);
  const int sum = c.NewValue(x.elem_type);
  if (add)
    c.AddBias(rows_view, v, 1, sum);
  else
    c.AddChannelScale(rows_view, v, 1, sum);
  c.AddReshape(sum, y_dims, out);
  return true;
}

void ImportBroadcastBinary(ImportContext& c, bool add) {
  if (!c.InputsFloatStatic(2) || c.SingleOutput() == kNoValue) return c.Fail();
  const Value& y = c.OutValue(0);
  for (int side = 0; side < 2; ++side)
    if (c.In(side).dims == y.dims &&
        AddBroadcastBinary(c, c.InId(side), c.InId(1 - side), add, c.Out(0)))
      return;
  c.Fail();
}

}  // namespace verisub::runtime
