// Resize (opsets 10-19) and Upsample (7, 9): nearest, linear and cubic interpolation over any
// axes, every coordinate transformation mode of the spec, sizes or scales, the axes and
// keep_aspect_ratio_policy of opset 18. Separable: each axis is interpolated in turn, every output
// index of an axis reading a few taps (index, weight) of its input.
#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
namespace {

// Rounds `x` to an integer as nearest_mode says.
int64_t RoundNearest(double x, const std::string& mode) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(x));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  const double f = std::floor(x);
  if (x - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

// The cubic convolution weights of the four taps around a point `t` past the second one.
std::array<double, 4> CubicWeights(double t, double a) {
  auto near = [a](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };       // |x| <= 1
  auto far = [a](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };  // 1 < |x| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

}  // namespace

StatusOr<ResizePlan> PlanResize(const KernelContext& ctx, const std::vector<int64_t>& in_dims) {
  ResizePlan p;
  const std::string op = ctx.op_type();
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  const bool legacy = op == "Upsample" || ctx.opset() < 11;  // Upsample and Resize-10
  p.mode = ctx.AttrString("mode", "nearest");
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic" &&
      !(legacy && p.mode == "bilinear"))
    return InvalidArgument(op + ": mode '" + p.mode + "' (nearest, linear or cubic)");
  if (p.mode == "bilinear") p.mode = "linear";
  p.coordinate_mode =
      legacy ? "asymmetric" : ctx.AttrString("coordinate_transformation_mode", "half_pixel");
  p.nearest_mode = legacy ? "floor" : ctx.AttrString("nearest_mode", "round_prefer_floor");
  const double cubic_a = ctx.AttrFloat("cubic_coeff_a", -0.75f);
  const bool exclude_outside = ctx.AttrInt("exclude_outside", 0) != 0;
  p.extrapolation = ctx.AttrFloat("extrapolation_value", 0.0f);
  if (ctx.AttrInt("antialias", 0) != 0)
    return InvalidArgument(op + ": antialias=1 is not supported");
  static constexpr std::array<std::string_view, 7> kModes = {
      "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (std::find(kModes.begin(), kModes.end(), p.coordinate_mode) == kModes.end())
    return InvalidArgument(op + ": coordinate_transformation_mode '" + p.coordinate_mode + "'");
  if (p.nearest_mode != "round_prefer_floor" && p.nearest_mode != "round_prefer_ceil" &&
      p.nearest_mode != "floor" && p.nearest_mode != "ceil")
    return InvalidArgument(op + ": nearest_mode '" + p.nearest_mode + "'");

  // The axes the scales or sizes name (opset 18), every axis before.
  std::vector<int64_t> axes;
  if (!legacy && ctx.opset() >= 18 && ctx.FindAttr("axes")) {
    for (int64_t a : ctx.AttrInts("axes")) {
      VERISUB_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, rank, op + " axes"));
      if (std::find(axes.begin(), axes.end(), axis) != axes.end())
        return InvalidArgument(op + ": axis " + std::to_string(a) + " named twice");
      axes.push_back(axis);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const int64_t k = static_cast<int64_t>(axes.size());
  // Scales: the attribute (Upsample-7), input 1 (Upsample-9, Resize-10) or input 2.
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  const HostTensor* roi_t = legacy ? nullptr : ctx.input(1);
  const HostTensor* scales_t = legacy ? ctx.input(1) : ctx.input(2);
  const HostTensor* sizes_t = legacy ? nullptr : ctx.input(3);
  if (op == "Upsample" && ctx.opset() < 9) {
    for (float s : ctx.AttrFloats("scales")) scales.push_back(s);
  } else if (scales_t && scales_t->NumElements() > 0) {
    scales = scales_t->ToDoubles();
  }
  if (sizes_t && sizes_t->NumElements() > 0) sizes = sizes_t->ToInts();
  if (scales.empty() == sizes.empty())
    return InvalidArgument(op + ": exactly one of scales and sizes must be given");
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != k)
    return InvalidArgument(op + ": " + std::to_string(scales.size()) + " scales for " +
                           std::to_string(k) + " axes");
  if (!sizes.empty() && static_cast<int64_t>(sizes.size()) != k)
    return InvalidArgument(op + ": " + std::to_string(sizes.size()) + " sizes for " +
                           std::to_string(k) + " axes");
  std::vector<double> roi(2 * rank, 0.0);
  for (int64_t d = 0; d < rank; ++d) roi[rank + d] = 1.0;
  if (p.coordinate_mode == "tf_crop_and_resize") {
    if (!roi_t || roi_t->NumElements() != 2 * k)
      return InvalidArgument(op + ": tf_crop_and_resize needs a roi of 2 x " + std::to_string(k) +
                             " values");
    std::vector<double> r = roi_t->ToDoubles();
    for (int64_t i = 0; i < k; ++i) {
      roi[axes[i]] = r[i];
      roi[rank + axes[i]] = r[k + i];
    }
  }
  p.out_dims = in_dims;
  p.scales.assign(rank, 1.0);
  if (!sizes.empty()) {
    const std::string policy = ctx.AttrString("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
      return InvalidArgument(op + ": keep_aspect_ratio_policy '" + policy + "'");
    for (int64_t i = 0; i < k; ++i) {
      if (sizes[i] < 0) return InvalidArgument(op + ": a negative size");
      if (in_dims[axes[i]] <= 0) return InvalidArgument(op + ": an empty input axis");
    }
    if (policy == "stretch") {
      for (int64_t i = 0; i < k; ++i) {
        p.out_dims[axes[i]] = sizes[i];
        p.scales[axes[i]] = static_cast<double>(sizes[i]) / static_cast<double>(in_dims[axes[i]]);
      }
    } else {
      double s = policy == "not_larger" ? 1e300 : 0;
      for (int64_t i = 0; i < k; ++i) {
        const double r = static_cast<double>(sizes[i]) / static_cast<double>(in_dims[axes[i]]);
        s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
      }
      for (int64_t i = 0; i < k; ++i) {
        p.scales[axes[i]] = s;
        p.out_dims[axes[i]] =
            static_cast<int64_t>(std::round(s * static_cast<double>(in_dims[axes[i]])));
      }
    }
  } else {
    for (int64_t i = 0; i < k; ++i) {
      if (!(scales[i] > 0) || !std::isfinite(scales[i]))
        return InvalidArgument(op + ": scale " + std::to_string(scales[i]) + " must be positive");
      const int64_t d = axes[i];
      p.scales[d] = scales[i];
      const double extent = static_cast<double>(in_dims[d]) * (roi[rank + d] - roi[d]);
      const double out = std::floor(extent * scales[i]);
      if (out > 1e12) return InvalidArgument(op + ": the output is too large");
      p.out_dims[d] = static_cast<int64_t>(out);
    }
  }
  VERISUB_RETURN_IF_ERROR(CheckSize(p.out_dims, op));

  // The taps of every output index, axis by axis.
  p.taps.resize(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t in = in_dims[d], out = p.out_dims[d];
    const double scale = p.scales[d];
    // The spec's length_resized: the scaled input length, a fraction when scales are given
    // (0.6 x 4 = 2.4 for an output of 2), what align_corners divides by.
    const double resized = scale * static_cast<double>(in);
    auto& taps = p.taps[d];
    taps.resize(out);
    for (int64_t x = 0; x < out; ++x) {
      const double xr = static_cast<double>(x);
      double xo = 0;  // the output index in input coordinates
      const std::string& m = p.coordinate_mode;
      if (m == "half_pixel") {
        xo = (xr + 0.5) / scale - 0.5;
      } else if (m == "half_pixel_symmetric") {
        const double adjustment = static_cast<double>(out) / resized;
        const double center = static_cast<double>(in) / 2;
        xo = center * (1 - adjustment) + (xr + 0.5) / scale - 0.5;
      } else if (m == "pytorch_half_pixel") {
        // A resized length of 1 reads coordinate -0.5 (ONNX's reference implementation, which
        // made the spec's test data; its text says 0, the same for linear and nearest).
        xo = resized == 1 ? -0.5 : (xr + 0.5) / scale - 0.5;
      } else if (m == "align_corners") {
        xo = resized == 1 ? 0 : xr * static_cast<double>(in - 1) / (resized - 1);
      } else if (m == "asymmetric") {
        xo = xr / scale;
      } else if (m == "tf_half_pixel_for_nn") {
        xo = (xr + 0.5) / scale;
      } else {  // tf_crop_and_resize
        const double lo = roi[d], hi = roi[rank + d], span = static_cast<double>(in - 1);
        xo = out > 1 ? lo * span + xr * (hi - lo) * span / static_cast<double>(out - 1)
                     : 0.5 * (lo + hi) * span;
        if (xo < 0 || xo > span) {
          taps[x] = {{-1, 1.0}};  // the extrapolation value
          continue;
        }
      }
      auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
      if (p.mode == "nearest") {
        taps[x] = {{clamp(RoundNearest(xo, p.nearest_mode)), 1.0}};
      } else if (p.mode == "linear") {
        // Reads past either end take the edge value (the spec pads the input by its edges).
        const double f = std::floor(xo), t = xo - f;
        const int64_t i0 = static_cast<int64_t>(f);
        taps[x] = {{clamp(i0), 1 - t}, {clamp(i0 + 1), t}};
      } else {
        const double f = std::floor(xo);
        const int64_t i0 = static_cast<int64_t>(f);
        const std::array<double, 4> w = CubicWeights(xo - f, cubic_a);
        double sum = 0;
        std::vector<ResizePlan::Tap> t;
        for (int j = 0; j < 4; ++j) {
          const int64_t i = i0 - 1 + j;
          if (exclude_outside && (i < 0 || i >= in)) continue;
          t.push_back({clamp(i), w[j]});
          sum += w[j];
        }
        if (exclude_outside && sum != 0)
          for (auto& tap : t) tap.weight /= sum;
        taps[x] = std::move(t);
      }
    }
  }
  return p;
}

namespace {

// Interpolates `x` (row-major `dims`) along `axis` with `taps`; `dims[axis]` becomes the taps'
// count.
std::vector<double> InterpolateAxis(const std::vector<double>& x, std::vector<int64_t>* dims,
                                    int64_t axis,
                                    const std::vector<std::vector<ResizePlan::Tap>>& taps,
                                    double extrapolation) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= (*dims)[d];
  for (size_t d = axis + 1; d < dims->size(); ++d) inner *= (*dims)[d];
  const int64_t in = (*dims)[axis], out = static_cast<int64_t>(taps.size());
  std::vector<double> y(static_cast<size_t>(outer * out * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < out; ++j) {
      double* dst = &y[(o * out + j) * inner];
      if (taps[j].size() == 1 && taps[j][0].index < 0) {
        std::fill(dst, dst + inner, extrapolation);
        continue;
      }
      std::fill(dst, dst + inner, 0.0);
      for (const ResizePlan::Tap& t : taps[j]) {
        const double* src = &x[(o * in + t.index) * inner];
        for (int64_t i = 0; i < inner; ++i) dst[i] += t.weight * src[i];
      }
    }
  (*dims)[axis] = out;
  return y;
}

Status Resize(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  VERISUB_ASSIGN_OR_RETURN(ResizePlan p, PlanResize(ctx, x.dims));
  std::vector<double> v = x.ToDoubles();
  std::vector<int64_t> dims = x.dims;
  for (size_t d = 0; d < dims.size(); ++d) {
    bool identity = p.out_dims[d] == dims[d];
    for (int64_t j = 0; identity && j < p.out_dims[d]; ++j)
      identity =
          p.taps[d][j].size() == 1 && p.taps[d][j][0].index == j && p.taps[d][j][0].weight == 1.0;
    if (!identity)
      v = InterpolateAxis(v, &dims, static_cast<int64_t>(d), p.taps[d], p.extrapolation);
  }
  if (IsIntegerType(x.elem_type) && p.mode != "nearest")
    for (double& e : v) e = std::nearbyint(e);
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, v);
  return Status::Ok();
}

// GridSample (opset 16) of a 4-D input: each output pixel reads the input at the grid's (x, y),
// normalized to [-1, 1] over the width and height (the corner pixels' centres with
// align_corners, else their outer edges), interpolated bilinearly or from the nearest pixel
// (halves to even, as PyTorch rounds), or bicubically (A = -0.75); positions outside come from
// zeros, the border, or the input reflected at its edges. Spatial transformer networks,
// optical-flow warps, deformable sampling.
Status GridSample(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  const HostTensor& grid = *ctx.input(1);
  if (x.dims.size() != 4 || grid.dims.size() != 4 || grid.dims[3] != 2 || grid.dims[0] != x.dims[0])
    return InvalidArgument("GridSample: X must be [N,C,H,W] and grid [N,H_out,W_out,2]");
  const std::string mode = ctx.AttrString("mode", "bilinear");
  const std::string padding = ctx.AttrString("padding_mode", "zeros");
  const bool align = ctx.AttrInt("align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return InvalidArgument("GridSample: unknown mode '" + mode + "'");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return InvalidArgument("GridSample: unknown padding_mode '" + padding + "'");
  const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], w = x.dims[3];
  const int64_t ho = grid.dims[1], wo = grid.dims[2];
  const std::vector<int64_t> dims = {n, c, ho, wo};
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "GridSample"));
  const std::vector<double> xv = x.ToDoubles(), gv = grid.ToDoubles();
  // A normalized coordinate in pixels.
  auto unnormalize = [&](double g, int64_t size) {
    return align ? (g + 1) / 2 * static_cast<double>(size - 1)
                 : ((g + 1) * static_cast<double>(size) - 1) / 2;
  };
  // Reflects a coordinate into [lo, hi] (a mirror at each end, repeated).
  auto reflect = [](double v, double lo, double hi) {
    if (hi <= lo) return lo;
    const double span = hi - lo;
    double d = std::fabs(v - lo);
    const double flips = std::floor(d / span);
    d -= flips * span;
    return static_cast<int64_t>(flips) % 2 == 0 ? lo + d : hi - d;
  };
  // A coordinate after the padding mode (zeros keeps it: reads outside give 0).
  auto pad = [&](double v, int64_t size) {
    if (padding == "border") return std::clamp(v, 0.0, static_cast<double>(size - 1));
    if (padding == "reflection") {
      v = align ? reflect(v, 0, static_cast<double>(size - 1))
                : reflect(v, -0.5, static_cast<double>(size) - 0.5);
      return std::clamp(v, 0.0, static_cast<double>(size - 1));
    }
    return v;
  };
  std::vector<double> y(static_cast<size_t>(n * c * ho * wo), 0.0);
  for (int64_t b = 0; b < n; ++b) {
    const double* plane0 = xv.data() + b * c * h * w;
    // Reads pixel (iy, ix) of every channel, scaled by `weight`, into `acc`.
    auto read = [&](int64_t iy, int64_t ix, double weight, double* acc) {
      if (padding != "zeros") {  // bicubic taps beyond the edge follow the padding too
        iy = std::clamp<int64_t>(iy, 0, h - 1);
        ix = std::clamp<int64_t>(ix, 0, w - 1);
      } else if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
        return;
      }
      for (int64_t ch = 0; ch < c; ++ch) acc[ch] += weight * plane0[(ch * h + iy) * w + ix];
    };
    std::vector<double> acc(c);
    for (int64_t oy = 0; oy < ho; ++oy)
      for (int64_t ox = 0; ox < wo; ++ox) {
        const double* g = gv.data() + ((b * ho + oy) * wo + ox) * 2;
        // Bicubic pads each tap (as PyTorch does), the others the sample position.
        const double ux = unnormalize(g[0], w), uy = unnormalize(g[1], h);
        const double fx = mode == "bicubic" ? ux : pad(ux, w);
        const double fy = mode == "bicubic" ? uy : pad(uy, h);
        std::fill(acc.begin(), acc.end(), 0.0);
        // Not a number, or so far outside that every tap is (zeros padding; the others have
        // clamped it): nothing is read.
        if (!(std::fabs(fx) < 1e15 && std::fabs(fy) < 1e15)) {
        } else if (mode == "nearest") {
          read(static_cast<int64_t>(std::nearbyint(fy)), static_cast<int64_t>(std::nearbyint(fx)),
               1.0, acc.data());
        } else if (mode == "bilinear") {
          const double x0 = std::floor(fx), y0 = std::floor(fy), tx = fx - x0, ty = fy - y0;
          const auto ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
          read(iy, ix, (1 - ty) * (1 - tx), acc.data());
          read(iy, ix + 1, (1 - ty) * tx, acc.data());
          read(iy + 1, ix, ty * (1 - tx), acc.data());
          read(iy + 1, ix + 1, ty * tx, acc.data());
        } else {  // bicubic, A = -0.75
          auto cubic = [](double t) {
            constexpr double A = -0.75;
            t = std::fabs(t);
            if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
            if (t < 2) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
            return 0.0;
          };
          const double x0 = std::floor(fx), y0 = std::floor(fy);
          auto tap = [&](double v, int64_t size) {
            return static_cast<int64_t>(padding == "zeros" ? v : std::nearbyint(pad(v, size)));
          };
          for (int64_t j = -1; j <= 2; ++j)
            for (int64_t i = -1; i <= 2; ++i)
              read(tap(y0 + j, h), tap(x0 + i, w), cubic(fy - (y0 + j)) * cubic(fx - (x0 + i)),
                   acc.data());
        }
        for (int64_t ch = 0; ch < c; ++ch) y[((b * c + ch) * ho + oy) * wo + ox] = acc[ch];
      }
  }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, y);
  return Status::Ok();
}

}  // namespace

void AddResizeKernels(KernelTable* t) {
  auto& k = *t;
  k["Resize"] = Resize;
  k["Upsample"] = Resize;
  k["GridSample"] = GridSample;
}

}  // namespace verisub::runtime
