// The signal operators' reference kernels (opset 17): windows and the mel matrix against values
// worked out by hand or by ONNX Runtime 1.30, DFT and STFT (direct sums, radix-2 FFT, chirp-z)
// against the transform's definition summed with std::complex here, and their errors on operands
// they cannot take.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <numbers>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using Complex = std::complex<double>;

StatusOr<std::vector<HostTensor>> RunSignal(
    const std::string& op, const std::vector<std::pair<std::string, HostTensor>>& in,
    const std::function<void(onnx::NodeProto&)>& attrs = {}, int32_t out_type = kFloat) {
  return testing::RunOneNode(
      op, in, {},
      [&](onnx::NodeProto& n) {
        if (attrs) attrs(n);
      },
      out_type, 17);
}

HostTensor Int64(int64_t v) { return HostTensor::FromInts(kInt64, {}, {v}); }
HostTensor Float(double v) { return HostTensor::FromDoubles(kFloat, {}, {v}); }

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(SignalKernelsTest, WindowsArePeriodicOrSymmetricCosineSums) {
  auto hann = RunSignal("HannWindow", {{"n", Int64(4)}});  // periodic, float by default
  ASSERT_TRUE(hann.ok()) << hann.status().message();
  EXPECT_EQ((*hann)[0].elem_type, kFloat);
  ExpectNear((*hann)[0].ToDoubles(), {0, 0.5, 1, 0.5}, 1e-7);
  auto symmetric = RunSignal(
      "HannWindow", {{"n", Int64(5)}},
      [](onnx::NodeProto& n) {
        testing::SetInt(n, "periodic", 0);
        testing::SetInt(n, "output_datatype", kDouble);
      },
      kDouble);
  ASSERT_TRUE(symmetric.ok()) << symmetric.status().message();
  ExpectNear((*symmetric)[0].ToDoubles(), {0, 0.5, 1, 0.5, 0}, 1e-15);
  auto hamming = RunSignal("HammingWindow", {{"n", Int64(4)}});
  ASSERT_TRUE(hamming.ok()) << hamming.status().message();
  ExpectNear((*hamming)[0].ToDoubles(), {4.0 / 46, 25.0 / 46, 1, 25.0 / 46}, 1e-7);
  auto blackman = RunSignal("BlackmanWindow", {{"n", Int64(3)}},
                            [](onnx::NodeProto& n) { testing::SetInt(n, "periodic", 0); });
  ASSERT_TRUE(blackman.ok()) << blackman.status().message();
  ExpectNear((*blackman)[0].ToDoubles(), {0, 1, 0}, 1e-7);
  EXPECT_FALSE(RunSignal("HannWindow", {{"n", Int64(-1)}}).ok());
}

// ONNX Runtime 1.30's MelWeightMatrix of the same operands (16 kHz, a 40-point DFT, 4 filters
// from 100 Hz to 7 kHz): [21, 4], the triangles' edges at bins 0, 1, 2, 4, 7, 11.
TEST(SignalKernelsTest, MelWeightMatrixIsOnnxRuntimes) {
  auto mel = RunSignal("MelWeightMatrix", {{"bins", Int64(4)},
                                           {"dft", Int64(40)},
                                           {"rate", Int64(16000)},
                                           {"lo", Float(100)},
                                           {"hi", Float(7000)}});
  ASSERT_TRUE(mel.ok()) << mel.status().message();
  EXPECT_EQ((*mel)[0].dims, (std::vector<int64_t>{21, 4}));
  std::vector<double> want(21 * 4, 0.0);
  const std::vector<double> head = {0, 0,   0,       0,        // bin 0
                                    1, 0,   0,       0,        // 1
                                    0, 1,   0,       0,        // 2
                                    0, 0.5, 0.5,     0,        // 3
                                    0, 0,   1,       0,        // 4
                                    0, 0,   2.0 / 3, 1.0 / 3,  // 5
                                    0, 0,   1.0 / 3, 2.0 / 3,  // 6
                                    0, 0,   0,       1,        // 7
                                    0, 0,   0,       0.75,     // 8
                                    0, 0,   0,       0.5,      // 9
                                    0, 0,   0,       0.25};    // 10; 11 to 20 zero
  std::copy(head.begin(), head.end(), want.begin());
  ExpectNear((*mel)[0].ToDoubles(), want, 1e-7);
  // An upper edge past the Nyquist frequency has no bin.
  EXPECT_FALSE(RunSignal("MelWeightMatrix", {{"bins", Int64(4)},
                                             {"dft", Int64(40)},
                                             {"rate", Int64(16000)},
                                             {"lo", Float(100)},
                                             {"hi", Float(9000)}})
                   .ok());
}

// X[k] = sum_n x[n] e^{-2 pi i k n / m} (inverse: e^{+...} / m) over the first min(len, m)
// samples of one line.
std::vector<Complex> Transform(const std::vector<Complex>& x, int64_t m, int64_t bins,
                               bool inverse) {
  std::vector<Complex> out(bins);
  for (int64_t k = 0; k < bins; ++k)
    for (int64_t n = 0; n < std::min<int64_t>(m, x.size()); ++n)
      out[k] += x[n] * std::polar(1.0, (inverse ? 2 : -2) * std::numbers::pi *
                                           static_cast<double>(k * n) / static_cast<double>(m));
  if (inverse)
    for (Complex& c : out) c /= static_cast<double>(m);
  return out;
}

TEST(SignalKernelsTest, DftIsTheDefinitionAlongItsAxis) {
  // Real [2, 5, 3, 1] along axis 1, 8 points (zero padded), onesided: [2, 5, 3, 2].
  const HostTensor x = testing::RandomTensor({2, 5, 3, 1}, 11);
  auto y = RunSignal("DFT", {{"x", x}, {"len", Int64(8)}},
                     [](onnx::NodeProto& n) { testing::SetInt(n, "onesided", 1); });
  ASSERT_TRUE(y.ok()) << y.status().message();
  ASSERT_EQ((*y)[0].dims, (std::vector<int64_t>{2, 5, 3, 2}));
  const std::vector<double> xs = x.ToDoubles(), ys = (*y)[0].ToDoubles();
  for (int b = 0; b < 2; ++b)
    for (int c = 0; c < 3; ++c) {
      std::vector<Complex> line;
      for (int n = 0; n < 5; ++n) line.emplace_back(xs[(b * 5 + n) * 3 + c], 0);
      const std::vector<Complex> want = Transform(line, 8, 5, false);
      for (int k = 0; k < 5; ++k) {
        EXPECT_NEAR(ys[((b * 5 + k) * 3 + c) * 2], want[k].real(), 1e-6);
        EXPECT_NEAR(ys[((b * 5 + k) * 3 + c) * 2 + 1], want[k].imag(), 1e-6);
      }
    }
  // Complex [1, 3, 6, 2], inverse along the last signal axis (-2), truncated to 4 points.
  const HostTensor z = testing::RandomTensor({1, 3, 6, 2}, 12);
  auto w = RunSignal("DFT", {{"z", z}, {"len", Int64(4)}}, [](onnx::NodeProto& n) {
    testing::SetInt(n, "axis", -2);
    testing::SetInt(n, "inverse", 1);
  });
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ((*w)[0].dims, (std::vector<int64_t>{1, 3, 4, 2}));
  const std::vector<double> zs = z.ToDoubles(), ws = (*w)[0].ToDoubles();
  for (int r = 0; r < 3; ++r) {
    std::vector<Complex> line;
    for (int n = 0; n < 6; ++n) line.emplace_back(zs[(r * 6 + n) * 2], zs[(r * 6 + n) * 2 + 1]);
    const std::vector<Complex> want = Transform(line, 4, 4, true);
    for (int k = 0; k < 4; ++k) {
      EXPECT_NEAR(ws[(r * 4 + k) * 2], want[k].real(), 1e-6);
      EXPECT_NEAR(ws[(r * 4 + k) * 2 + 1], want[k].imag(), 1e-6);
    }
  }
  // Complex [1, 50, 2] forward, zero padded to 64 points (the radix-2 FFT; the lengths above
  // under 8 points and 6-point frames below take the direct sum).
  const HostTensor v = testing::RandomTensor({1, 50, 2}, 15);
  auto fft = RunSignal("DFT", {{"v", v}, {"len", Int64(64)}});
  ASSERT_TRUE(fft.ok()) << fft.status().message();
  ASSERT_EQ((*fft)[0].dims, (std::vector<int64_t>{1, 64, 2}));
  const std::vector<double> vs = v.ToDoubles(), fs = (*fft)[0].ToDoubles();
  std::vector<Complex> samples;
  for (int n = 0; n < 50; ++n) samples.emplace_back(vs[2 * n], vs[2 * n + 1]);
  const std::vector<Complex> spectrum = Transform(samples, 64, 64, false);
  for (int k = 0; k < 64; ++k) {
    EXPECT_NEAR(fs[2 * k], spectrum[k].real(), 1e-5);
    EXPECT_NEAR(fs[2 * k + 1], spectrum[k].imag(), 1e-5);
  }
  // Real [2, 100, 1] inverse over 100 points (not a power of two: the chirp-z transform).
  const HostTensor u = testing::RandomTensor({2, 100, 1}, 16);
  auto chirp = RunSignal("DFT", {{"u", u}, {"len", Int64(100)}},
                         [](onnx::NodeProto& n) { testing::SetInt(n, "inverse", 1); });
  ASSERT_TRUE(chirp.ok()) << chirp.status().message();
  const std::vector<double> us = u.ToDoubles(), cs = (*chirp)[0].ToDoubles();
  for (int b = 0; b < 2; ++b) {
    std::vector<Complex> line;
    for (int n = 0; n < 100; ++n) line.emplace_back(us[b * 100 + n], 0);
    const std::vector<Complex> want = Transform(line, 100, 100, true);
    for (int k = 0; k < 100; ++k) {
      EXPECT_NEAR(cs[(b * 100 + k) * 2], want[k].real(), 1e-6);
      EXPECT_NEAR(cs[(b * 100 + k) * 2 + 1], want[k].imag(), 1e-6);
    }
  }
  // Not a signal axis; onesided of a complex signal; a length past the kernels' bound.
  EXPECT_FALSE(
      RunSignal("DFT", {{"z", z}}, [](onnx::NodeProto& n) { testing::SetInt(n, "axis", 3); }).ok());
  EXPECT_FALSE(RunSignal("DFT", {{"z", z}}, [](onnx::NodeProto& n) {
                 testing::SetInt(n, "onesided", 1);
               }).ok());
  EXPECT_FALSE(RunSignal("DFT", {{"z", z}, {"len", Int64(int64_t{1} << 40)}}).ok());
}

// STFT's inputs (signal, frame_step, frame_length) given as the first three: the window omitted.
void NoWindow(onnx::NodeProto& n) {
  n.add_input(n.input(2));
  n.set_input(2, "");
}

TEST(SignalKernelsTest, StftTransformsWindowedFrames) {
  // [2, 30] real, frames of 8 every 5 samples (5 frames), a Hann window, onesided (5 bins).
  const HostTensor x = testing::RandomTensor({2, 30}, 13);
  std::vector<double> hann(8);
  for (int n = 0; n < 8; ++n) hann[n] = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * n / 8);
  auto y = RunSignal("STFT", {{"x", x},
                              {"step", Int64(5)},
                              {"w", HostTensor::FromDoubles(kFloat, {8}, hann)},
                              {"len", Int64(8)}});
  ASSERT_TRUE(y.ok()) << y.status().message();
  ASSERT_EQ((*y)[0].dims, (std::vector<int64_t>{2, 5, 5, 2}));
  const std::vector<double> xs = x.ToDoubles(), ys = (*y)[0].ToDoubles();
  for (int b = 0; b < 2; ++b)
    for (int f = 0; f < 5; ++f) {
      std::vector<Complex> frame;
      for (int n = 0; n < 8; ++n)
        frame.emplace_back(xs[b * 30 + f * 5 + n] * static_cast<float>(hann[n]), 0);
      const std::vector<Complex> want = Transform(frame, 8, 5, false);
      for (int k = 0; k < 5; ++k) {
        EXPECT_NEAR(ys[((b * 5 + f) * 5 + k) * 2], want[k].real(), 1e-6);
        EXPECT_NEAR(ys[((b * 5 + f) * 5 + k) * 2 + 1], want[k].imag(), 1e-6);
      }
    }
  // Complex [1, 12, 2], no window, frames of 6 every 6, both sides (6 bins).
  const HostTensor z = testing::RandomTensor({1, 12, 2}, 14);
  auto two =
      RunSignal("STFT", {{"z", z}, {"step", Int64(6)}, {"len", Int64(6)}}, [](onnx::NodeProto& n) {
        NoWindow(n);
        testing::SetInt(n, "onesided", 0);
      });
  ASSERT_TRUE(two.ok()) << two.status().message();
  ASSERT_EQ((*two)[0].dims, (std::vector<int64_t>{1, 2, 6, 2}));
  const std::vector<double> zs = z.ToDoubles(), ts = (*two)[0].ToDoubles();
  std::vector<Complex> second;
  for (int n = 6; n < 12; ++n) second.emplace_back(zs[2 * n], zs[2 * n + 1]);
  const std::vector<Complex> want = Transform(second, 6, 6, false);
  for (int k = 0; k < 6; ++k) {
    EXPECT_NEAR(ts[(6 + k) * 2], want[k].real(), 1e-6);
    EXPECT_NEAR(ts[(6 + k) * 2 + 1], want[k].imag(), 1e-6);
  }
  // A frame longer than the signal; a window other than frame_length.
  EXPECT_FALSE(
      RunSignal("STFT", {{"x", x}, {"step", Int64(5)}, {"len", Int64(31)}}, NoWindow).ok());
  EXPECT_FALSE(RunSignal("STFT", {{"x", x},
                                  {"step", Int64(5)},
                                  {"w", HostTensor::FromDoubles(kFloat, {8}, hann)},
                                  {"len", Int64(7)}})
                   .ok());
}

// The geometry the kernels and the import's rewrite share: frames, bins and output dims from the
// constant inputs; a step that is not a whole number (as a float the checker would refuse, which
// the plan must not cast) is refused by name.
TEST(SignalKernelsTest, PlansReadTheGeometryOnce) {
  onnx::NodeProto stft;
  stft.set_op_type("STFT");
  const HostTensor step = Int64(160), frame = Int64(400);
  auto plan = PlanStft(KernelContext(stft, 17, {nullptr, &step, nullptr, &frame}), {2, 16000});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->frames, 98);
  EXPECT_EQ(plan->bins, 201);
  EXPECT_EQ(plan->out_dims, (std::vector<int64_t>{2, 98, 201, 2}));
  EXPECT_EQ(plan->window, nullptr);
  for (double bad : {std::nan(""), 1e30, 2.5}) {
    const HostTensor f = Float(bad);
    auto refused = PlanStft(KernelContext(stft, 17, {nullptr, &f, nullptr, &frame}), {2, 16000});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("frame_step"), std::string::npos)
        << refused.status().message();
  }
  onnx::NodeProto dft;
  dft.set_op_type("DFT");
  testing::SetInt(dft, "axis", -2);
  testing::SetInt(dft, "onesided", 1);
  const HostTensor points = Int64(10);
  auto d = PlanDft(KernelContext(dft, 17, {nullptr, &points}), {3, 7, 1});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->axis, 1);
  EXPECT_EQ(d->length, 7);
  EXPECT_EQ(d->points, 10);
  EXPECT_EQ(d->out_dims, (std::vector<int64_t>{3, 6, 2}));
  EXPECT_FALSE(PlanDft(KernelContext(dft, 17, {nullptr, &points}), {3, 7, 2}).ok());  // complex
}

}  // namespace
}  // namespace verisub::runtime
