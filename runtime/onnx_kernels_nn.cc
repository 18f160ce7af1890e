// Neural-network ONNX kernels: Conv, pooling (MaxPool's indices and MaxUnpool too), MatMul, Gemm,
// Det, normalizations, Softmax, reductions, the classification losses.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
namespace {

// Spatial window geometry shared by Conv and the pools: pads from pads/auto_pad, output sizes
// with floor or ceil rounding.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, out;
};

Status MakeWindow(const KernelContext& ctx, const std::vector<int64_t>& in_spatial,
                  std::vector<int64_t> kernel, bool ceil_mode, Window* w) {
  size_t r = in_spatial.size();
  if (kernel.size() != r) return InvalidArgument(ctx.op_type() + ": kernel rank mismatch");
  w->kernel = kernel;
  w->strides = ctx.AttrInts("strides");
  if (w->strides.empty()) w->strides.assign(r, 1);
  w->dilations = ctx.AttrInts("dilations");
  if (w->dilations.empty()) w->dilations.assign(r, 1);
  std::vector<int64_t> pads = ctx.AttrInts("pads");
  if (pads.empty()) pads.assign(2 * r, 0);
  if (w->strides.size() != r || w->dilations.size() != r || pads.size() != 2 * r)
    return InvalidArgument(ctx.op_type() + ": strides, dilations or pads have the wrong length");
  std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  w->pad_begin.resize(r);
  w->pad_end.resize(r);
  w->out.resize(r);
  for (size_t d = 0; d < r; ++d) {
    // Bounds keep the window arithmetic below far from overflow on corrupt attributes.
    constexpr int64_t kMaxWindow = int64_t{1} << 24;
    if (w->strides[d] < 1 || w->dilations[d] < 1 || kernel[d] < 1 || w->strides[d] > kMaxWindow ||
        w->dilations[d] > kMaxWindow || kernel[d] > kMaxWindow || std::abs(pads[d]) > kMaxWindow ||
        std::abs(pads[d + r]) > kMaxWindow)
      return InvalidArgument(ctx.op_type() + ": stride, dilation, kernel or pad out of range");
    int64_t ek = (kernel[d] - 1) * w->dilations[d] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t o = (in_spatial[d] + w->strides[d] - 1) / w->strides[d];
      int64_t total = std::max<int64_t>(0, (o - 1) * w->strides[d] + ek - in_spatial[d]);
      int64_t small = total / 2;
      w->pad_begin[d] = auto_pad == "SAME_UPPER" ? small : total - small;
      w->pad_end[d] = total - w->pad_begin[d];
      w->out[d] = o;
      continue;
    }
    if (auto_pad == "VALID") {
      w->pad_begin[d] = w->pad_end[d] = 0;
    } else {
      w->pad_begin[d] = pads[d];
      w->pad_end[d] = pads[d + r];
    }
    int64_t span = in_spatial[d] + w->pad_begin[d] + w->pad_end[d] - ek;
    if (span < 0) return InvalidArgument(ctx.op_type() + ": window larger than padded input");
    w->out[d] = (ceil_mode ? (span + w->strides[d] - 1) / w->strides[d] : span / w->strides[d]) + 1;
    // A ceil-mode window must start inside the input or the leading padding.
    if (ceil_mode && (w->out[d] - 1) * w->strides[d] >= in_spatial[d] + w->pad_begin[d])
      --w->out[d];
  }
  return Status::Ok();
}

// Calls f(out_flat_spatial, in_positions) for every output position, with in-range input
// positions of its window listed as (flat input spatial offset, flat kernel offset).
template <typename F>
void ForEachWindow(const std::vector<int64_t>& in, const Window& w, F&& f) {
  size_t r = in.size();
  int64_t n_out = CountElements(w.out), n_k = CountElements(w.kernel);
  std::vector<int64_t> opos(r, 0), kpos(r);
  std::vector<std::pair<int64_t, int64_t>> taps;
  for (int64_t o = 0; o < n_out; ++o) {
    taps.clear();
    std::fill(kpos.begin(), kpos.end(), 0);
    int64_t total = 0;
    for (int64_t k = 0; k < n_k; ++k) {
      int64_t off = 0;
      bool inside = true, in_pad_region = true;
      for (size_t d = 0; d < r; ++d) {
        int64_t p = opos[d] * w.strides[d] - w.pad_begin[d] + kpos[d] * w.dilations[d];
        if (p < 0 || p >= in[d]) inside = false;
        if (p >= in[d] + w.pad_end[d]) in_pad_region = false;
        off = off * in[d] + p;
      }
      if (in_pad_region) ++total;
      if (inside) taps.push_back({off, k});
      for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
        if (++kpos[d] < w.kernel[d]) break;
        kpos[d] = 0;
      }
    }
    f(o, taps, total);
    for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
      if (++opos[d] < w.out[d]) break;
      opos[d] = 0;
    }
  }
}

std::vector<int64_t> Spatial(const std::vector<int64_t>& dims) {
  return {dims.begin() + 2, dims.end()};
}

Status Conv(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor &x = *ctx.input(0), &wt = *ctx.input(1);
  if (x.dims.size() < 3 || wt.dims.size() != x.dims.size())
    return InvalidArgument("Conv: input and weight ranks differ or are below 3");
  int64_t n = x.dims[0], c = x.dims[1], m = wt.dims[0], group = ctx.AttrInt("group", 1);
  if (group < 1 || c % group || m % group || wt.dims[1] != c / group)
    return InvalidArgument("Conv: channels do not match the groups");
  Window w;
  VERISUB_RETURN_IF_ERROR(MakeWindow(ctx, Spatial(x.dims), Spatial(wt.dims), false, &w));
  std::vector<double> xv = x.ToDoubles(), wv = wt.ToDoubles();
  std::vector<double> bias(m, 0.0);
  if (ctx.input(2)) bias = ctx.input(2)->ToDoubles();
  if (static_cast<int64_t>(bias.size()) != m) return InvalidArgument("Conv: bias size");
  int64_t in_sp = CountElements(Spatial(x.dims)), out_sp = CountElements(w.out);
  int64_t k_sp = CountElements(w.kernel), cg = c / group, mg = m / group;
  std::vector<int64_t> dims = {n, m};
  dims.insert(dims.end(), w.out.begin(), w.out.end());
  std::vector<double> y(CountElements(dims), 0.0);
  ForEachWindow(Spatial(x.dims), w, [&](int64_t o, const auto& taps, int64_t) {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t oc = 0; oc < m; ++oc) {
        int64_t g = oc / mg;
        double acc = bias[oc];
        for (int64_t ic = 0; ic < cg; ++ic) {
          const double* xp = xv.data() + (b * c + g * cg + ic) * in_sp;
          const double* wp = wv.data() + (oc * cg + ic) * k_sp;
          for (const auto& [xi, ki] : taps) acc += xp[xi] * wp[ki];
        }
        y[(b * m + oc) * out_sp + o] = acc;
      }
  });
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, y);
  return Status::Ok();
}

// The column-major offset of the position at row-major offset `off` in a tensor of `dims`.
int64_t ColumnMajorOffset(int64_t off, const std::vector<int64_t>& dims) {
  int64_t col = 0;
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    col = col * dims[d] + off % dims[d];  // Horner over the axes, the last outermost
    off /= dims[d];
  }
  return col;
}

// MaxPool's optional Indices output: where each maximum lies in the input, flattened over the
// whole tensor, row-major (storage_order 0) or with the spatial axes column-major (1); the first
// of equal maxima.
template <bool kMax>
Status Pool(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  if (x.dims.size() < 3) return InvalidArgument(ctx.op_type() + ": rank below 3");
  const bool indices = kMax && out->size() > 1;
  const bool column_major = ctx.AttrInt("storage_order", 0) != 0;
  Window w;
  VERISUB_RETURN_IF_ERROR(MakeWindow(ctx, Spatial(x.dims), ctx.AttrInts("kernel_shape"),
                                     ctx.AttrInt("ceil_mode", 0) != 0, &w));
  bool include_pad = ctx.AttrInt("count_include_pad", 0) != 0;
  std::vector<double> xv = x.ToDoubles();
  int64_t nc = x.dims[0] * x.dims[1];
  const std::vector<int64_t> in_spatial = Spatial(x.dims);
  int64_t in_sp = CountElements(in_spatial), out_sp = CountElements(w.out);
  std::vector<int64_t> dims = {x.dims[0], x.dims[1]};
  dims.insert(dims.end(), w.out.begin(), w.out.end());
  std::vector<double> y(CountElements(dims));
  std::vector<int64_t> where(indices ? y.size() : 0);
  ForEachWindow(in_spatial, w, [&](int64_t o, const auto& taps, int64_t total) {
    for (int64_t b = 0; b < nc; ++b) {
      const double* xp = xv.data() + b * in_sp;
      double acc = kMax ? -std::numeric_limits<double>::infinity() : 0.0;
      int64_t at = taps.empty() ? 0 : taps.front().first;
      for (const auto& [xi, ki] : taps) {
        if (kMax) {
          if (xp[xi] > acc) acc = xp[xi], at = xi;
        } else {
          acc += xp[xi];
        }
      }
      if (!kMax) acc /= static_cast<double>(include_pad ? total : taps.size());
      y[b * out_sp + o] = acc;
      if (indices) where[b * out_sp + o] = b * in_sp + at;
    }
  });
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, y);
  if (indices) {
    if (column_major)
      for (int64_t& f : where) f = f / in_sp * in_sp + ColumnMajorOffset(f % in_sp, in_spatial);
    (*out)[1] = HostTensor::FromInts(kInt64, dims, where);
  }
  return Status::Ok();
}

template <bool kMax>
Status GlobalPool(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  if (x.dims.size() < 2) return InvalidArgument(ctx.op_type() + ": rank below 2");
  int64_t nc = x.dims[0] * x.dims[1], sp = CountElements(Spatial(x.dims));
  std::vector<double> xv = x.ToDoubles(), y(nc);
  for (int64_t b = 0; b < nc; ++b) {
    double acc = kMax ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < sp; ++i)
      acc = kMax ? std::max(acc, xv[b * sp + i]) : acc + xv[b * sp + i];
    y[b] = kMax ? acc : acc / static_cast<double>(sp);
  }
  std::vector<int64_t> dims(x.dims.size(), 1);
  dims[0] = x.dims[0];
  dims[1] = x.dims[1];
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, y);
  return Status::Ok();
}

// Numpy matmul: 1-D operands are promoted and the added dimension removed afterwards.
StatusOr<HostTensor> MatMulTensors(const HostTensor& a0, const HostTensor& b0) {
  std::vector<int64_t> ad = a0.dims, bd = b0.dims;
  if (ad.empty() || bd.empty()) return InvalidArgument("MatMul: scalar operand");
  bool a1 = ad.size() == 1, b1 = bd.size() == 1;
  if (a1) ad.insert(ad.begin(), 1);
  if (b1) bd.push_back(1);
  int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  if (bd[bd.size() - 2] != k) return InvalidArgument("MatMul: inner dimensions differ");
  std::vector<int64_t> abatch(ad.begin(), ad.end() - 2), bbatch(bd.begin(), bd.end() - 2);
  VERISUB_ASSIGN_OR_RETURN(std::vector<int64_t> batch, BroadcastDims(abatch, bbatch));
  std::vector<int64_t> ia = BroadcastIndex(batch, abatch), ib = BroadcastIndex(batch, bbatch);
  std::vector<double> av = a0.ToDoubles(), bv = b0.ToDoubles();
  std::vector<double> y(ia.size() * m * n, 0.0);
  for (size_t t = 0; t < ia.size(); ++t) {
    const double* ap = av.data() + ia[t] * m * k;
    const double* bp = bv.data() + ib[t] * k * n;
    double* yp = y.data() + t * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t l = 0; l < k; ++l) {
        double s = ap[i * k + l];
        for (int64_t j = 0; j < n; ++j) yp[i * n + j] += s * bp[l * n + j];
      }
  }
  std::vector<int64_t> dims = batch;
  if (!a1) dims.push_back(m);
  if (!b1) dims.push_back(n);
  return HostTensor::FromDoubles(a0.elem_type, dims, y);
}

Status MatMul(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  VERISUB_ASSIGN_OR_RETURN((*out)[0], MatMulTensors(*ctx.input(0), *ctx.input(1)));
  return Status::Ok();
}

Status Gemm(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor &a = *ctx.input(0), &b = *ctx.input(1);
  if (a.dims.size() != 2 || b.dims.size() != 2) return InvalidArgument("Gemm: operands not 2-D");
  bool ta = ctx.AttrInt("transA", 0), tb = ctx.AttrInt("transB", 0);
  double alpha = ctx.AttrFloat("alpha", 1.0f), beta = ctx.AttrFloat("beta", 1.0f);
  int64_t m = ta ? a.dims[1] : a.dims[0], k = ta ? a.dims[0] : a.dims[1];
  int64_t kb = tb ? b.dims[1] : b.dims[0], n = tb ? b.dims[0] : b.dims[1];
  if (k != kb) return InvalidArgument("Gemm: inner dimensions differ");
  std::vector<double> av = a.ToDoubles(), bv = b.ToDoubles(), y(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l)
        s += av[ta ? l * m + i : i * k + l] * bv[tb ? j * k + l : l * n + j];
      y[i * n + j] = alpha * s;
    }
  if (const HostTensor* c = ctx.input(2)) {
    VERISUB_ASSIGN_OR_RETURN(std::vector<int64_t> bd, BroadcastDims({m, n}, c->dims));
    if (bd != std::vector<int64_t>{m, n}) return InvalidArgument("Gemm: C does not broadcast");
    std::vector<int64_t> ic = BroadcastIndex({m, n}, c->dims);
    std::vector<double> cv = c->ToDoubles();
    for (int64_t i = 0; i < m * n; ++i) y[i] += beta * cv[ic[i]];
  }
  (*out)[0] = HostTensor::FromDoubles(a.elem_type, {m, n}, y);
  return Status::Ok();
}

Status BatchNorm(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 5));
  if (ctx.AttrInt("training_mode", 0) != 0 || out->size() > 1)
    return Unimplemented("BatchNormalization in training mode");
  const HostTensor& x = *ctx.input(0);
  if (x.dims.size() < 2) return InvalidArgument("BatchNormalization: rank below 2");
  double eps = ctx.AttrFloat("epsilon", 1e-5f);
  std::vector<double> xv = x.ToDoubles(), sc = ctx.input(1)->ToDoubles(),
                      bi = ctx.input(2)->ToDoubles(), mean = ctx.input(3)->ToDoubles(),
                      var = ctx.input(4)->ToDoubles();
  int64_t c = x.dims[1], inner = CountElements(Spatial(x.dims));
  for (auto* v : {&sc, &bi, &mean, &var})
    if (static_cast<int64_t>(v->size()) != c)
      return InvalidArgument("BatchNormalization: parameter size differs from channels");
  for (int64_t b = 0; b < x.dims[0]; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      double k = sc[ch] / std::sqrt(var[ch] + eps);
      for (int64_t i = 0; i < inner; ++i) {
        double& e = xv[(b * c + ch) * inner + i];
        e = (e - mean[ch]) * k + bi[ch];
      }
    }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, x.dims, xv);
  return Status::Ok();
}

// LRN across channels: y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta,
// the window from c - floor((size - 1) / 2) to c + ceil((size - 1) / 2).
Status Lrn(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  if (x.dims.size() < 3) return InvalidArgument("LRN: rank below 3");
  const int64_t size = ctx.AttrInt("size", 0);
  if (size < 1) return InvalidArgument("LRN: size must be positive");
  const double alpha = ctx.AttrFloat("alpha", 1e-4f), beta = ctx.AttrFloat("beta", 0.75f),
               bias = ctx.AttrFloat("bias", 1.0f);
  const int64_t n = x.dims[0], c = x.dims[1], sp = CountElements(Spatial(x.dims));
  const int64_t below = (size - 1) / 2, above = size - 1 - below;
  const std::vector<double> v = x.ToDoubles();
  std::vector<double> y(v.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < sp; ++i) {
        double sum = 0;
        for (int64_t k = std::max<int64_t>(0, ch - below); k <= std::min(c - 1, ch + above); ++k) {
          const double e = v[(b * c + k) * sp + i];
          sum += e * e;
        }
        const int64_t f = (b * c + ch) * sp + i;
        y[f] = v[f] / std::pow(bias + alpha / static_cast<double>(size) * sum, beta);
      }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, x.dims, y);
  return Status::Ok();
}

Status InstanceNorm(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 3));
  const HostTensor& x = *ctx.input(0);
  if (x.dims.size() < 3) return InvalidArgument("InstanceNormalization: rank below 3");
  double eps = ctx.AttrFloat("epsilon", 1e-5f);
  std::vector<double> xv = x.ToDoubles(), sc = ctx.input(1)->ToDoubles(),
                      bi = ctx.input(2)->ToDoubles();
  int64_t c = x.dims[1], inner = CountElements(Spatial(x.dims));
  if (static_cast<int64_t>(sc.size()) != c || static_cast<int64_t>(bi.size()) != c)
    return InvalidArgument("InstanceNormalization: parameter size differs from channels");
  for (int64_t b = 0; b < x.dims[0]; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      double* p = xv.data() + (b * c + ch) * inner;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < inner; ++i) mean += p[i];
      mean /= inner;
      for (int64_t i = 0; i < inner; ++i) var += (p[i] - mean) * (p[i] - mean);
      var /= inner;
      for (int64_t i = 0; i < inner; ++i)
        p[i] = (p[i] - mean) / std::sqrt(var + eps) * sc[ch] + bi[ch];
    }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, x.dims, xv);
  return Status::Ok();
}

// Softmax family. Opset < 13 coerces the input to 2-D at `axis` (default 1); opset 13
// normalizes along one axis (default -1).
enum class SoftKind { kSoftmax, kLogSoftmax, kHardmax };

template <SoftKind K>
Status Softmax(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  int64_t r = static_cast<int64_t>(x.dims.size());
  bool legacy = ctx.opset() < 13;
  int64_t axis_attr = ctx.AttrInt("axis", legacy ? 1 : -1);
  if (r == 0) return InvalidArgument(ctx.op_type() + ": scalar input");
  VERISUB_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_attr, r, ctx.op_type()));
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t d = 0; d < r; ++d) {
    if (legacy) {
      (d < axis ? outer : len) *= x.dims[d];
    } else {
      (d < axis ? outer : d == axis ? len : inner) *= x.dims[d];
    }
  }
  std::vector<double> v = x.ToDoubles();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) -> double& { return v[(o * len + j) * inner + i]; };
      double mx = -std::numeric_limits<double>::infinity();
      int64_t arg = 0;
      for (int64_t j = 0; j < len; ++j)
        if (at(j) > mx) mx = at(j), arg = j;
      if (K == SoftKind::kHardmax) {
        for (int64_t j = 0; j < len; ++j) at(j) = j == arg ? 1.0 : 0.0;
        continue;
      }
      double sum = 0;
      for (int64_t j = 0; j < len; ++j) sum += std::exp(at(j) - mx);
      for (int64_t j = 0; j < len; ++j)
        at(j) = K == SoftKind::kSoftmax ? std::exp(at(j) - mx) / sum : at(j) - mx - std::log(sum);
    }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, x.dims, v);
  return Status::Ok();
}

Status LayerNorm(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  int64_t r = static_cast<int64_t>(x.dims.size());
  VERISUB_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.AttrInt("axis", -1), r, "LayerNormalization"));
  double eps = ctx.AttrFloat("epsilon", 1e-5f);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < r; ++d) (d < axis ? outer : inner) *= x.dims[d];
  std::vector<int64_t> norm_dims(x.dims.begin() + axis, x.dims.end());
  const HostTensor* scale = ctx.input(1);
  const HostTensor* bias = ctx.input(2);
  for (const HostTensor* t : {scale, bias}) {
    if (!t) continue;
    auto bd = BroadcastDims(norm_dims, t->dims);
    if (!bd.ok() || *bd != norm_dims)
      return InvalidArgument("LayerNormalization: scale or bias " + DimsToString(t->dims) +
                             " does not broadcast to " + DimsToString(norm_dims));
  }
  std::vector<int64_t> is = BroadcastIndex(norm_dims, scale->dims);
  std::vector<int64_t> ib = bias ? BroadcastIndex(norm_dims, bias->dims) : std::vector<int64_t>{};
  std::vector<double> v = x.ToDoubles(), sv = scale->ToDoubles();
  std::vector<double> bv = bias ? bias->ToDoubles() : std::vector<double>{};
  std::vector<double> means(outer), inv_std(outer);
  for (int64_t o = 0; o < outer; ++o) {
    double* p = v.data() + o * inner;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i) mean += p[i];
    mean /= inner;
    for (int64_t i = 0; i < inner; ++i) var += (p[i] - mean) * (p[i] - mean);
    var /= inner;
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i)
      p[i] = (p[i] - mean) * inv * sv[is[i]] + (bias ? bv[ib[i]] : 0.0);
    means[o] = mean;
    inv_std[o] = inv;
  }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, x.dims, v);
  std::vector<int64_t> stat_dims = x.dims;
  for (int64_t d = axis; d < r; ++d) stat_dims[d] = 1;
  int32_t stash = static_cast<int32_t>(ctx.AttrInt("stash_type", kFloat));
  if (out->size() > 1) (*out)[1] = HostTensor::FromDoubles(stash, stat_dims, means);
  if (out->size() > 2) (*out)[2] = HostTensor::FromDoubles(stash, stat_dims, inv_std);
  return Status::Ok();
}

enum class Red { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

template <Red R>
Status Reduce(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  int64_t r = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> axes = ctx.input(1) ? ctx.input(1)->ToInts() : ctx.AttrInts("axes");
  bool keep = ctx.AttrInt("keepdims", 1) != 0;
  std::vector<char> red(r, 0);
  if (axes.empty()) {
    if (ctx.AttrInt("noop_with_empty_axes", 0)) {
      (*out)[0] = x;
      return Status::Ok();
    }
    std::fill(red.begin(), red.end(), 1);
  }
  for (int64_t a : axes) {
    VERISUB_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis(a, r, ctx.op_type()));
    red[ax] = 1;
  }
  std::vector<int64_t> kept_dims(r);
  for (int64_t d = 0; d < r; ++d) kept_dims[d] = red[d] ? 1 : x.dims[d];
  int64_t n_out = CountElements(kept_dims);
  // Output index of every input element: broadcasting the kept shape back maps each input
  // element to its reduction group.
  std::vector<int64_t> group = BroadcastIndex(x.dims, kept_dims);
  bool int_type = IsIntegerType(x.elem_type);
  std::vector<double> v = x.ToDoubles();
  double init = R == Red::kMax    ? -std::numeric_limits<double>::infinity()
                : R == Red::kMin  ? std::numeric_limits<double>::infinity()
                : R == Red::kProd ? 1.0
                                  : 0.0;
  std::vector<double> acc(n_out, init);
  std::vector<double> mx(n_out, -std::numeric_limits<double>::infinity());
  if (R == Red::kLogSumExp)
    for (size_t i = 0; i < v.size(); ++i) mx[group[i]] = std::max(mx[group[i]], v[i]);
  for (size_t i = 0; i < v.size(); ++i) {
    double& a = acc[group[i]];
    double e = v[i];
    switch (R) {
      case Red::kSum:
      case Red::kMean:
      case Red::kLogSum:
        a += e;
        break;
      case Red::kMax:
        a = std::max(a, e);
        break;
      case Red::kMin:
        a = std::min(a, e);
        break;
      case Red::kProd:
        a *= e;
        break;
      case Red::kSumSquare:
      case Red::kL2:
        a += e * e;
        break;
      case Red::kL1:
        a += std::fabs(e);
        break;
      case Red::kLogSumExp:
        a += std::exp(e - mx[group[i]]);
        break;
    }
  }
  int64_t count = n_out ? static_cast<int64_t>(v.size()) / n_out : 0;
  for (int64_t i = 0; i < n_out; ++i) {
    if (R == Red::kMean) acc[i] /= static_cast<double>(count);
    if (R == Red::kL2) acc[i] = std::sqrt(acc[i]);
    if (R == Red::kLogSum) acc[i] = std::log(acc[i]);
    if (R == Red::kLogSumExp) acc[i] = std::log(acc[i]) + mx[i];
    if (int_type && R == Red::kMean) acc[i] = std::trunc(acc[i]);
  }
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < r; ++d)
    if (keep || !red[d]) dims.push_back(kept_dims[d]);
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, acc);
  return Status::Ok();
}

// LpNormalization: x divided by its L1 or L2 norm along `axis` (a zero norm leaves zeros).
Status LpNormalization(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  const int64_t r = static_cast<int64_t>(x.dims.size());
  VERISUB_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.AttrInt("axis", -1), r, "LpNormalization"));
  const int64_t p = ctx.AttrInt("p", 2);
  if (p != 1 && p != 2) return InvalidArgument("LpNormalization: p must be 1 or 2");
  int64_t outer = 1, len = x.dims[axis], inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= x.dims[d];
  std::vector<double> v = x.ToDoubles();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double norm = 0;
      for (int64_t j = 0; j < len; ++j) {
        const double e = v[(o * len + j) * inner + i];
        norm += p == 1 ? std::fabs(e) : e * e;
      }
      if (p == 2) norm = std::sqrt(norm);
      if (norm == 0) continue;
      for (int64_t j = 0; j < len; ++j) v[(o * len + j) * inner + i] /= norm;
    }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, x.dims, v);
  return Status::Ok();
}

// MeanVarianceNormalization: (x - mean) / sqrt(variance + 1e-9) over `axes` (default 0, 2, 3).
Status MeanVarianceNormalization(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  const int64_t r = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> axes =
      ctx.FindAttr("axes") ? ctx.AttrInts("axes") : std::vector<int64_t>{0, 2, 3};
  std::vector<char> reduced(r, 0);
  for (int64_t a : axes) {
    VERISUB_ASSIGN_OR_RETURN(int64_t d, NormalizeAxis(a, r, "MeanVarianceNormalization"));
    reduced[d] = 1;
  }
  // The group of each element: its index in the shape with the reduced axes kept as 1.
  const std::vector<double> v = x.ToDoubles();
  std::vector<int64_t> kept_dims = x.dims;
  for (int64_t d = 0; d < r; ++d)
    if (reduced[d]) kept_dims[d] = 1;
  const std::vector<int64_t> group = BroadcastIndex(x.dims, kept_dims);
  const int64_t groups = CountElements(kept_dims);
  std::vector<double> mean(groups, 0), var(groups, 0);
  const double count = groups ? static_cast<double>(v.size()) / static_cast<double>(groups) : 1;
  for (size_t i = 0; i < v.size(); ++i) mean[group[i]] += v[i] / count;
  for (size_t i = 0; i < v.size(); ++i)
    var[group[i]] += (v[i] - mean[group[i]]) * (v[i] - mean[group[i]]) / count;
  std::vector<double> y(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    y[i] = (v[i] - mean[group[i]]) / std::sqrt(var[group[i]] + 1e-9);
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, x.dims, y);
  return Status::Ok();
}

template <bool kMax>
Status ArgExtreme(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  int64_t r = static_cast<int64_t>(x.dims.size());
  VERISUB_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.AttrInt("axis", 0), r, ctx.op_type()));
  bool keep = ctx.AttrInt("keepdims", 1) != 0, last = ctx.AttrInt("select_last_index", 0) != 0;
  int64_t outer = 1, len = x.dims[axis], inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= x.dims[d];
  std::vector<double> v = x.ToDoubles();
  std::vector<int64_t> res(outer * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < len; ++j) {
        double a = v[(o * len + j) * inner + i], b = v[(o * len + best) * inner + i];
        bool better = kMax ? (last ? a >= b : a > b) : (last ? a <= b : a < b);
        if (better) best = j;
      }
      res[o * inner + i] = best;
    }
  std::vector<int64_t> dims = x.dims;
  if (keep) {
    dims[axis] = 1;
  } else {
    dims.erase(dims.begin() + axis);
  }
  (*out)[0] = HostTensor::FromInts(kInt64, dims, res);
  return Status::Ok();
}

// MaxUnpool: the values of a max pool put back at the input positions its indices name (flat
// over the whole output, as MaxPool's Indices output gives them), zeros elsewhere; the output
// shape from output_shape when given, else the pool's input shape from kernel_shape, strides and
// pads.
Status MaxUnpool(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor &x = *ctx.input(0), &where = *ctx.input(1);
  if (x.dims.size() < 3) return InvalidArgument("MaxUnpool: input of rank below 3");
  if (where.dims != x.dims)
    return InvalidArgument("MaxUnpool: indices of shape " + DimsToString(where.dims) +
                           " for an input of shape " + DimsToString(x.dims));
  const size_t r = x.dims.size() - 2;
  std::vector<int64_t> dims;
  if (const HostTensor* shape = ctx.input(2)) {
    dims = shape->ToInts();
    if (dims.size() != x.dims.size())
      return InvalidArgument("MaxUnpool: output_shape " + DimsToString(dims) + " of rank " +
                             std::to_string(dims.size()) + " for an input of rank " +
                             std::to_string(x.dims.size()));
  } else {
    const std::vector<int64_t> kernel = ctx.AttrInts("kernel_shape");
    std::vector<int64_t> strides = ctx.AttrInts("strides"), pads = ctx.AttrInts("pads");
    if (strides.empty()) strides.assign(r, 1);
    if (pads.empty()) pads.assign(2 * r, 0);
    if (kernel.size() != r || strides.size() != r || pads.size() != 2 * r)
      return InvalidArgument("MaxUnpool: kernel_shape, strides or pads of the wrong length");
    dims = {x.dims[0], x.dims[1]};
    for (size_t d = 0; d < r; ++d) {
      constexpr int64_t kMaxWindow = int64_t{1} << 24;
      if (kernel[d] < 1 || strides[d] < 1 || kernel[d] > kMaxWindow || strides[d] > kMaxWindow ||
          std::abs(pads[d]) > kMaxWindow || std::abs(pads[d + r]) > kMaxWindow)
        return InvalidArgument("MaxUnpool: kernel, stride or pad out of range");
      dims.push_back((x.dims[d + 2] - 1) * strides[d] - pads[d] - pads[d + r] + kernel[d]);
    }
  }
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "MaxUnpool output"));
  const int64_t total = CountElements(dims);
  const std::vector<double> v = x.ToDoubles();
  std::vector<double> y(static_cast<size_t>(total), 0.0);
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    const int64_t at = where.IntAt(i);
    if (at < 0 || at >= total)
      return InvalidArgument("MaxUnpool: index " + std::to_string(at) + " outside an output of " +
                             std::to_string(total) + " elements " + DimsToString(dims));
    y[at] = v[i];
  }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, y);
  return Status::Ok();
}

// Det: the determinant of each square matrix in the last two axes, by LU decomposition with
// partial pivoting in double.
Status Det(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  const size_t rank = x.dims.size();
  if (rank < 2 || x.dims[rank - 1] != x.dims[rank - 2])
    return InvalidArgument("Det: input of shape " + DimsToString(x.dims) +
                           " is not a stack of square matrices");
  const int64_t m = x.dims.back();
  const std::vector<int64_t> dims(x.dims.begin(), x.dims.end() - 2);
  const int64_t count = CountElements(dims);
  const std::vector<double> v = x.ToDoubles();
  std::vector<double> det(static_cast<size_t>(count), 1.0), a(static_cast<size_t>(m * m));
  for (int64_t b = 0; b < count; ++b) {
    std::copy(v.begin() + b * m * m, v.begin() + (b + 1) * m * m, a.begin());
    double d = 1;
    for (int64_t k = 0; k < m && d != 0; ++k) {
      int64_t p = k;
      for (int64_t i = k + 1; i < m; ++i)
        if (std::abs(a[i * m + k]) > std::abs(a[p * m + k])) p = i;
      if (a[p * m + k] == 0) {
        d = 0;
        break;
      }
      if (p != k) {
        std::swap_ranges(a.begin() + k * m, a.begin() + (k + 1) * m, a.begin() + p * m);
        d = -d;
      }
      d *= a[k * m + k];
      for (int64_t i = k + 1; i < m; ++i) {
        const double f = a[i * m + k] / a[k * m + k];
        for (int64_t j = k; j < m; ++j) a[i * m + j] -= f * a[k * m + j];
      }
    }
    det[b] = d;
  }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, det);
  return Status::Ok();
}

// The negative log-likelihood of class scores x [N, C, d...] (log-probabilities) at the target
// classes t [N, d...]: -x[n, t, d...] times weight[t] (1 without weights), 0 where t equals
// ignore_index; per element (reduction none), summed, or averaged over the weights of the
// targets not ignored (mean). NegativeLogLikelihoodLoss, and SoftmaxCrossEntropyLoss over the
// log-softmax of its scores.
Status NllLoss(const KernelContext& ctx, const std::vector<double>& x,
               const std::vector<int64_t>& x_dims, int32_t type, std::vector<HostTensor>* out) {
  const HostTensor& target = *ctx.input(1);
  const HostTensor* weight = ctx.input(2);
  const std::string what = ctx.op_type();
  if (x_dims.size() < 2)
    return InvalidArgument(what + ": scores " + DimsToString(x_dims) + " must be [N, C, ...]");
  std::vector<int64_t> t_dims = x_dims;
  t_dims.erase(t_dims.begin() + 1);
  if (target.dims != t_dims)
    return InvalidArgument(what + ": target of shape " + DimsToString(target.dims) +
                           " for scores of shape " + DimsToString(x_dims) + " (wants " +
                           DimsToString(t_dims) + ")");
  const int64_t n = x_dims[0], c = x_dims[1];
  if (weight && weight->dims != std::vector<int64_t>{c})
    return InvalidArgument(what + ": weight of shape " + DimsToString(weight->dims) + " for " +
                           std::to_string(c) + " classes");
  const std::string reduction = ctx.AttrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return InvalidArgument(what + ": reduction '" + reduction + "' (none, sum or mean)");
  const onnx::AttributeProto* ignore_attr = ctx.FindAttr("ignore_index");
  const int64_t ignore = ctx.AttrInt("ignore_index", 0);
  const std::vector<double> w = weight ? weight->ToDoubles() : std::vector<double>();
  int64_t inner = 1;
  for (size_t d = 2; d < x_dims.size(); ++d) inner *= x_dims[d];
  std::vector<double> loss(static_cast<size_t>(n * inner));
  double sum = 0, weights = 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t t = target.IntAt(b * inner + i);
      if (ignore_attr && t == ignore) continue;  // loss 0, weight 0
      if (t < 0 || t >= c)
        return InvalidArgument(what + ": target " + std::to_string(t) + " outside [0, " +
                               std::to_string(c) + ")");
      const double wt = weight ? w[t] : 1.0;
      loss[b * inner + i] = -x[(b * c + t) * inner + i] * wt;
      sum += loss[b * inner + i];
      weights += wt;
    }
  if (reduction == "none") {
    (*out)[0] = HostTensor::FromDoubles(type, t_dims, loss);
  } else {
    (*out)[0] = HostTensor::FromDoubles(type, {}, {reduction == "sum" ? sum : sum / weights});
  }
  return Status::Ok();
}

Status NegativeLogLikelihoodLoss(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  return NllLoss(ctx, x.ToDoubles(), x.dims, x.elem_type, out);
}

Status SoftmaxCrossEntropyLoss(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  if (x.dims.size() < 2)
    return InvalidArgument("SoftmaxCrossEntropyLoss: scores " + DimsToString(x.dims) +
                           " must be [N, C, ...]");
  const int64_t n = x.dims[0], c = x.dims[1];
  int64_t inner = 1;
  for (size_t d = 2; d < x.dims.size(); ++d) inner *= x.dims[d];
  std::vector<double> v = x.ToDoubles();  // becomes the log-softmax over axis 1
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < inner; ++i) {
      double top = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t k = 0; k < c; ++k) top = std::max(top, v[(b * c + k) * inner + i]);
      for (int64_t k = 0; k < c; ++k) sum += std::exp(v[(b * c + k) * inner + i] - top);
      const double log_sum = top + std::log(sum);
      for (int64_t k = 0; k < c; ++k) v[(b * c + k) * inner + i] -= log_sum;
    }
  VERISUB_RETURN_IF_ERROR(NllLoss(ctx, v, x.dims, x.elem_type, out));
  if (out->size() > 1) (*out)[1] = HostTensor::FromDoubles(x.elem_type, x.dims, v);
  return Status::Ok();
}

}  // namespace

void AddNnKernels(KernelTable* t) {
  auto& k = *t;
  k["Conv"] = Conv;
  k["MaxPool"] = Pool<true>;
  k["MaxUnpool"] = MaxUnpool;
  k["Det"] = Det;
  k["NegativeLogLikelihoodLoss"] = NegativeLogLikelihoodLoss;
  k["SoftmaxCrossEntropyLoss"] = SoftmaxCrossEntropyLoss;
  k["AveragePool"] = Pool<false>;
  k["GlobalAveragePool"] = GlobalPool<false>;
  k["GlobalMaxPool"] = GlobalPool<true>;
  k["MatMul"] = MatMul;
  k["Gemm"] = Gemm;
  k["BatchNormalization"] = BatchNorm;
  k["InstanceNormalization"] = InstanceNorm;
  k["LRN"] = Lrn;
  k["Softmax"] = Softmax<SoftKind::kSoftmax>;
  k["LogSoftmax"] = Softmax<SoftKind::kLogSoftmax>;
  k["Hardmax"] = Softmax<SoftKind::kHardmax>;
  k["LayerNormalization"] = LayerNorm;
  k["ReduceSum"] = Reduce<Red::kSum>;
  k["ReduceMean"] = Reduce<Red::kMean>;
  k["ReduceMax"] = Reduce<Red::kMax>;
  k["ReduceMin"] = Reduce<Red::kMin>;
  k["ReduceProd"] = Reduce<Red::kProd>;
  k["ReduceSumSquare"] = Reduce<Red::kSumSquare>;
  k["ReduceL1"] = Reduce<Red::kL1>;
  k["ReduceL2"] = Reduce<Red::kL2>;
  k["ReduceLogSum"] = Reduce<Red::kLogSum>;
  k["ReduceLogSumExp"] = Reduce<Red::kLogSumExp>;
  k["LpNormalization"] = LpNormalization;
  k["MeanVarianceNormalization"] = MeanVarianceNormalization;
  k["ArgMax"] = ArgExtreme<true>;
  k["ArgMin"] = ArgExtreme<false>;
}

}  // namespace verisub::runtime
