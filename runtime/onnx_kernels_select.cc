// Selection and quantization kernels of detection heads and quantized exports: TopK, GatherND,
// Unique, QuantizeLinear and DequantizeLinear (per tensor or per axis).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
namespace {

// TopK: the k largest (or smallest) along an axis, values and int64 indices; equal values keep
// the lower index first, as the spec says.
Status TopK(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t k = 0;
  if (ctx.opset() < 10) {
    k = ctx.AttrInt("k", -1);
  } else {
    VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
    if (ctx.input(1)->NumElements() != 1) return InvalidArgument("TopK: K must hold one value");
    k = ctx.input(1)->IntAt(0);
  }
  VERISUB_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrInt("axis", -1), rank, "TopK"));
  const int64_t n = x.dims[axis];
  if (k < 0 || k > n)
    return InvalidArgument("TopK: K=" + std::to_string(k) + " outside [0, " + std::to_string(n) +
                           "] on axis " + std::to_string(axis));
  const bool largest = ctx.AttrInt("largest", 1) != 0;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dims[d];
  std::vector<int64_t> dims = x.dims;
  dims[axis] = k;
  const std::vector<double> v = x.ToDoubles();
  std::vector<int64_t> picked(static_cast<size_t>(outer * k * inner)),
      index(static_cast<size_t>(outer * k * inner));
  std::vector<int64_t> order(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return v[(o * n + j) * inner + i]; };
      std::iota(order.begin(), order.end(), 0);
      // NaN sorts as the largest value, as in ONNX's reference implementation; equal values by
      // index, which makes the order total: selecting the first k and sorting them gives what a
      // stable sort of all gives (a detector's top 1000 of 1.3 M scores: 48 -> 9 ms).
      auto before = [&](int64_t a, int64_t b) {
        const double va = at(a), vb = at(b);
        const bool na = std::isnan(va), nb = std::isnan(vb);
        if (na || nb) {
          if (na != nb) return largest ? na : nb;
          return a < b;
        }
        if (va != vb) return largest ? va > vb : va < vb;
        return a < b;
      };
      if (k < n) std::nth_element(order.begin(), order.begin() + k, order.end(), before);
      std::sort(order.begin(), order.begin() + k, before);
      for (int64_t j = 0; j < k; ++j) {
        const size_t dst = static_cast<size_t>((o * k + j) * inner + i);
        index[dst] = order[j];
        picked[dst] = (o * n + order[j]) * inner + i;
      }
    }
  (*out)[0] = x.Gather(dims, picked);
  if (out->size() > 1) (*out)[1] = HostTensor::FromInts(kInt64, dims, index);
  return Status::Ok();
}

// GatherND: slices of data addressed by the last axis of indices, after batch_dims shared
// leading axes.
Status GatherND(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor &data = *ctx.input(0), &idx = *ctx.input(1);
  const int64_t b = ctx.AttrInt("batch_dims", 0);
  const int64_t r = static_cast<int64_t>(data.dims.size()),
                q = static_cast<int64_t>(idx.dims.size());
  if (q < 1 || b < 0 || b >= std::min(r, q))
    return InvalidArgument("GatherND: batch_dims must be below both ranks");
  for (int64_t d = 0; d < b; ++d)
    if (data.dims[d] != idx.dims[d]) return InvalidArgument("GatherND: batch dimensions differ");
  const int64_t m = idx.dims[q - 1];
  if (m < 1 || m > r - b) return InvalidArgument("GatherND: the index tuples are too long");
  std::vector<int64_t> dims(idx.dims.begin(), idx.dims.end() - 1);
  dims.insert(dims.end(), data.dims.begin() + b + m, data.dims.end());
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "GatherND"));
  int64_t batches = 1, slice = 1;
  for (int64_t d = 0; d < b; ++d) batches *= data.dims[d];
  for (int64_t d = b + m; d < r; ++d) slice *= data.dims[d];
  const std::vector<int64_t> strides = RowMajorStrides(data.dims);
  const int64_t tuples = CountElements(idx.dims) / m / std::max<int64_t>(batches, 1);
  const std::vector<int64_t> iv = idx.ToInts();
  std::vector<int64_t> picked;
  picked.reserve(static_cast<size_t>(CountElements(dims)));
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t base = bi * (b > 0 ? strides[b - 1] : 0);
      for (int64_t j = 0; j < m; ++j) {
        int64_t i = iv[(bi * tuples + t) * m + j];
        const int64_t n = data.dims[b + j];
        if (i < -n || i >= n)
          return InvalidArgument("GatherND: index " + std::to_string(i) +
                                 " out of range for a "
                                 "dimension of " +
                                 std::to_string(n));
        if (i < 0) i += n;
        base += i * strides[b + j];
      }
      for (int64_t e = 0; e < slice; ++e) picked.push_back(base + e);
    }
  (*out)[0] = data.Gather(dims, picked);
  return Status::Ok();
}

// Unique: the distinct elements of the flattened input, or with `axis` its distinct slices along
// that axis, ascending (sorted=1; slices in lexicographic order of their elements) or in order
// of first occurrence (sorted=0); with the first occurrence of each, the position in the result
// of every input element (or slice), and the counts. NaNs equal one another and sort last, as in
// numpy's unique; unsigned 64-bit integers compare unsigned.
Status Unique(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t outer = 1, n = x.NumElements(), inner = 1;
  int64_t axis = -1;
  if (ctx.FindAttr("axis")) {
    VERISUB_ASSIGN_OR_RETURN(axis, NormalizeAxis(ctx.AttrInt("axis", 0), rank, "Unique"));
    n = x.dims[axis];
    for (int64_t d = 0; d < axis; ++d) outer *= x.dims[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dims[d];
  }
  // -1, 0 or 1 as element a of the input orders before, with or after element b.
  const bool floats = IsFloatType(x.elem_type);
  const std::vector<double> v = floats ? x.ToDoubles() : std::vector<double>();
  auto compare = [&](int64_t a, int64_t b) -> int {
    if (floats) {
      const bool na = std::isnan(v[a]), nb = std::isnan(v[b]);
      if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
      return v[a] < v[b] ? -1 : (v[b] < v[a] ? 1 : 0);
    }
    if (x.elem_type == kUint64) {
      const auto ua = static_cast<uint64_t>(x.ints[a]), ub = static_cast<uint64_t>(x.ints[b]);
      return ua < ub ? -1 : (ub < ua ? 1 : 0);
    }
    return x.ints[a] < x.ints[b] ? -1 : (x.ints[b] < x.ints[a] ? 1 : 0);
  };
  // Slice j is the elements (o * n + j) * inner + i, compared in that order.
  auto compare_slices = [&](int64_t a, int64_t b) -> int {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        if (int c = compare((o * n + a) * inner + i, (o * n + b) * inner + i)) return c;
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  // Stable: each run of equal slices starts with its first occurrence.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compare_slices(a, b) < 0; });
  std::vector<int64_t> first, counts, group_of(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    if (k == 0 || compare_slices(order[k - 1], order[k]) != 0) {
      first.push_back(order[k]);
      counts.push_back(0);
    }
    group_of[order[k]] = static_cast<int64_t>(first.size()) - 1;
    ++counts.back();
  }
  const int64_t u = static_cast<int64_t>(first.size());
  std::vector<int64_t> position(static_cast<size_t>(u));  // of each sorted group in the result
  std::iota(position.begin(), position.end(), 0);
  if (ctx.AttrInt("sorted", 1) == 0) {
    std::vector<int64_t> by_first(static_cast<size_t>(u));
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    std::vector<int64_t> f(static_cast<size_t>(u)), c(static_cast<size_t>(u));
    for (int64_t p = 0; p < u; ++p) {
      position[by_first[p]] = p;
      f[p] = first[by_first[p]];
      c[p] = counts[by_first[p]];
    }
    first = std::move(f);
    counts = std::move(c);
  }
  std::vector<int64_t> dims = {u};
  if (axis >= 0) {
    dims = x.dims;
    dims[axis] = u;
  }
  std::vector<int64_t> index;
  index.reserve(static_cast<size_t>(outer * u * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < u; ++p)
      for (int64_t i = 0; i < inner; ++i) index.push_back((o * n + first[p]) * inner + i);
  (*out)[0] = x.Gather(dims, index);
  std::vector<int64_t> inverse(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) inverse[j] = position[group_of[j]];
  if (out->size() > 1) (*out)[1] = HostTensor::FromInts(kInt64, {u}, first);
  if (out->size() > 2) (*out)[2] = HostTensor::FromInts(kInt64, {n}, inverse);
  if (out->size() > 3) (*out)[3] = HostTensor::FromInts(kInt64, {u}, counts);
  return Status::Ok();
}

// The scale and zero point of element f of a tensor of `dims`, per tensor or along `axis`.
struct Quantization {
  std::vector<double> scale;
  std::vector<int64_t> zero;
  int64_t axis = -1, inner = 1, channels = 1;
  int32_t zero_type = kUint8;
  int64_t Channel(int64_t f) const { return axis < 0 ? 0 : (f / inner) % channels; }
};

StatusOr<Quantization> QuantizationOf(const KernelContext& ctx, const std::vector<int64_t>& dims) {
  const std::string op = ctx.op_type();
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  Quantization q;
  q.scale = ctx.input(1)->ToDoubles();
  if (ctx.input(2)) {
    q.zero = ctx.input(2)->ToInts();
    q.zero_type = ctx.input(2)->elem_type;
  }
  if (q.zero.empty()) q.zero.assign(q.scale.size(), 0);
  if (q.zero.size() != q.scale.size())
    return InvalidArgument(op + ": scale and zero point differ in size");
  if (q.scale.size() > 1) {  // per axis (a one-element scale is per tensor)
    const int64_t rank = static_cast<int64_t>(dims.size());
    VERISUB_ASSIGN_OR_RETURN(q.axis, NormalizeAxis(ctx.AttrInt("axis", 1), rank, op + " axis"));
    q.channels = dims[q.axis];
    if (static_cast<int64_t>(q.scale.size()) != q.channels)
      return InvalidArgument(op + ": " + std::to_string(q.scale.size()) + " scales for " +
                             std::to_string(q.channels) + " channels on axis " +
                             std::to_string(q.axis));
    for (int64_t d = q.axis + 1; d < rank; ++d) q.inner *= dims[d];
  }
  return q;
}

Status QuantizeLinear(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  VERISUB_ASSIGN_OR_RETURN(Quantization q, QuantizationOf(ctx, x.dims));
  if (q.zero_type != kUint8 && q.zero_type != kInt8)
    return InvalidArgument("QuantizeLinear: output type " + ElemTypeName(q.zero_type) +
                           " (uint8 or int8)");
  const double lo = q.zero_type == kUint8 ? 0 : -128, hi = q.zero_type == kUint8 ? 255 : 127;
  const std::vector<double> v = x.ToDoubles();
  std::vector<int64_t> y(v.size());
  for (size_t f = 0; f < v.size(); ++f) {
    const int64_t c = q.Channel(static_cast<int64_t>(f));
    // Divided in float32 as ONNX Runtime and ONNX's reference do (a quotient on a tie of .5
    // rounds differently in double), rounded half to even, then saturated.
    const float quotient = static_cast<float>(v[f]) / static_cast<float>(q.scale[c]);
    const double r = std::nearbyint(static_cast<double>(quotient)) + static_cast<double>(q.zero[c]);
    y[f] = static_cast<int64_t>(std::clamp(r, lo, hi));
  }
  (*out)[0] = HostTensor::FromInts(q.zero_type, x.dims, y);
  return Status::Ok();
}

Status DequantizeLinear(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  VERISUB_ASSIGN_OR_RETURN(Quantization q, QuantizationOf(ctx, x.dims));
  const std::vector<int64_t> v = x.ToInts();
  std::vector<double> y(v.size());
  for (size_t f = 0; f < v.size(); ++f) {
    const int64_t c = q.Channel(static_cast<int64_t>(f));
    y[f] = static_cast<double>(v[f] - q.zero[c]) * q.scale[c];
  }
  (*out)[0] = HostTensor::FromDoubles(ctx.input(1)->elem_type, x.dims, y);
  return Status::Ok();
}

}  // namespace

void AddSelectKernels(KernelTable* t) {
  auto& k = *t;
  k["TopK"] = TopK;
  k["GatherND"] = GatherND;
  k["Unique"] = Unique;
  k["QuantizeLinear"] = QuantizeLinear;
  k["DequantizeLinear"] = DequantizeLinear;
}

}  // namespace verisub::runtime
