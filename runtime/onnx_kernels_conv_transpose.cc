// ConvTranspose: the geometry of the spec (strides, dilations, pads or auto_pad, output_padding,
// output_shape, groups) and the reference kernel, which scatters every input element through
// the kernel into the output.
#include <cstdlib>

#include "runtime/onnx_kernels.h"

namespace verisub::runtime {

StatusOr<ConvTransposeGeometry> PlanConvTranspose(const KernelContext& ctx,
                                                  const std::vector<int64_t>& x_dims,
                                                  const std::vector<int64_t>& w_dims) {
  const std::string op = "ConvTranspose";
  if (x_dims.size() < 3 || w_dims.size() != x_dims.size())
    return InvalidArgument(op + ": input and weight ranks differ or are below 3");
  const size_t r = x_dims.size() - 2;
  ConvTransposeGeometry g;
  g.group = ctx.AttrInt("group", 1);
  const int64_t c = x_dims[1];
  if (g.group < 1 || c % g.group != 0 || w_dims[0] != c)
    return InvalidArgument(op + ": the weight's first dimension " + std::to_string(w_dims[0]) +
                           " must be the input's channels " + std::to_string(c) +
                           ", a multiple of group " + std::to_string(g.group));
  g.out_channels = w_dims[1] * g.group;
  std::vector<int64_t> kernel = ctx.AttrInts("kernel_shape");
  if (kernel.empty()) kernel.assign(w_dims.begin() + 2, w_dims.end());
  g.strides = ctx.AttrInts("strides");
  if (g.strides.empty()) g.strides.assign(r, 1);
  g.dilations = ctx.AttrInts("dilations");
  if (g.dilations.empty()) g.dilations.assign(r, 1);
  std::vector<int64_t> pads = ctx.AttrInts("pads");
  if (pads.empty()) pads.assign(2 * r, 0);
  std::vector<int64_t> output_padding = ctx.AttrInts("output_padding");
  if (output_padding.empty()) output_padding.assign(r, 0);
  const std::vector<int64_t> output_shape = ctx.AttrInts("output_shape");
  if (kernel.size() != r || g.strides.size() != r || g.dilations.size() != r ||
      pads.size() != 2 * r || output_padding.size() != r ||
      (!output_shape.empty() && output_shape.size() != r))
    return InvalidArgument(op +
                           ": kernel_shape, strides, dilations, pads, output_padding or "
                           "output_shape have the wrong length");
  const std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
      auto_pad != "VALID")
    return InvalidArgument(op + ": auto_pad '" + auto_pad + "'");
  g.kernel = kernel;
  g.pad_begin.resize(r);
  g.pad_end.resize(r);
  g.out.resize(r);
  constexpr int64_t kMax = int64_t{1} << 24;  // far from overflow on corrupt attributes
  for (size_t d = 0; d < r; ++d) {
    const int64_t in = x_dims[d + 2], s = g.strides[d], dil = g.dilations[d];
    if (kernel[d] != w_dims[d + 2] || s < 1 || dil < 1 || s > kMax || dil > kMax || kernel[d] < 1 ||
        kernel[d] > kMax || std::abs(pads[d]) > kMax || std::abs(pads[d + r]) > kMax ||
        output_padding[d] < 0 || output_padding[d] > kMax || in < 0 || in > kMax)
      return InvalidArgument(op +
                             ": a stride, dilation, kernel, pad or output padding out of "
                             "range, or a kernel that is not the weight's");
    const int64_t extent = (kernel[d] - 1) * dil + 1;
    const int64_t full = s * (in - 1) + output_padding[d] + extent;  // before any padding
    int64_t total;
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t want = !output_shape.empty() ? output_shape[d] : in * s;
      total = full - want;
      const bool upper = auto_pad == "SAME_UPPER";
      // Halves rounded down, a negative total too (an output_shape past the full output pads
      // its end: ONNX's reference implementation, Python's floor division).
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      g.pad_begin[d] = upper ? half : total - half;
      g.pad_end[d] = total - g.pad_begin[d];
    } else if (auto_pad == "VALID") {
      g.pad_begin[d] = g.pad_end[d] = 0;
    } else {
      g.pad_begin[d] = pads[d];
      g.pad_end[d] = pads[d + r];
    }
    g.out[d] = full - g.pad_begin[d] - g.pad_end[d];
    if (g.out[d] < 1) return InvalidArgument(op + ": an empty output");
  }
  return g;
}

namespace {

Status ConvTranspose(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor &x = *ctx.input(0), &wt = *ctx.input(1);
  VERISUB_ASSIGN_OR_RETURN(ConvTransposeGeometry g, PlanConvTranspose(ctx, x.dims, wt.dims));
  const int64_t n = x.dims[0], c = x.dims[1], m = g.out_channels;
  const int64_t cg = c / g.group, mg = m / g.group;
  std::vector<double> bias(m, 0.0);
  if (ctx.input(2)) bias = ctx.input(2)->ToDoubles();
  if (static_cast<int64_t>(bias.size()) != m)
    return InvalidArgument("ConvTranspose: bias of " + std::to_string(bias.size()) +
                           " values for " + std::to_string(m) + " output channels");
  std::vector<int64_t> dims = {n, m};
  dims.insert(dims.end(), g.out.begin(), g.out.end());
  VERISUB_RETURN_IF_ERROR(CheckSize(dims, "ConvTranspose"));
  const std::vector<int64_t> in_sp(x.dims.begin() + 2, x.dims.end());
  const size_t r = in_sp.size();
  const int64_t in_count = CountElements(in_sp), k_count = CountElements(g.kernel),
                out_count = CountElements(g.out);
  // For every (input position, kernel position) pair landing inside the output: the offsets.
  struct Tap {
    int64_t in, k, out;
  };
  std::vector<Tap> taps;
  std::vector<int64_t> ip(r, 0);
  for (int64_t i = 0; i < in_count; ++i) {
    std::vector<int64_t> kp(r, 0);
    for (int64_t k = 0; k < k_count; ++k) {
      int64_t o = 0;
      bool inside = true;
      for (size_t d = 0; d < r && inside; ++d) {
        const int64_t od = ip[d] * g.strides[d] + kp[d] * g.dilations[d] - g.pad_begin[d];
        inside = od >= 0 && od < g.out[d];
        o = o * g.out[d] + od;
      }
      if (inside) taps.push_back({i, k, o});
      for (int d = static_cast<int>(r) - 1; d >= 0 && ++kp[d] == g.kernel[d]; --d) kp[d] = 0;
    }
    for (int d = static_cast<int>(r) - 1; d >= 0 && ++ip[d] == in_sp[d]; --d) ip[d] = 0;
  }
  const std::vector<double> xv = x.ToDoubles(), wv = wt.ToDoubles();
  std::vector<double> y(static_cast<size_t>(CountElements(dims)));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < m; ++oc) {
      double* yp = y.data() + (b * m + oc) * out_count;
      std::fill(yp, yp + out_count, bias[oc]);
      const int64_t grp = oc / mg, ocg = oc % mg;
      for (int64_t icg = 0; icg < cg; ++icg) {
        const int64_t ic = grp * cg + icg;
        const double* xp = xv.data() + (b * c + ic) * in_count;
        const double* wp = wv.data() + (ic * mg + ocg) * k_count;  // W: [C, M/group, k...]
        for (const Tap& t : taps) yp[t.out] += xp[t.in] * wp[t.k];
      }
    }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, y);
  return Status::Ok();
}

}  // namespace

void AddConvTransposeKernels(KernelTable* t) { (*t)["ConvTranspose"] = ConvTranspose; }

}  // namespace verisub::runtime
