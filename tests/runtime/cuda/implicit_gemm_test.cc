// The implicit-GEMM Tensor-Core convolution (runtime/cuda/implicit_gemm.h). Without a GPU: the
// compiled tiles, the patent's candidate rule, and the index map the kernels read A through,
// which computes a convolution on the CPU equal to the direct loops. With a GPU: every tile's
// output, in float16 and bfloat16, with bias, residual and activation, against the direct loops
// on the same rounded inputs, and the measured search.
#include "runtime/cuda/implicit_gemm.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_util.h"
#include "runtime/cuda/implicit_gemm_search.h"

namespace verisub::runtime::cuda_backend {
namespace {

ConvGeometry Geometry(int n, int h, int w, int c, int k, int r, int s, int stride, int pad,
                      int dilation) {
  ConvGeometry g;
  g.n = n, g.h = h, g.w = w, g.c = c, g.k = k, g.r = r, g.s = s;
  g.stride_h = g.stride_w = stride;
  g.pad_h = g.pad_w = pad;
  g.dilation_h = g.dilation_w = dilation;
  g.p = ConvOutputExtent(h, r, pad, pad, stride, dilation);
  g.q = ConvOutputExtent(w, s, pad, pad, stride, dilation);
  return g;
}

// The direct loops over NHWC x and KRSC w (double), y [n, p, q, k].
std::vector<double> DirectConv(const ConvGeometry& g, const std::vector<double>& x,
                               const std::vector<double>& w) {
  std::vector<double> y(static_cast<size_t>(g.GemmM() * g.k), 0.0);
  for (int n = 0; n < g.n; ++n)
    for (int p = 0; p < g.p; ++p)
      for (int q = 0; q < g.q; ++q)
        for (int k = 0; k < g.k; ++k) {
          double sum = 0;
          for (int r = 0; r < g.r; ++r)
            for (int s = 0; s < g.s; ++s) {
              const int iy = p * g.stride_h - g.pad_h + r * g.dilation_h;
              const int ix = q * g.stride_w - g.pad_w + s * g.dilation_w;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              for (int c = 0; c < g.c; ++c)
                sum += x[((static_cast<size_t>(n) * g.h + iy) * g.w + ix) * g.c + c] *
                       w[((static_cast<size_t>(k) * g.r + r) * g.s + s) * g.c + c];
            }
          y[((static_cast<size_t>(n) * g.p + p) * g.q + q) * g.k + k] = sum;
        }
  return y;
}

std::vector<double> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& e : v) e = u(rng);
  return v;
}

TEST(ImplicitGemmTest, TheCompiledTilesAreThePatentsShapesAndFitSharedMemory) {
  std::set<std::string> names;
  for (const TileConfig& t : TileConfigs()) {
    EXPECT_TRUE((t.im == 16 && t.in == 16) || (t.im == 32 && t.in == 8) ||
                (t.im == 8 && t.in == 32))
        << t.Name();
    EXPECT_LE(t.SharedBytes(), 48 * 1024) << t.Name();
    EXPECT_LE(t.Threads(), 1024) << t.Name();
    EXPECT_EQ(t.BlockM(), t.tm * t.om * t.im);
    EXPECT_TRUE(names.insert(t.Name()).second) << "two tiles named " << t.Name();
  }
  EXPECT_EQ(names.size(), 12u);
}

TEST(ImplicitGemmTest, CandidatesFollowThePatentsRule) {
  auto shapes = [](const ConvGeometry& g) {
    std::set<int> im;
    for (const TileConfig& t : TileCandidates(g)) {
      EXPECT_EQ(t.in, 256 / t.im) << t.Name();
      im.insert(t.im);
    }
    return im;
  };
  // GEMM_M = 1 * 56 * 56 = 3136, a multiple of 32: fragments of 8, 16 and 32 rows.
  EXPECT_EQ(shapes(Geometry(1, 56, 56, 64, 64, 3, 3, 1, 1, 1)), (std::set<int>{8, 16, 32}));
  // 1 * 14 * 14 = 196: a multiple of 4 only: 8 rows.
  EXPECT_EQ(shapes(Geometry(1, 14, 14, 64, 64, 3, 3, 1, 1, 1)), (std::set<int>{8}));
  // 1 * 4 * 4 = 16: 8 and 16.
  EXPECT_EQ(shapes(Geometry(1, 4, 4, 64, 64, 1, 1, 1, 0, 1)), (std::set<int>{8, 16}));
  // A small problem (GEMM 16 x 8) keeps the small tiles only: none more than twice as wide as
  // its columns rounded to 32.
  for (const TileConfig& t : TileCandidates(Geometry(1, 4, 4, 8, 8, 1, 1, 1, 0, 1)))
    EXPECT_LE(t.BlockN(), 64) << t.Name();
  EXPECT_FALSE(TileCandidates(Geometry(1, 4, 4, 8, 8, 1, 1, 1, 0, 1)).empty());
  // A large one (GEMM_M 25088, a multiple of 32) keeps all twelve.
  EXPECT_EQ(TileCandidates(Geometry(8, 56, 56, 256, 256, 1, 1, 1, 0, 1)).size(), 12u);
}

TEST(ImplicitGemmTest, UnsupportedGeometriesSayWhy) {
  EXPECT_EQ(ImplicitGemmUnsupported(Geometry(1, 8, 8, 16, 16, 3, 3, 1, 1, 1)), "");
  EXPECT_NE(ImplicitGemmUnsupported(Geometry(1, 224, 224, 3, 64, 7, 7, 2, 3, 1)).find("channels"),
            std::string::npos);
  EXPECT_NE(ImplicitGemmUnsupported(Geometry(1, 8, 8, 16, 12, 3, 3, 1, 1, 1)).find("output"),
            std::string::npos);
  EXPECT_TRUE(TileCandidates(Geometry(1, 224, 224, 3, 64, 7, 7, 2, 3, 1)).empty());
  EXPECT_NE(LaunchImplicitGemmConv(nullptr, DType::kF16, TileConfigs()[0],
                                   Geometry(1, 8, 8, 3, 8, 3, 3, 1, 1, 1), nullptr, nullptr,
                                   nullptr, nullptr, 0, nullptr),
            cudaSuccess);
}

// The index map the kernels load A through, used as a GEMM on the CPU, is the convolution.
TEST(ImplicitGemmTest, TheIndexMapComputesTheConvolution) {
  std::mt19937 rng(27);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  for (int trial = 0; trial < 60; ++trial) {
    const int r = pick(1, 3), s = pick(1, 3), dilation = pick(1, 2), stride = pick(1, 2);
    const int h = pick(r * dilation, 9), w = pick(s * dilation, 9);
    const ConvGeometry g = Geometry(pick(1, 2), h, w, 8 * pick(1, 2), 8 * pick(1, 2), r, s, stride,
                                    pick(0, 2), dilation);
    ASSERT_GT(g.p, 0);
    ASSERT_GT(g.q, 0);
    const std::vector<double> x = Random(static_cast<size_t>(g.n) * g.h * g.w * g.c, trial);
    const std::vector<double> wt = Random(static_cast<size_t>(g.k) * g.GemmK(), 100 + trial);
    const std::vector<double> want = DirectConv(g, x, wt);
    for (int64_t m = 0; m < g.GemmM(); ++m)
      for (int64_t n = 0; n < g.GemmN(); ++n) {
        double sum = 0;
        for (int64_t kk = 0; kk < g.GemmK(); ++kk) {
          const int64_t o = ImplicitGemmOffset(g, m, kk);
          if (o >= 0) sum += x[o] * wt[n * g.GemmK() + kk];
        }
        ASSERT_NEAR(sum, want[m * g.GemmN() + n], 1e-9) << "trial " << trial << " m " << m;
      }
  }
}

TEST(ImplicitGemmTest, TileKeysNameEveryField) {
  ConvGeometry g = Geometry(1, 56, 56, 64, 64, 3, 3, 1, 1, 1);
  const std::string key = TileKey(DType::kF16, g, TileConfigs()[0]);
  EXPECT_EQ(key,
            "igemm f16 n1 h56 w56 c64 k64 r3 s3 p56 q56 u1 v1 ph1 pw1 dh1 dw1 "
            "m16n16k16_w2x2_f2x2_k32");
  g.dilation_w = 2;
  EXPECT_NE(TileKey(DType::kF16, g, TileConfigs()[0]), key);
  EXPECT_NE(TileKey(DType::kBF16, Geometry(1, 56, 56, 64, 64, 3, 3, 1, 1, 1), TileConfigs()[0]),
            key);
}

class ImplicitGemmGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status st = CudaDeviceStatus();
    if (!st.ok()) GTEST_SKIP() << "no GPU: " << st.message();
  }
};

// Host values rounded to the storage type (and `v` to what they hold).
template <class T>
std::vector<T> Narrow(std::vector<double>* v) {
  std::vector<T> out(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    out[i] = FloatToStored<T>(static_cast<float>((*v)[i]));
    (*v)[i] = StoredToFloat(out[i]);
  }
  return out;
}

template <class T>
StatusOr<cuda_util::DeviceBuffer> Upload(const std::vector<T>& host) {
  cuda_util::DeviceBuffer b;
  VERISUB_RETURN_IF_ERROR(b.Allocate(std::max<size_t>(host.size() * sizeof(T), 16)));
  VERISUB_RETURN_IF_ERROR(cuda_util::Check(
      cudaMemcpy(b.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
      "cudaMemcpy"));
  return b;
}

// Every tile on `g` in type T, with a bias, a residual and a ReLU, against the direct loops on
// the rounded inputs; the largest error relative to the output's largest magnitude.
template <class T>
void CheckEveryTile(const ConvGeometry& g, DType t, double tolerance) {
  std::vector<double> x = Random(static_cast<size_t>(g.n) * g.h * g.w * g.c, 1);
  std::vector<double> w = Random(static_cast<size_t>(g.k) * g.GemmK(), 2);
  std::vector<double> z = Random(static_cast<size_t>(g.GemmM() * g.k), 3);
  std::vector<double> bias = Random(g.k, 4);
  const std::vector<T> xh = Narrow<T>(&x), wh = Narrow<T>(&w), zh = Narrow<T>(&z);
  std::vector<float> bias_f(bias.begin(), bias.end());
  std::vector<double> want = DirectConv(g, x, w);
  double scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = std::max(0.0, want[i] + static_cast<float>(bias[i % g.k]) + z[i]);
    scale = std::max(scale, std::abs(want[i]));
  }
  auto dx = Upload(xh), dw = Upload(wh), dz = Upload(zh), db = Upload(bias_f);
  ASSERT_TRUE(dx.ok() && dw.ok() && dz.ok() && db.ok());
  cuda_util::DeviceBuffer dy;
  ASSERT_TRUE(dy.Allocate(want.size() * sizeof(T)).ok());
  std::vector<T> got(want.size());
  for (const TileConfig& tile : TileConfigs()) {
    ASSERT_EQ(cudaMemset(dy.get(), 0xff, want.size() * sizeof(T)), cudaSuccess);
    ASSERT_EQ(LaunchImplicitGemmConv(nullptr, t, tile, g, dx->get(), dw->get(), db->f(), dz->get(),
                                     /*relu*/ 1, dy.get()),
              cudaSuccess)
        << tile.Name();
    ASSERT_EQ(cudaMemcpy(got.data(), dy.get(), got.size() * sizeof(T), cudaMemcpyDeviceToHost),
              cudaSuccess)
        << tile.Name();
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::abs(StoredToFloat(got[i]) - want[i]));
    EXPECT_LE(worst, tolerance * std::max(scale, 1.0))
        << tile.Name() << " on n" << g.n << " h" << g.h << " c" << g.c << " k" << g.k << " r" << g.r
        << " stride " << g.stride_h;
  }
}

// Shapes with partial tiles in M, N and K, strides, padding and dilation.
std::vector<ConvGeometry> GpuGeometries() {
  return {Geometry(1, 14, 14, 64, 64, 3, 3, 1, 1, 1), Geometry(2, 9, 11, 24, 40, 3, 3, 2, 1, 1),
          Geometry(1, 7, 7, 256, 72, 1, 1, 1, 0, 1), Geometry(1, 12, 12, 16, 8, 3, 3, 1, 2, 2),
          Geometry(3, 5, 5, 8, 264, 5, 5, 1, 2, 1)};
}

TEST_F(ImplicitGemmGpuTest, EveryTileComputesTheConvolutionInFloat16) {
  for (const ConvGeometry& g : GpuGeometries()) CheckEveryTile<__half>(g, DType::kF16, 4e-3);
}

TEST_F(ImplicitGemmGpuTest, EveryTileComputesTheConvolutionInBfloat16) {
  for (const ConvGeometry& g : GpuGeometries())
    CheckEveryTile<__nv_bfloat16>(g, DType::kBF16, 2e-2);
}

TEST_F(ImplicitGemmGpuTest, TheSearchTimesEveryCandidateOnceAndRemembers) {
  const ConvGeometry g = Geometry(1, 28, 28, 128, 128, 3, 3, 1, 1, 1);
  cuda_util::DeviceBuffer x, w, y;
  ASSERT_TRUE(x.Allocate(static_cast<size_t>(g.n) * g.h * g.w * g.c * 2).ok());
  ASSERT_TRUE(w.Allocate(static_cast<size_t>(g.k) * g.GemmK() * 2).ok());
  ASSERT_TRUE(y.Allocate(static_cast<size_t>(g.GemmM()) * g.k * 2).ok());
  CostTable table;
  auto first = SearchTiles(nullptr, DType::kF16, g, x.get(), w.get(), y.get(), &table);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->size(), TileCandidates(g).size());
  for (size_t i = 1; i < first->size(); ++i)
    EXPECT_LE((*first)[i - 1].seconds, (*first)[i].seconds);
  EXPECT_FALSE((*first)[0].from_table);
  EXPECT_EQ(table.size(), static_cast<int64_t>(first->size()));
  auto again = SearchTiles(nullptr, DType::kF16, g, x.get(), w.get(), y.get(), &table);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)[0].from_table);
  EXPECT_EQ((*again)[0].tile, (*first)[0].tile);
}

}  // namespace
}  // namespace verisub::runtime::cuda_backend
