// Data-movement and shape ONNX kernels: Reshape, Transpose, Concat, Split, Slice, Gather, Pad,
// Expand, Tile and friends, plus Constant and ConstantOfShape.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"
#include "runtime/tensor_proto.h"

namespace verisub::runtime {
namespace {

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(std::max<int64_t>(n, 0));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Guards allocation: shapes computed from data must stay reasonable.
Status CheckSize(const std::vector<int64_t>& dims, const std::string& what) {
  int64_t n = CountElements(dims);
  if (n < 0 || n > (int64_t{1} << 31))
    return InvalidArgument(what + ": invalid or too large output shape " + DimsToString(dims));
  return Status::Ok();
}

Status Identity(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  (*out)[0] = *ctx.input(0);
  return Status::Ok();
}

// Inference-mode Dropout: the identity, with an all-true mask.
Status Dropout(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  if (ctx.input(2) && ctx.input(2)->IntAt(0) != 0)
    return Unimplemented("Dropout in training mode is random");
  (*out)[0] = *ctx.input(0);
  if (out->size() > 1)
    (*out)[1] = HostTensor::FromInts(kBool, ctx.input(0)->dims,
                                     std::vector<int64_t>(ctx.input(0)->NumElements(), 1));
  return Status::Ok();
}

Status ShapeOp(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const auto& d = ctx.input(0)->dims;
  int64_t r = static_cast<int64_t>(d.size());
  int64_t start = ctx.AttrInt("start", 0), end = ctx.AttrInt("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  std::vector<int64_t> v;
  for (int64_t i = start; i < end; ++i) v.push_back(d[i]);
  (*out)[0] = HostTensor::FromInts(kInt64, {static_cast<int64_t>(v.size())}, v);
  return Status::Ok();
}

Status Size(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  (*out)[0] = HostTensor::FromInts(kInt64, {}, {CountElements(ctx.input(0)->dims)});
  return Status::Ok();
}

Status Reshape(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  std::vector<int64_t> shape = ctx.input(1)->ToInts();
  bool allowzero = ctx.AttrInt("allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (i >= x.dims.size()) return InvalidArgument("Reshape: 0 refers past the input's rank");
      shape[i] = x.dims[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) return InvalidArgument("Reshape: more than one -1");
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      return InvalidArgument("Reshape: negative dimension");
    } else {
      known *= shape[i];
    }
  }
  int64_t n = x.NumElements();
  if (infer >= 0) {
    if (known == 0 || n % known) return InvalidArgument("Reshape: cannot infer -1");
    shape[infer] = n / known;
  }
  if (CountElements(shape) != n)
    return InvalidArgument("Reshape: " + DimsToString(x.dims) + " cannot become " +
                           DimsToString(shape));
  (*out)[0] = x;
  (*out)[0].dims = shape;
  return Status::Ok();
}

Status Flatten(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  int64_t r = static_cast<int64_t>(x.dims.size());
  int64_t axis = ctx.AttrInt("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return InvalidArgument("Flatten: axis out of range");
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? a : b) *= x.dims[i];
  (*out)[0] = x;
  (*out)[0].dims = {a, b};
  return Status::Ok();
}

HostTensor TransposeTensor(const HostTensor& x, const std::vector<int64_t>& perm) {
  size_t r = x.dims.size();
  std::vector<int64_t> od(r);
  for (size_t i = 0; i < r; ++i) od[i] = x.dims[perm[i]];
  std::vector<int64_t> st = RowMajorStrides(x.dims);
  std::vector<int64_t> pst(r);
  for (size_t i = 0; i < r; ++i) pst[i] = st[perm[i]];
  int64_t n = x.NumElements();
  std::vector<int64_t> index(n), idx(r, 0);
  int64_t off = 0;
  for (int64_t f = 0; f < n; ++f) {
    index[f] = off;
    for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
      if (++idx[d] < od[d]) {
        off += pst[d];
        break;
      }
      off -= pst[d] * (od[d] - 1);
      idx[d] = 0;
    }
  }
  return x.Gather(od, index);
}

Status Transpose(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  int64_t r = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> perm = ctx.AttrInts("perm");
  if (perm.empty())
    for (int64_t d = r - 1; d >= 0; --d) perm.push_back(d);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != Iota(r)) return InvalidArgument("Transpose: perm is not a permutation");
  (*out)[0] = TransposeTensor(x, perm);
  return Status::Ok();
}

// Axes from the attribute (older opsets) or the optional second input.
std::vector<int64_t> AxesArg(const KernelContext& ctx, int input) {
  if (ctx.input(input)) return ctx.input(input)->ToInts();
  return ctx.AttrInts("axes");
}

Status Squeeze(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  int64_t r = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> axes = AxesArg(ctx, 1);
  std::vector<char> drop(r, 0);
  if (axes.empty()) {
    for (int64_t i = 0; i < r; ++i) drop[i] = x.dims[i] == 1;
  }
  for (int64_t a : axes) {
    VERISUB_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis(a, r, "Squeeze"));
    if (x.dims[ax] != 1) return InvalidArgument("Squeeze: dimension is not 1");
    drop[ax] = 1;
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < r; ++i)
    if (!drop[i]) dims.push_back(x.dims[i]);
  (*out)[0] = x;
  (*out)[0].dims = dims;
  return Status::Ok();
}

Status Unsqueeze(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  std::vector<int64_t> axes = AxesArg(ctx, 1);
  int64_t r = static_cast<int64_t>(x.dims.size() + axes.size());
  std::vector<char> ins(r, 0);
  for (int64_t a : axes) {
    VERISUB_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis(a, r, "Unsqueeze"));
    if (ins[ax]) return InvalidArgument("Unsqueeze: repeated axis");
    ins[ax] = 1;
  }
  std::vector<int64_t> dims;
  size_t k = 0;
  for (int64_t i = 0; i < r; ++i) dims.push_back(ins[i] ? 1 : x.dims[k++]);
  (*out)[0] = x;
  (*out)[0].dims = dims;
  return Status::Ok();
}

// Copies a block [outer, len_i, inner] of each input into the output along one axis.
Status Concat(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& first = *ctx.input(0);
  int64_t r = static_cast<int64_t>(first.dims.size());
  VERISUB_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrInt("axis", 0), r, "Concat"));
  // Gather from the flat concatenation of all inputs.
  HostTensor all = first;
  all.dims = {first.NumElements()};
  std::vector<int64_t> dims = first.dims;
  dims[axis] = 0;
  std::vector<int64_t> base;
  int64_t offset = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, i + 1));
    const HostTensor& t = *ctx.input(i);
    if (static_cast<int64_t>(t.dims.size()) != r || t.elem_type != first.elem_type)
      return InvalidArgument("Concat: inputs differ in rank or type");
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && t.dims[d] != first.dims[d])
        return InvalidArgument("Concat: inputs differ outside the axis");
    if (i > 0) {
      all.f32.insert(all.f32.end(), t.f32.begin(), t.f32.end());
      all.f64.insert(all.f64.end(), t.f64.begin(), t.f64.end());
      all.ints.insert(all.ints.end(), t.ints.begin(), t.ints.end());
    }
    base.push_back(offset);
    offset += t.NumElements();
    dims[axis] += t.dims[axis];
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= dims[d];
  std::vector<int64_t> index;
  index.reserve(CountElements(dims));
  for (int64_t o = 0; o < outer; ++o)
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      int64_t block = ctx.input(i)->dims[axis] * inner;
      for (int64_t e = 0; e < block; ++e) index.push_back(base[i] + o * block + e);
    }
  (*out)[0] = all.Gather(dims, index);
  return Status::Ok();
}

// Elements of x with index range [begin, begin+len) along `axis`.
HostTensor SliceAxis(const HostTensor& x, int64_t axis, int64_t begin, int64_t len) {
  std::vector<int64_t> dims = x.dims;
  dims[axis] = len;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims[d];
  for (size_t d = axis + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
  std::vector<int64_t> index;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t e = 0; e < len * inner; ++e)
      index.push_back((o * x.dims[axis] + begin) * inner + e);
  return x.Gather(dims, index);
}

Status Split(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  int64_t r = static_cast<int64_t>(x.dims.size());
  VERISUB_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrInt("axis", 0), r, "Split"));
  std::vector<int64_t> sizes = ctx.input(1) ? ctx.input(1)->ToInts() : ctx.AttrInts("split");
  int64_t n = static_cast<int64_t>(out->size());
  if (sizes.empty()) {
    if (n == 0 || x.dims[axis] % n) return InvalidArgument("Split: cannot split evenly");
    sizes.assign(n, x.dims[axis] / n);
  }
  if (static_cast<int64_t>(sizes.size()) != n)
    return InvalidArgument("Split: number of sizes differs from number of outputs");
  int64_t begin = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (sizes[i] < 0 || begin + sizes[i] > x.dims[axis])
      return InvalidArgument("Split: sizes exceed the dimension");
    (*out)[i] = SliceAxis(x, axis, begin, sizes[i]);
    begin += sizes[i];
  }
  if (begin != x.dims[axis]) return InvalidArgument("Split: sizes do not sum to the dimension");
  return Status::Ok();
}

Status Slice(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  int64_t r = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.AttrInts("starts");
    ends = ctx.AttrInts("ends");
    axes = ctx.AttrInts("axes");
  } else {
    VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 3));
    starts = ctx.input(1)->ToInts();
    ends = ctx.input(2)->ToInts();
    if (ctx.input(3)) axes = ctx.input(3)->ToInts();
    if (ctx.input(4)) steps = ctx.input(4)->ToInts();
  }
  if (axes.empty()) axes = Iota(static_cast<int64_t>(starts.size()));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return InvalidArgument("Slice: starts, ends, axes and steps differ in length");
  std::vector<int64_t> begin(r, 0), step(r, 1), dims = x.dims;
  for (size_t i = 0; i < starts.size(); ++i) {
    VERISUB_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(axes[i], r, "Slice"));
    int64_t dim = x.dims[a], s = steps[i];
    if (s == 0) return InvalidArgument("Slice: step 0");
    int64_t st = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t en = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (s > 0) {
      st = std::clamp<int64_t>(st, 0, dim);
      en = std::clamp<int64_t>(en, 0, dim);
      dims[a] = en > st ? (en - st + s - 1) / s : 0;
    } else if (dim == 0) {
      st = 0;
      dims[a] = 0;
    } else {
      st = std::clamp<int64_t>(st, 0, dim - 1);
      en = std::clamp<int64_t>(en, -1, dim - 1);
      dims[a] = st > en ? (st - en + (-s) - 1) / (-s) : 0;
    }
    begin[a] = st;
    step[a] = s;
  }
  std::vector<int64_t> xs = RowMajorStrides(x.dims);
  int64_t n = CountElements(dims);
  std::vector<int64_t> index(n), idx(r, 0);
  for (int64_t f = 0; f < n; ++f) {
    int64_t off = 0;
    for (int64_t d = 0; d < r; ++d) off += (begin[d] + idx[d] * step[d]) * xs[d];
    index[f] = off;
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  (*out)[0] = x.Gather(dims, index);
  return Status::Ok();
}

Status Gather(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  const HostTensor& ind = *ctx.input(1);
  int64_t r = static_cast<int64_t>(x.dims.size());
  VERISUB_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrInt("axis", 0), r, "Gather"));
  std::vector<int64_t> idx = ind.ToInts();
  int64_t outer = 1, inner = 1, dim = x.dims[axis];
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= x.dims[d];
  std::vector<int64_t> dims(x.dims.begin(), x.dims.begin() + axis);
  dims.insert(dims.end(), ind.dims.begin(), ind.dims.end());
  dims.insert(dims.end(), x.dims.begin() + axis + 1, x.dims.end());
  std::vector<int64_t> index;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx) {
      int64_t k = i < 0 ? i + dim : i;
      if (k < 0 || k >= dim) return InvalidArgument("Gather: index out of range");
      for (int64_t e = 0; e < inner; ++e) index.push_back((o * dim + k) * inner + e);
    }
  (*out)[0] = x.Gather(dims, index);
  return Status::Ok();
}

Status GatherElements(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  const HostTensor& ind = *ctx.input(1);
  int64_t r = static_cast<int64_t>(x.dims.size());
  VERISUB_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.AttrInt("axis", 0), r, "GatherElements"));
  if (static_cast<int64_t>(ind.dims.size()) != r)
    return InvalidArgument("GatherElements: ranks differ");
  std::vector<int64_t> idx = ind.ToInts(), xs = RowMajorStrides(x.dims), pos(r, 0);
  std::vector<int64_t> index(idx.size());
  for (size_t f = 0; f < idx.size(); ++f) {
    int64_t off = 0;
    for (int64_t d = 0; d < r; ++d) {
      int64_t p = pos[d];
      if (d == axis) {
        p = idx[f] < 0 ? idx[f] + x.dims[d] : idx[f];
        if (p < 0 || p >= x.dims[d]) return InvalidArgument("GatherElements: index out of range");
      }
      off += p * xs[d];
    }
    index[f] = off;
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++pos[d] < ind.dims[d]) break;
      pos[d] = 0;
    }
  }
  (*out)[0] = x.Gather(ind.dims, index);
  return Status::Ok();
}

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
  for (size_t d = 0; d < r; ++d) dims[d] = x.dims[d] * reps[d];
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
  std::vector<int64_t> pads;
  double value = 0;
  if (ctx.opset() < 11) {
    pads = ctx.AttrInts("pads");
    value = ctx.AttrFloat("value", 0.0f);
  } else {
    VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
    pads = ctx.input(1)->ToInts();
    if (ctx.input(2) && ctx.input(2)->NumElements() > 0) value = ctx.input(2)->DoubleAt(0);
  }
  if (static_cast<int64_t>(pads.size()) != 2 * r)
    return InvalidArgument("Pad: pads must have 2 * rank entries");
  std::string mode = ctx.AttrString("mode", "constant");
  std::vector<int64_t> dims(r);
  for (int64_t d = 0; d < r; ++d) dims[d] = x.dims[d] + pads[d] + pads[d + r];
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "Pad"));
  // Index -1 selects the pad value, appended after x's elements.
  std::vector<int64_t> xs = RowMajorStrides(x.dims), pos(r, 0);
  int64_t n = CountElements(dims), nx = x.NumElements();
  std::vector<int64_t> index(n);
  for (int64_t f = 0; f < n; ++f) {
    int64_t off = 0;
    bool pad = false;
    for (int64_t d = 0; d < r; ++d) {
      int64_t p = pos[d] - pads[d], len = x.dims[d];
      if (p < 0 || p >= len) {
        if (mode == "constant" || len == 0) {
          pad = true;
        } else if (mode == "edge") {
          p = std::clamp<int64_t>(p, 0, len - 1);
        } else {  // reflect
          if (len == 1) {
            p = 0;
          } else {
            int64_t period = 2 * (len - 1);
            p = ((p % period) + period) % period;
            if (p >= len) p = period - p;
          }
        }
      }
      off += p * xs[d];
    }
    index[f] = pad ? nx : off;
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++pos[d] < dims[d]) break;
      pos[d] = 0;
    }
  }
  HostTensor ext = x;
  HostTensor v = HostTensor::FromDoubles(x.elem_type, {1}, {value});
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
  (*out)[0] = v.Gather(dims, std::vector<int64_t>(CountElements(dims), 0));
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
  double start = s.DoubleAt(0), limit = ctx.input(1)->DoubleAt(0), delta = ctx.input(2)->DoubleAt(0);
  if (delta == 0) return InvalidArgument("Range: delta 0");
  double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (count > double(int64_t{1} << 31)) return InvalidArgument("Range: too many elements");
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

void AddShapeKernels(KernelTable* t) {
  auto& k = *t;
  k["Identity"] = Identity;
  k["Dropout"] = Dropout;
  k["Shape"] = ShapeOp;
  k["Size"] = Size;
  k["Reshape"] = Reshape;
  k["Flatten"] = Flatten;
  k["Transpose"] = Transpose;
  k["Squeeze"] = Squeeze;
  k["Unsqueeze"] = Unsqueeze;
  k["Concat"] = Concat;
  k["Split"] = Split;
  k["Slice"] = Slice;
  k["Gather"] = Gather;
  k["GatherElements"] = GatherElements;
  k["Expand"] = Expand;
  k["Tile"] = Tile;
  k["Pad"] = Pad;
  k["ConstantOfShape"] = ConstantOfShape;
  k["Constant"] = Constant;
  k["Range"] = Range;
}

}  // namespace verisub::runtime
