// ONNX's signal operators (opset 17): HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix,
// DFT and STFT, as the operator definitions state them. The transforms run in double, in
// O(n log n): a radix-2 FFT for lengths that are powers of two, Bluestein's chirp-z transform over
// such FFTs for other lengths from 64 on, the direct sum below that. The import writes transforms
// of constant length up to 1024 points (and longer ones that are not powers of two) as a product
// with the transform's matrix, a GEMM or a strided convolution the backends run fast
// (canonicalize.cc RewriteFourierTransforms).
#include <cmath>
#include <numbers>
#include <utility>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"

namespace verisub::runtime {
namespace {

// The value of a one-element tensor input, or an error naming it.
StatusOr<double> ScalarInput(const KernelContext& ctx, int i, const char* name) {
  const HostTensor* t = ctx.input(i);
  if (!t || t->NumElements() != 1)
    return InvalidArgument(ctx.op_type() + ": input '" + name + "' must hold one value");
  return t->DoubleAt(0);
}

// Input i as one whole number (of any number type; a float must be an integer of at most 2^53 in
// magnitude, which rules out casting NaN or a huge float).
StatusOr<int64_t> IntegerInput(const KernelContext& ctx, int i, const char* name) {
  VERISUB_ASSIGN_OR_RETURN(double v, ScalarInput(ctx, i, name));
  if (!IsFloatType(ctx.input(i)->elem_type)) return ctx.input(i)->IntAt(0);
  if (!(std::abs(v) <= 9007199254740992.0) || v != std::floor(v))
    return InvalidArgument(ctx.op_type() + ": input '" + name + "' = " + std::to_string(v) +
                           " is not a whole number");
  return static_cast<int64_t>(v);
}

// The output element type of the window and mel operators (attribute output_datatype, float by
// default): a number type HostTensor holds.
StatusOr<int32_t> OutputType(const KernelContext& ctx) {
  const int64_t t = ctx.AttrInt("output_datatype", kFloat);
  if (t == kBool || t > kBfloat16 || !IsSupportedType(static_cast<int32_t>(t)) ||
      !(IsFloatType(static_cast<int32_t>(t)) || IsIntegerType(static_cast<int32_t>(t))))
    return InvalidArgument(ctx.op_type() + ": output_datatype " + std::to_string(t) +
                           " is not a number type");
  return static_cast<int32_t>(t);
}

// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1.
Status CosineSumWindow(const KernelContext& ctx, std::vector<HostTensor>* out, double a0, double a1,
                       double a2) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  VERISUB_ASSIGN_OR_RETURN(int64_t size, IntegerInput(ctx, 0, "size"));
  VERISUB_ASSIGN_OR_RETURN(int32_t type, OutputType(ctx));
  if (size < 0) return InvalidArgument(ctx.op_type() + ": size " + std::to_string(size) + " < 0");
  VERISUB_RETURN_IF_ERROR(CheckSize({size}, ctx.op_type()));
  const bool periodic = ctx.AttrInt("periodic", 1) != 0;
  const double period = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> w(size);
  for (int64_t n = 0; n < size; ++n) {
    const double x = period > 0 ? 2 * std::numbers::pi * static_cast<double>(n) / period : 0;
    w[n] = a0 - a1 * std::cos(x) + (a2 == 0 ? 0 : a2 * std::cos(2 * x));
  }
  (*out)[0] = HostTensor::FromDoubles(type, {size}, w);
  return Status::Ok();
}

Status HannWindow(const KernelContext& ctx, std::vector<HostTensor>* out) {
  return CosineSumWindow(ctx, out, 0.5, 0.5, 0);
}
Status HammingWindow(const KernelContext& ctx, std::vector<HostTensor>* out) {
  return CosineSumWindow(ctx, out, 25.0 / 46.0, 21.0 / 46.0, 0);
}
Status BlackmanWindow(const KernelContext& ctx, std::vector<HostTensor>* out) {
  return CosineSumWindow(ctx, out, 0.42, 0.5, 0.08);
}

// Triangular filters with peak 1, their num_mel_bins + 2 edges equally spaced on the mel scale
// mel(f) = 2595 log10(1 + f / 700) between the two edge frequencies, each edge at the DFT bin
// floor((dft_length + 1) f / sample_rate): a [dft_length / 2 + 1, num_mel_bins] matrix.
Status MelWeightMatrix(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 5));
  VERISUB_ASSIGN_OR_RETURN(int64_t mel_bins, IntegerInput(ctx, 0, "num_mel_bins"));
  VERISUB_ASSIGN_OR_RETURN(int64_t dft_length, IntegerInput(ctx, 1, "dft_length"));
  VERISUB_ASSIGN_OR_RETURN(double sample_rate, ScalarInput(ctx, 2, "sample_rate"));
  VERISUB_ASSIGN_OR_RETURN(double lower_hz, ScalarInput(ctx, 3, "lower_edge_hertz"));
  VERISUB_ASSIGN_OR_RETURN(double upper_hz, ScalarInput(ctx, 4, "upper_edge_hertz"));
  VERISUB_ASSIGN_OR_RETURN(int32_t type, OutputType(ctx));
  if (mel_bins < 1 || dft_length < 1 || sample_rate <= 0)
    return InvalidArgument(
        "MelWeightMatrix: num_mel_bins, dft_length and sample_rate must be "
        "positive");
  const int64_t bins = dft_length / 2 + 1;
  VERISUB_RETURN_IF_ERROR(CheckSize({bins, mel_bins}, "MelWeightMatrix"));
  for (double hz : {lower_hz, upper_hz}) {  // the edges themselves, as ONNX Runtime checks them
    const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / sample_rate);
    if (!(bin >= 0 && bin < static_cast<double>(bins)))
      return InvalidArgument("MelWeightMatrix: the edge " + std::to_string(hz) +
                             " Hz falls outside the " + std::to_string(bins) + " bins of a " +
                             std::to_string(dft_length) + "-point DFT at " +
                             std::to_string(sample_rate) + " samples a second");
  }
  auto to_mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  const double low = to_mel(lower_hz), high = to_mel(upper_hz);
  const double step = (high - low) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edge(mel_bins + 2);
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (low + step * static_cast<double>(i)) / 2595) - 1);
    edge[i] =
        static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / sample_rate));
    if (edge[i] < 0 || edge[i] >= bins)
      return InvalidArgument("MelWeightMatrix: the filter edge at " + std::to_string(hz) +
                             " Hz falls outside the " + std::to_string(bins) +
                             " bins of the DFT (lower_edge_hertz, upper_edge_hertz and "
                             "sample_rate disagree)");
  }
  std::vector<double> w(bins * mel_bins, 0.0);
  for (int64_t m = 0; m < mel_bins; ++m) {
    const int64_t left = edge[m], center = edge[m + 1], right = edge[m + 2];
    if (center == left) {
      w[center * mel_bins + m] = 1;
    } else {
      for (int64_t j = left; j <= center; ++j)
        w[j * mel_bins + m] = static_cast<double>(j - left) / static_cast<double>(center - left);
    }
    for (int64_t j = center; j < right; ++j)
      w[j * mel_bins + m] = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  (*out)[0] = HostTensor::FromDoubles(type, {bins, mel_bins}, w);
  return Status::Ok();
}

// One transform's geometry: `length` input samples (complex when `complex_input`), a DFT of
// `dft_length` points (the samples truncated or padded with zeros to it), the first `bins`
// outputs kept, forward or inverse (e^{+i...} / dft_length).
struct Transform {
  int64_t length = 0, dft_length = 0, bins = 0;
  bool complex_input = false, inverse = false;

  // How Run computes: a radix-2 FFT of dft_length (a power of two, 8 or more); Bluestein's
  // chirp-z (other lengths from 64 on), X_k = c_k sum_n (x_n c_n) conj(c_{k-n}) with the chirp
  // c_j = e^{s pi i j^2 / m}, the sum a convolution by FFTs of fft_size >= 2m - 1; else the
  // direct sum.
  enum class Method { kRadix2, kChirp, kDirect } method = Method::kDirect;
  int64_t fft_size = 0;
  std::vector<double> cos_table, sin_table;  // of 2 pi j / n, j < n: fft_size, or dft_length
  std::vector<double> chirp_re, chirp_im;    // c_j, j < dft_length
  std::vector<double> kernel_re, kernel_im;  // the FFT of conj(c) wrapped to fft_size

  double Sign() const { return inverse ? 1.0 : -1.0; }

  void Tables(int64_t n) {
    cos_table.resize(n);
    sin_table.resize(n);
    for (int64_t j = 0; j < n; ++j) {
      const double x = 2 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
      cos_table[j] = std::cos(x);
      sin_table[j] = std::sin(x);
    }
  }

  void Prepare() {
    const int64_t m = dft_length;
    if ((m & (m - 1)) == 0 && m >= 8) {
      method = Method::kRadix2;
      fft_size = m;
      Tables(m);
      return;
    }
    if (m < 64) {
      method = Method::kDirect;
      Tables(m);
      return;
    }
    method = Method::kChirp;
    for (fft_size = 1; fft_size < 2 * m - 1;) fft_size <<= 1;
    Tables(fft_size);
    chirp_re.resize(m);
    chirp_im.resize(m);
    for (int64_t j = 0; j < m; ++j) {  // j^2 mod 2m keeps the angle exact for long transforms
      const int64_t q = static_cast<int64_t>((static_cast<unsigned __int128>(j) * j) %
                                             static_cast<unsigned __int128>(2 * m));
      const double x = Sign() * std::numbers::pi * static_cast<double>(q) / static_cast<double>(m);
      chirp_re[j] = std::cos(x);
      chirp_im[j] = std::sin(x);
    }
    kernel_re.assign(fft_size, 0.0);
    kernel_im.assign(fft_size, 0.0);
    for (int64_t j = 0; j < m; ++j) {
      kernel_re[j] = chirp_re[j];
      kernel_im[j] = -chirp_im[j];
      if (j > 0) {
        kernel_re[fft_size - j] = chirp_re[j];
        kernel_im[fft_size - j] = -chirp_im[j];
      }
    }
    Fft(&kernel_re, &kernel_im, -1.0);
  }

  // The unscaled transform sum_j v_j e^{sign 2 pi i j k / n} of (re, im), zero-padded to n =
  // fft_size (a power of two), in place: radix-2, decimation in time, twiddles from the tables.
  void Fft(std::vector<double>* re, std::vector<double>* im, double sign) const {
    const int64_t m = fft_size;
    re->resize(m, 0.0);
    im->resize(m, 0.0);
    for (int64_t i = 1, j = 0; i < m; ++i) {  // bit-reversed order
      int64_t bit = m >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) {
        std::swap((*re)[i], (*re)[j]);
        std::swap((*im)[i], (*im)[j]);
      }
    }
    for (int64_t len = 2; len <= m; len <<= 1) {
      const int64_t stride = m / len;  // twiddle j * stride of the m-point tables
      for (int64_t start = 0; start < m; start += len)
        for (int64_t j = 0; j < len / 2; ++j) {
          const double c = cos_table[j * stride], s = sign * sin_table[j * stride];
          const int64_t a = start + j, b = a + len / 2;
          const double tr = (*re)[b] * c - (*im)[b] * s, ti = (*re)[b] * s + (*im)[b] * c;
          (*re)[b] = (*re)[a] - tr;
          (*im)[b] = (*im)[a] - ti;
          (*re)[a] += tr;
          (*im)[a] += ti;
        }
    }
  }

  // Reads sample n (n < min(length, dft_length)) as (re, im) through `at`; writes output bin k
  // as (re, im) through `put`. `weight` scales sample n (a window; nullptr: 1).
  template <class At, class Put>
  void Run(At at, Put put, const std::vector<double>* weight) const {
    const int64_t used = std::min(length, dft_length);
    const double scale = inverse ? 1.0 / static_cast<double>(dft_length) : 1.0;
    std::vector<double> re(used), im(used);
    for (int64_t n = 0; n < used; ++n) {
      at(n, &re[n], &im[n]);
      if (weight) {
        re[n] *= (*weight)[n];
        im[n] *= (*weight)[n];
      }
    }
    if (method == Method::kRadix2) {
      Fft(&re, &im, Sign());
      for (int64_t k = 0; k < bins; ++k) put(k, re[k] * scale, im[k] * scale);
      return;
    }
    if (method == Method::kChirp) {
      for (int64_t n = 0; n < used; ++n) {  // x_n c_n
        const double a = re[n] * chirp_re[n] - im[n] * chirp_im[n];
        im[n] = re[n] * chirp_im[n] + im[n] * chirp_re[n];
        re[n] = a;
      }
      Fft(&re, &im, -1.0);
      for (int64_t j = 0; j < fft_size; ++j) {  // times the kernel's transform
        const double a = re[j] * kernel_re[j] - im[j] * kernel_im[j];
        im[j] = re[j] * kernel_im[j] + im[j] * kernel_re[j];
        re[j] = a;
      }
      Fft(&re, &im, 1.0);  // the convolution, times fft_size
      const double s = scale / static_cast<double>(fft_size);
      for (int64_t k = 0; k < bins; ++k)
        put(k, (re[k] * chirp_re[k] - im[k] * chirp_im[k]) * s,
            (re[k] * chirp_im[k] + im[k] * chirp_re[k]) * s);
      return;
    }
    const double sign = Sign();
    for (int64_t k = 0; k < bins; ++k) {
      double sr = 0, si = 0;
      int64_t j = 0;  // k * n mod dft_length
      for (int64_t n = 0; n < used; ++n) {
        const double c = cos_table[j], s = sign * sin_table[j];
        sr += re[n] * c - im[n] * s;
        si += re[n] * s + im[n] * c;
        j += k;
        if (j >= dft_length) j %= dft_length;
      }
      put(k, sr * scale, si * scale);
    }
  }
};

// DFT (opset 17): input [batch, n_1, ..., n_k, 1 or 2] (real or complex), the transform along
// `axis` (one of the signal axes), dft_length (input 1) its points, onesided keeping the first
// dft_length / 2 + 1 bins; output [..., bins along axis, ..., 2].
Status Dft(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const HostTensor& x = *ctx.input(0);
  VERISUB_ASSIGN_OR_RETURN(DftPlan plan, PlanDft(ctx, x.dims));
  const int64_t r = static_cast<int64_t>(x.dims.size()), axis = plan.axis;
  const std::vector<int64_t>& dims = plan.out_dims;
  Transform t;
  t.length = plan.length;
  t.dft_length = plan.points;
  t.bins = plan.bins;
  t.complex_input = plan.complex_input;
  t.inverse = plan.inverse;
  t.Prepare();
  const std::vector<double> xs = x.ToDoubles();
  std::vector<double> y(CountElements(dims));
  const std::vector<int64_t> in_strides = RowMajorStrides(x.dims),
                             out_strides = RowMajorStrides(dims);
  // Every line along `axis`: the other axes' indices, the last (components) fixed at 0.
  std::vector<int64_t> line_dims = x.dims;
  line_dims[axis] = 1;
  line_dims.back() = 1;
  const int64_t lines = CountElements(line_dims);
  std::vector<int64_t> idx(r, 0);
  int64_t in_base = 0, out_base = 0;
  const int64_t comp = x.dims.back();
  for (int64_t l = 0; l < lines; ++l) {
    t.Run(
        [&](int64_t n, double* re, double* im) {
          const int64_t at = in_base + n * in_strides[axis];
          *re = xs[at];
          *im = comp == 2 ? xs[at + 1] : 0;
        },
        [&](int64_t k, double re, double im) {
          const int64_t at = out_base + k * out_strides[axis];
          y[at] = re;
          y[at + 1] = im;
        },
        nullptr);
    NextOffsets(
        &idx, [&](int d) { return line_dims[d]; }, [&](int d) { return in_strides[d]; },
        [&](int d) { return out_strides[d]; }, &in_base, &out_base);
  }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, y);
  return Status::Ok();
}

// STFT (opset 17): signal [batch, length] or [batch, length, 1 or 2], frame_step (input 1), a
// window (input 2) and/or frame_length (input 3): frames of frame_length samples every
// frame_step, each weighted by the window and transformed; output [batch, frames, bins, 2].
Status Stft(const KernelContext& ctx, std::vector<HostTensor>* out) {
  VERISUB_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const HostTensor& x = *ctx.input(0);
  VERISUB_ASSIGN_OR_RETURN(StftPlan plan, PlanStft(ctx, x.dims));
  const HostTensor* window = plan.window;
  const int64_t batch = x.dims[0], length = x.dims[1], step = plan.step, frames = plan.frames;
  const std::vector<int64_t>& dims = plan.out_dims;
  Transform t;
  t.length = t.dft_length = plan.frame;
  t.complex_input = plan.complex_input;
  t.bins = plan.bins;
  t.Prepare();
  std::vector<double> w;
  if (window) w = window->ToDoubles();
  const std::vector<double> xs = x.ToDoubles();
  const int64_t comp = t.complex_input ? 2 : 1;
  std::vector<double> y(CountElements(dims));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      const int64_t in_base = (b * length + f * step) * comp;
      const int64_t out_base = (b * frames + f) * t.bins * 2;
      t.Run(
          [&](int64_t n, double* re, double* im) {
            *re = xs[in_base + n * comp];
            *im = comp == 2 ? xs[in_base + n * comp + 1] : 0;
          },
          [&](int64_t k, double re, double im) {
            y[out_base + 2 * k] = re;
            y[out_base + 2 * k + 1] = im;
          },
          window ? &w : nullptr);
    }
  (*out)[0] = HostTensor::FromDoubles(x.elem_type, dims, y);
  return Status::Ok();
}

}  // namespace

StatusOr<DftPlan> PlanDft(const KernelContext& ctx, const std::vector<int64_t>& x_dims) {
  const int64_t r = static_cast<int64_t>(x_dims.size());
  if (r < 3 || (x_dims.back() != 1 && x_dims.back() != 2))
    return InvalidArgument("DFT: input " + DimsToString(x_dims) +
                           " must be [batch, signal..., 1 or 2]");
  DftPlan p;
  p.axis = ctx.AttrInt("axis", 1);
  if (p.axis < 0) p.axis += r;
  if (p.axis < 1 || p.axis > r - 2)
    return InvalidArgument("DFT: axis " + std::to_string(ctx.AttrInt("axis", 1)) +
                           " is not a signal axis of " + DimsToString(x_dims));
  p.length = p.points = x_dims[p.axis];
  if (const HostTensor* len = ctx.input(1); len && len->NumElements() > 0) {
    VERISUB_ASSIGN_OR_RETURN(p.points, IntegerInput(ctx, 1, "dft_length"));
  }
  if (p.points < 1 || p.points > kMaxKernelElements / 4)  // the kernel's tables' 4x
    return InvalidArgument("DFT: dft_length " + std::to_string(p.points) +
                           " is not positive or too large");
  p.complex_input = x_dims.back() == 2;
  p.inverse = ctx.AttrInt("inverse", 0) != 0;
  const bool onesided = ctx.AttrInt("onesided", 0) != 0;
  if (onesided && (p.inverse || p.complex_input))
    return InvalidArgument("DFT: onesided is defined for the forward transform of a real signal");
  p.bins = onesided ? p.points / 2 + 1 : p.points;
  p.out_dims = x_dims;
  p.out_dims[p.axis] = p.bins;
  p.out_dims.back() = 2;
  VERISUB_RETURN_IF_ERROR(CheckSize(p.out_dims, "DFT"));
  return p;
}

StatusOr<StftPlan> PlanStft(const KernelContext& ctx, const std::vector<int64_t>& signal_dims) {
  const int64_t r = static_cast<int64_t>(signal_dims.size());
  if (r < 2 || r > 3 || (r == 3 && signal_dims[2] != 1 && signal_dims[2] != 2))
    return InvalidArgument("STFT: signal " + DimsToString(signal_dims) +
                           " must be [batch, length] or [batch, length, 1 or 2]");
  StftPlan p;
  VERISUB_ASSIGN_OR_RETURN(p.step, IntegerInput(ctx, 1, "frame_step"));
  p.window = ctx.input(2);
  if (p.window && p.window->NumElements() == 0) p.window = nullptr;
  if (p.window && p.window->dims.size() != 1)
    return InvalidArgument("STFT: window " + DimsToString(p.window->dims) + " must be 1-D");
  p.frame = p.window ? p.window->NumElements() : -1;
  if (const HostTensor* len = ctx.input(3); len && len->NumElements() > 0) {
    VERISUB_ASSIGN_OR_RETURN(int64_t frame, IntegerInput(ctx, 3, "frame_length"));
    if (p.window && frame != p.frame)
      return InvalidArgument("STFT: frame_length " + std::to_string(frame) +
                             " differs from the window's " + std::to_string(p.frame) + " samples");
    p.frame = frame;
  }
  const int64_t length = signal_dims[1];
  if (p.frame < 1 || p.step < 1 || p.frame > length)
    return InvalidArgument("STFT: frame_length " + std::to_string(p.frame) + " and frame_step " +
                           std::to_string(p.step) + " must be positive, the frame at most the " +
                           std::to_string(length) + " samples of the signal");
  p.complex_input = r == 3 && signal_dims[2] == 2;
  const bool onesided = ctx.AttrInt("onesided", 1) != 0;
  if (onesided && p.complex_input)
    return InvalidArgument("STFT: onesided is defined for a real signal");
  p.bins = onesided ? p.frame / 2 + 1 : p.frame;
  p.frames = (length - p.frame) / p.step + 1;
  p.out_dims = {signal_dims[0], p.frames, p.bins, 2};
  VERISUB_RETURN_IF_ERROR(CheckSize(p.out_dims, "STFT"));
  return p;
}

void AddSignalKernels(KernelTable* t) {
  auto& k = *t;
  k["HannWindow"] = HannWindow;
  k["HammingWindow"] = HammingWindow;
  k["BlackmanWindow"] = BlackmanWindow;
  k["MelWeightMatrix"] = MelWeightMatrix;
  k["DFT"] = Dft;
  k["STFT"] = Stft;
}

}  // namespace verisub::runtime
