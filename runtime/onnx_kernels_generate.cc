// ONNX kernels that create or enlarge tensors: Constant, ConstantOfShape, Range, Expand, Tile
// and Pad.
#include <algorithm>
#include <cmath>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"
#include "runtime/tensor_proto.h"

namespace verisub::runtime {
namespace {

Status Expand(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  VERISUB_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                           BroadcastDims(x.dims, ctx.input(1)->ToInts()));
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "Expand"));
  (*out)[0] = x.Gather(dims, BroadcastIndex(dims, x.dims));
  return Status::Ok();
}

Status Tile(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  std::vector<int64_t> reps = ctx.input(1)->ToInts();
  size_t r = x.dims.size();
  if (reps.size() != r) return InvalidArgument("Tile: repeats length differs from rank");
  std::vector<int64_t> dims(r);
  for (size_t d = 0; d < r; ++d)
    if (__builtin_mul_overflow(x.dims[d], reps[d], &dims[d]))
      return InvalidArgument("Tile: output shape overflows");
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "Tile"));
  std::vector<int64_t> xs = RowMajorStrides(x.dims), pos(r, 0);
  int64_t n = CountElements(dims);
  std::vector<int64_t> index(n);
  for (int64_t f = 0; f < n; ++f) {
    int64_t off = 0;
    for (size_t d = 0; d < r; ++d) off += (pos[d] % x.dims[d]) * xs[d];
    index[f] = off;
    for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
      if (++pos[d] < dims[d]) break;
      pos[d] = 0;
    }
  }
  (*out)[0] = x.Gather(dims, index);
  return Status::Ok();
}

Status Pad(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  int64_t r = static_cast<int64_t>(x.dims.size());
  VERISUB_ASSIGN_OR_RETURN(PadParams p, ParsePad(ctx, r));
  const std::vector<int64_t>& pads = p.pads;
  std::vector<int64_t> dims(r);
  for (int64_t d = 0; d < r; ++d)
    if (__builtin_add_overflow(x.dims[d], pads[d], &dims[d]) ||
        __builtin_add_overflow(dims[d], pads[d + r], &dims[d]))
      return InvalidArgument("Pad: output shape overflows");
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "Pad"));
  // Index -1 selects the pad value, appended after x's elements.
  std::vector<int64_t> xs = RowMajorStrides(x.dims), pos(r, 0);
  int64_t n = CountElements(dims), nx = x.NumElements();
  std::vector<int64_t> index(n);
  for (int64_t f = 0; f < n; ++f) {
    int64_t off = 0;
    bool pad = false;
    for (int64_t d = 0; d < r; ++d) {
      const int64_t source = PadSource(p.mode, pos[d], pads[d], x.dims[d]);
      pad = pad || source < 0;
      off += source * xs[d];
    }
    index[f] = pad ? nx : off;
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++pos[d] < dims[d]) break;
      pos[d] = 0;
    }
  }
  HostTensor ext = x;
  HostTensor v = HostTensor::FromDoubles(x.elem_type, {1}, {p.value});
  ext.f32.insert(ext.f32.end(), v.f32.begin(), v.f32.end());
  ext.f64.insert(ext.f64.end(), v.f64.begin(), v.f64.end());
  ext.ints.insert(ext.ints.end(), v.ints.begin(), v.ints.end());
  (*out)[0] = ext.Gather(dims, index);
  return Status::Ok();
}

Status ConstantOfShape(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  std::vector<int64_t> dims = ctx.input(0)->ToInts();
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "ConstantOfShape"));
  HostTensor v = HostTensor::FromDoubles(kFloat, {1}, {0.0});
  if (const auto* a = ctx.FindAttr("value")) {
    VERISUB_ASSIGN_OR_RETURN(v, FromTensorProto(a->t()));
    if (v.NumElements() != 1) return InvalidArgument("ConstantOfShape: value must have 1 element");
  }
  // Filled in the element type's storage: Faster R-CNN's pooled-feature buffers are millions of
  // elements, and a gather of element 0 for each cost 5 ms.
  HostTensor& y = (*out)[0];
  y.elem_type = v.elem_type;
  y.dims = dims;
  const size_t n = static_cast<size_t>(CountElements(dims));
  if (v.elem_type == kFloat)
    y.f32.assign(n, v.f32[0]);
  else if (!v.f64.empty())
    y.f64.assign(n, v.f64[0]);
  else
    y.ints.assign(n, v.ints[0]);
  return Status::Ok();
}

Status Constant(const KernelContext& ctx, std::vector<HostTensor>* out) {
  if (const auto* a = ctx.FindAttr("value")) {
    VERISUB_ASSIGN_OR_RETURN((*out)[0], FromTensorProto(a->t()));
  } else if (const auto* f = ctx.FindAttr("value_float")) {
    (*out)[0] = HostTensor::FromDoubles(kFloat, {}, {f->f()});
  } else if (const auto* fs = ctx.FindAttr("value_floats")) {
    std::vector<double> v(fs->floats().begin(), fs->floats().end());
    (*out)[0] = HostTensor::FromDoubles(kFloat, {static_cast<int64_t>(v.size())}, v);
  } else if (const auto* i = ctx.FindAttr("value_int")) {
    (*out)[0] = HostTensor::FromInts(kInt64, {}, {i->i()});
  } else if (const auto* is = ctx.FindAttr("value_ints")) {
    std::vector<int64_t> v(is->ints().begin(), is->ints().end());
    (*out)[0] = HostTensor::FromInts(kInt64, {static_cast<int64_t>(v.size())}, v);
  } else {
    return Unimplemented("Constant without a tensor, float or int value");
  }
  return Status::Ok();
}

Status Range(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 3));
  const HostTensor& s = *ctx.input(0);
  for (int i = 0; i < 3; ++i)
    if (ctx.input(i)->NumElements() != 1) return InvalidArgument("Range: inputs must be scalars");
  double start = s.DoubleAt(0), limit = ctx.input(1)->DoubleAt(0),
         delta = ctx.input(2)->DoubleAt(0);
  if (delta == 0) return InvalidArgument("Range: delta 0");
  double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (count > static_cast<double>(kMaxKernelElements))
    return InvalidArgument("Range: too many elements");
  int64_t n = static_cast<int64_t>(count);
  if (IsIntegerType(s.elem_type)) {
    std::vector<int64_t> v(n);
    int64_t a = s.IntAt(0), d = ctx.input(2)->IntAt(0);
    for (int64_t i = 0; i < n; ++i) v[i] = a + i * d;
    (*out)[0] = HostTensor::FromInts(s.elem_type, {n}, v);
  } else {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = start + i * delta;
    (*out)[0] = HostTensor::FromDoubles(s.elem_type, {n}, v);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<PadParams> ParsePad(const KernelContext& ctx, int64_t rank) {
  PadParams p;
  if (ctx.opset() < 11) {
    p.pads = ctx.AttrInts(ctx.opset() < 2 ? "paddings" : "pads");
    p.value = ctx.AttrFloat("value", 0.0f);
  } else {
    VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
    p.pads = ctx.input(1)->ToInts();
    if (ctx.input(2) && ctx.input(2)->NumElements() > 0) p.value = ctx.input(2)->DoubleAt(0);
  }
  if (static_cast<int64_t>(p.pads.size()) != 2 * rank)
    return InvalidArgument("Pad: pads must have 2 * rank entries");
  p.mode = ctx.AttrString("mode", "constant");
  if (p.mode != "constant" && p.mode != "reflect" && p.mode != "edge")
    return InvalidArgument("Pad: unknown mode '" + p.mode + "'");
  return p;
}

int64_t PadSource(const std::string& mode, int64_t o, int64_t begin, int64_t len) {
  const int64_t i = o - begin;
  if (i >= 0 && i < len) return i;
  if (mode == "constant" || len == 0) return -1;
  if (mode == "edge") return std::clamp<int64_t>(i, 0, len - 1);
  if (len == 1) return 0;
  const int64_t period = 2 * (len - 1);  // reflect: the edge element is not repeated
  const int64_t m = ((i % period) + period) % period;
  return m >= len ? period - m : m;
}

void AddGenerateKernels(KernelTable* t) {
  auto& k = *t;
  k["Expand"] = Expand;
  k["Tile"] = Tile;
  k["Pad"] = Pad;
  k["ConstantOfShape"] = ConstantOfShape;
  k["Constant"] = Constant;
  k["Range"] = Range;
}

}  // namespace verisub::runtime
