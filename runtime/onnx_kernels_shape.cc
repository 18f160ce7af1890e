// Data-movement and shape ONNX kernels: Reshape, Transpose, Concat, Split, Slice, Gather and
// friends.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "onnx/onnx_pb.h"
#include "runtime/large_buffer.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
// Copies a block [outer, len_i, inner] of each part into the output along `axis`, in the
// element type's storage (a mask-pasting Loop concatenates its growing result once per
// detection).
StatusOr<HostTensor> ConcatTensors(const std::vector<const HostTensor*>& parts, int64_t axis) {
  const HostTensor& first = *parts[0];
  const int64_t r = static_cast<int64_t>(first.dims.size());
  std::vector<int64_t> dims = first.dims;
  dims[axis] = 0;
  for (const HostTensor* t : parts) {
    if (static_cast<int64_t>(t->dims.size()) != r || t->elem_type != first.elem_type)
      return InvalidArgument("Concat: inputs differ in rank or type");
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && t->dims[d] != first.dims[d])
        return InvalidArgument("Concat: inputs differ outside the axis");
    if (__builtin_add_overflow(dims[axis], t->dims[axis], &dims[axis]))
      return InvalidArgument("Concat: the output's axis dimension overflows");
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    if (__builtin_mul_overflow(outer, dims[d], &outer))
      return InvalidArgument("Concat: the output's size overflows");
  for (int64_t d = axis + 1; d < r; ++d)
    if (__builtin_mul_overflow(inner, dims[d], &inner))
      return InvalidArgument("Concat: the output's size overflows");
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "Concat"));
  HostTensor y;
  y.elem_type = first.elem_type;
  y.dims = dims;
  const size_t n = static_cast<size_t>(CountElements(dims));
  auto fill = [&](auto member, auto& dst) {
    dst.resize(n);
    size_t at = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const HostTensor* t : parts) {
        const auto& src = t->*member;
        const int64_t block = t->dims[axis] * inner;
        std::copy(src.begin() + o * block, src.begin() + (o + 1) * block, dst.begin() + at);
        at += static_cast<size_t>(block);
      }
  };
  if (first.elem_type == kFloat)
    fill(&HostTensor::f32, y.f32);
  else if (IsFloatType(first.elem_type))
    fill(&HostTensor::f64, y.f64);
  else
    fill(&HostTensor::ints, y.ints);
  return y;
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

namespace {

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(std::max<int64_t>(n, 0));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

Status Identity(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  (*out)[0] = *ctx.input(0);
  return Status::Ok();
}

// Inference-mode Dropout: the identity, with an all-true mask.
Status Dropout(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  // In training mode only a ratio of 0 is deterministic (nothing dropped, scale 1): exporters
  // write that for torch's functional dropout with p=0 (Swin's attention).
  const bool training =
      (ctx.input(2) && ctx.input(2)->NumElements() > 0 && ctx.input(2)->IntAt(0) != 0) ||
      (ctx.opset() < 7 && ctx.AttrInt("is_test", 0) == 0);
  const double ratio =
      ctx.opset() >= 12
          ? (ctx.input(1) && ctx.input(1)->NumElements() > 0 ? ctx.input(1)->DoubleAt(0) : 0.5)
          : ctx.AttrFloat("ratio", 0.5f);
  if (training && ratio != 0.0) return Unimplemented("Dropout in training mode is random");
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
  // Reshape-1 (opsets 1 to 4) takes the shape as an attribute (old models of the ONNX model zoo).
  const bool attribute = ctx.opset() < 5;
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, attribute ? 1 : 2));
  const HostTensor& x = *ctx.input(0);
  std::vector<int64_t> shape = attribute ? ctx.AttrInts("shape") : ctx.input(1)->ToInts();
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
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      return InvalidArgument("Reshape: target shape overflows");
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

// Concat: ConcatTensors along the (normalized) axis.
Status Concat(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  std::vector<const HostTensor*> parts;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, i + 1));
    parts.push_back(ctx.input(i));
  }
  // Concat-1 defaulted the axis to 1; later versions require it.
  VERISUB_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.AttrInt("axis", ctx.opset() < 4 ? 1 : 0),
                                         static_cast<int64_t>(parts[0]->dims.size()), "Concat"));
  VERISUB_ASSIGN_OR_RETURN((*out)[0], ConcatTensors(parts, axis));
  return Status::Ok();
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
    if (sizes[i] < 0 || sizes[i] > x.dims[axis] - begin)
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
      dims[a] = en > st ? 1 + (en - st - 1) / s : 0;
    } else if (dim == 0) {
      st = 0;
      dims[a] = 0;
    } else {
      st = std::clamp<int64_t>(st, 0, dim - 1);
      en = std::clamp<int64_t>(en, -1, dim - 1);
      int64_t back =
          s == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -s;
      dims[a] = st > en ? 1 + (st - en - 1) / back : 0;
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
  for (int64_t i : idx)
    if (i < -dim || i >= dim)
      return InvalidArgument("Gather: index " + std::to_string(i) + " out of range [" +
                             std::to_string(-dim) + ", " + std::to_string(dim - 1) +
                             "] along axis " + std::to_string(axis) + " of input 0 " +
                             DimsToString(x.dims));
  // One run of `inner` elements per (outer, index): an embedding's rows are copied whole.
  std::vector<int64_t> starts;
  starts.reserve(static_cast<size_t>(outer) * idx.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx) starts.push_back((o * dim + (i < 0 ? i + dim : i)) * inner);
  (*out)[0] = x.GatherBlocks(dims, starts, inner);
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
      } else if (p >= x.dims[d]) {
        return InvalidArgument("GatherElements: indices larger than data outside the axis");
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

}  // namespace

namespace {

// out[f] = in(offset of f) over the output in row-major order, without an index table (a
// classifier weight has tens of millions of elements); a matrix goes in 32x32 tiles, a band of
// the input's rows at a time (about 16 MB of them, at least 32: each band writes a run of every
// output row, so a thin band sweeps the whole output, page by page, once per 32 rows: VGG's
// 4096x25088 classifier weight 128 times): `band(first, count, done)` hears when input elements
// [first, first + count) are about to be read (done false) and have been read (done true). `in`
// reads one element of the input's `n`.
template <class T, class In, class Band>
void TransposeData(In in, int64_t n, const std::vector<int64_t>& od,
                   const std::vector<int64_t>& pst, std::vector<T>* out, Band band) {
  const size_t r = od.size();
  ResizeForLargeWrite(out, static_cast<size_t>(n));
  if (r == 2 && pst[0] == 1) {  // a plain matrix transpose: y[i][j] = x[j][i]
    const int64_t rows = od[0], cols = od[1];
    constexpr int64_t kTile = 32;
    const int64_t band_rows =
        std::max<int64_t>(kTile, (int64_t{16} << 20) / (rows * int64_t{sizeof(T)}) / kTile * kTile);
    for (int64_t b0 = 0; b0 < cols; b0 += band_rows) {
      const int64_t b1 = std::min(cols, b0 + band_rows);
      band(b0 * rows, (b1 - b0) * rows, false);
      for (int64_t i0 = 0; i0 < rows; i0 += kTile)
        for (int64_t j0 = b0; j0 < b1; j0 += kTile) {
          const int64_t j1 = std::min(b1, j0 + kTile);
          for (int64_t i = i0; i < std::min(rows, i0 + kTile); ++i)
            for (int64_t j = j0; j < j1; ++j) (*out)[i * cols + j] = in(j * rows + i);
        }
      band(b0 * rows, (b1 - b0) * rows, true);
    }
    return;
  }
  band(0, n, false);
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t f = 0; f < n; ++f) {
    (*out)[f] = in(off);
    for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
      if (++idx[d] < od[d]) {
        off += pst[d];
        break;
      }
      off -= pst[d] * (od[d] - 1);
      idx[d] = 0;
    }
  }
  band(0, n, true);
}

// The transpose of `dims` by `perm` with its axes of size 1 dropped and neighbouring output axes
// merged where the input walks them as one (the outer one's stride is the inner one's times its
// size): the output's dims and, per output axis, its stride in the input. [1,12,129,64] by
// [0,1,3,2] is [12,64,129] with strides [8256,1,64].
void CollapseTranspose(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm,
                       std::vector<int64_t>* od, std::vector<int64_t>* pst) {
  const std::vector<int64_t> st = RowMajorStrides(dims);
  od->clear();
  pst->clear();
  for (int64_t a : perm) {
    if (dims[a] == 1) continue;
    if (!od->empty() && pst->back() == st[a] * dims[a]) {
      od->back() *= dims[a];
      pst->back() = st[a];
    } else {
      od->push_back(dims[a]);
      pst->push_back(st[a]);
    }
  }
}

// TransposeData for data in memory: the collapsed transpose as runs copied whole where the
// output's innermost axis is contiguous in the input, else as 32x32 tiles between the input's
// contiguous axis and the output's, for every index of the other axes.
template <class T>
void TransposeInMemory(const T* in, const std::vector<int64_t>& dims,
                       const std::vector<int64_t>& perm, T* out) {
  std::vector<int64_t> od, pst;
  CollapseTranspose(dims, perm, &od, &pst);
  const int64_t n = CountElements(dims);
  if (n == 0) return;
  const size_t r = od.size();
  if (r <= 1) {
    std::copy(in, in + n, out);
    return;
  }
  const std::vector<int64_t> ost = RowMajorStrides(od);
  // The output axis the input's contiguous one became (the tile's rows), unless that is the
  // innermost (runs copied whole).
  size_t rows_axis = r - 1;
  for (size_t i = 0; i < r; ++i)
    if (pst[i] == 1) rows_axis = i;
  const int64_t cols = od[r - 1];
  const int64_t rows = rows_axis == r - 1 ? 1 : od[rows_axis];
  // The odometer over the other axes: output offset and input offset of each combination.
  std::vector<size_t> outer;
  for (size_t i = 0; i + 1 < r; ++i)
    if (i != rows_axis) outer.push_back(i);
  std::vector<int64_t> idx(outer.size(), 0);
  int64_t in_off = 0, out_off = 0;
  for (;;) {
    if (rows_axis == r - 1) {
      std::copy(in + in_off, in + in_off + cols, out + out_off);
    } else {
      const int64_t in_col = pst[r - 1], out_row = ost[rows_axis];
      constexpr int64_t kTile = 32;
      for (int64_t i0 = 0; i0 < rows; i0 += kTile)
        for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
          const int64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
          for (int64_t i = i0; i < i1; ++i) {
            const T* src = in + in_off + i;
            T* dst = out + out_off + i * out_row;
            for (int64_t j = j0; j < j1; ++j) dst[j] = src[j * in_col];
          }
        }
    }
    if (!NextOffsets(
            &idx, [&](int d) { return od[outer[d]]; }, [&](int d) { return pst[outer[d]]; },
            [&](int d) { return ost[outer[d]]; }, &in_off, &out_off))
      return;
  }
}

}  // namespace

HostTensor TransposeTensor(const HostTensor& x, const std::vector<int64_t>& perm) {
  size_t r = x.dims.size();
  std::vector<int64_t> od(r);
  for (size_t i = 0; i < r; ++i) od[i] = x.dims[perm[i]];
  std::vector<int64_t> st = RowMajorStrides(x.dims);
  std::vector<int64_t> pst(r);
  for (size_t i = 0; i < r; ++i) pst[i] = st[perm[i]];
  HostTensor t;
  t.elem_type = x.elem_type;
  t.dims = od;
  const int64_t n = x.NumElements();
  if (x.elem_type == kFloat && x.f32.InFile()) {  // a weight in its file: read where it lies
    // A band of its rows mapped at a time and dropped once read: the peak holds the output.
    const char* bytes = x.f32.Bytes().data();
    TransposeData(
        [bytes](int64_t i) {
          float f;
          std::memcpy(&f, bytes + i * 4, 4);
          return f;
        },
        n, od, pst, &t.f32.Owned(),
        [&x](int64_t first, int64_t count, bool done) {
          const size_t at = static_cast<size_t>(first) * 4, len = static_cast<size_t>(count) * 4;
          done ? x.f32.DoneReadingBytes(at, len) : x.f32.WillReadBytes(at, len);
        });
    return t;
  }
  if (x.elem_type == kFloat) {
    std::vector<float>& y = t.f32.Owned();
    ResizeForLargeWrite(&y, static_cast<size_t>(n));
    TransposeInMemory(x.f32.Floats().data(), x.dims, perm, y.data());
  } else if (IsFloatType(x.elem_type)) {
    ResizeForLargeWrite(&t.f64, static_cast<size_t>(n));
    TransposeInMemory(x.f64.data(), x.dims, perm, t.f64.data());
  } else {
    ResizeForLargeWrite(&t.ints, static_cast<size_t>(n));
    TransposeInMemory(x.ints.data(), x.dims, perm, t.ints.data());
  }
  return t;
}

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
}

}  // namespace verisub::runtime
