// The oneDNN backend with generated kernels (PrepareOptions::generator): models whose
// memory-bound chains become generated kernels compute what the reference backend does.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "fusion/generator.h"
#include "runtime/dnnl/dnnl_backend.h"
#include "runtime/executor.h"
#include "runtime/graph_text.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/dnnl/dnnl_test_util.h"
#include "tests/runtime/test_models.h"

namespace verisub::fusion {
namespace {

namespace fs = std::filesystem;
using runtime::testing::ModelBuilder;

struct Result {
  runtime::PrepareStats stats;
  runtime::testing::Comparison cmp;
  std::vector<runtime::StepProfile> profile;
};

Result RunWithGenerator(const std::string& bytes, const std::shared_ptr<SubopGenerator>& gen,
                        int threads = 1) {
  Result r;
  auto g = runtime::ImportOnnxBytes(bytes, "model");
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return r;
  const auto inputs = runtime::testing::RandomInputs(*g, 5);
  runtime::PrepareOptions options;
  options.num_threads = threads;
  options.generator = gen;
  auto m = runtime::MakeDnnlBackend()->Prepare(*g, options);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return r;
  r.stats = (*m)->stats();
  auto got = (*m)->Run(inputs);
  auto want = runtime::Execute(*g, inputs);
  EXPECT_TRUE(got.ok() && want.ok());
  if (got.ok() && want.ok()) r.cmp = runtime::testing::Compare(*got, *want);
  auto profile = (*m)->Profile(1, true);
  if (profile.ok()) r.profile = *profile;
  return r;
}

class BackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("verisub_backend_kernels_" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::shared_ptr<SubopGenerator> Generator() {
    KernelCacheOptions o;
    o.dir = dir_.string();
    return std::make_shared<SubopGenerator>(o);
  }
  fs::path dir_;
};

// A layer normalization written out as PyTorch's older exports and RMSNorm-style models do
// (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add), between two matmuls: one kernel.
std::string DecomposedLayerNorm() {
  ModelBuilder b(13);
  b.Input("x", {2, 7, 32}).Output("y", {2, 7, 16});
  b.RandomWeight("w1", {32, 32}, 1).RandomWeight("w2", {32, 16}, 2);
  b.RandomWeight("gamma", {32}, 3).RandomWeight("beta", {32}, 4);
  b.Weight("two", runtime::HostTensor::FromDoubles(runtime::kFloat, {}, {2.0}));
  b.Weight("eps", runtime::HostTensor::FromDoubles(runtime::kFloat, {}, {1e-5}));
  b.Node("MatMul", {"x", "w1"}, {"h"});
  runtime::testing::SetInts(b.Node("ReduceMean", {"h"}, {"mean"}), "axes", {-1});
  b.Node("Sub", {"h", "mean"}, {"c"});
  b.Node("Pow", {"c", "two"}, {"sq"});
  runtime::testing::SetInts(b.Node("ReduceMean", {"sq"}, {"var"}), "axes", {-1});
  b.Node("Add", {"var", "eps"}, {"ve"});
  b.Node("Sqrt", {"ve"}, {"sd"});
  b.Node("Div", {"c", "sd"}, {"n"});
  b.Node("Mul", {"n", "gamma"}, {"ng"});
  b.Node("Add", {"ng", "beta"}, {"nb"});
  b.Node("MatMul", {"nb", "w2"}, {"y"});
  return b.Bytes();
}

TEST_F(BackendTest, ADecomposedLayerNormIsOneGeneratedKernel) {
  auto gen = Generator();
  for (int threads : {1, 2}) {
    Result r = RunWithGenerator(DecomposedLayerNorm(), gen, threads);
    EXPECT_EQ(r.cmp.error, "");
    EXPECT_LT(r.cmp.max_rel, 1e-4);
    EXPECT_EQ(r.stats.generated_kernels, 1) << threads;
    EXPECT_GE(r.stats.generated_nodes, 9);
    bool named = false;
    for (const runtime::StepProfile& p : r.profile) named |= p.kind.rfind("gen:", 0) == 0;
    EXPECT_TRUE(named) << "the profile names the generated kernel";
  }
  // The second prepare found the kernel compiled; a fresh generator on the same folder too.
  EXPECT_EQ(gen->compiled(), 1);
  auto again = RunWithGenerator(DecomposedLayerNorm(), Generator());
  EXPECT_EQ(again.stats.kernels_compiled, 0);
  EXPECT_EQ(again.stats.kernel_cache_hits, 1);
}

// One node the library has a kernel for is generated too (a softmax: nothing to fuse, but the
// generated kernel may be the faster; --fusion auto decides by timing), with the same values.
TEST_F(BackendTest, ASoftmaxAloneIsAGeneratedKernel) {
  ModelBuilder b(17);
  b.Input("x", {2, 12, 30}).Output("y", {2, 12, 30});
  b.Node("Softmax", {"x"}, {"y"});
  Result r = RunWithGenerator(b.Bytes(), Generator());
  EXPECT_EQ(r.cmp.error, "");
  EXPECT_LT(r.cmp.max_rel, 1e-4);
  EXPECT_EQ(r.stats.generated_kernels, 1);
  EXPECT_EQ(r.stats.generated_nodes, 1);
}

// A channels-last block's tail (ConvNeXt): a per-channel scale, the permute back to channels
// first, the residual add and an activation, after a convolution: whatever form the import gives
// them, the nodes after the convolution are one generated kernel, the convolution the library's.
TEST_F(BackendTest, TheTailOfAChannelsLastBlockIsOneKernel) {
  ModelBuilder b(13);
  b.Input("x", {1, 8, 6, 6}).Input("r", {1, 8, 6, 6}).Output("y", {1, 8, 6, 6});
  b.RandomWeight("w", {8, 8, 3, 3}, 1).RandomWeight("gamma", {8}, 2);
  runtime::testing::SetInts(b.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  runtime::testing::SetInts(b.Node("Transpose", {"c"}, {"t"}), "perm", {0, 2, 3, 1});
  b.Node("Mul", {"t", "gamma"}, {"s"});
  b.Node("Sigmoid", {"s"}, {"g"});
  runtime::testing::SetInts(b.Node("Transpose", {"g"}, {"u"}), "perm", {0, 3, 1, 2});
  b.Node("Add", {"u", "r"}, {"a"});
  b.Node("Tanh", {"a"}, {"y"});
  auto g = runtime::ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  Result r = RunWithGenerator(b.Bytes(), Generator());
  EXPECT_EQ(r.cmp.error, "");
  EXPECT_LT(r.cmp.max_rel, 1e-4);
  EXPECT_EQ(r.stats.generated_kernels, 1);
  EXPECT_EQ(r.stats.generated_nodes, g->num_nodes() - 1) << runtime::PrintGraphText(*g);
}

// Without a C compiler to link kernels, the clusters run on the library's kernels and the
// prepare statistics say why.
TEST_F(BackendTest, WithoutACompilerTheLibraryRunsAndSaysWhy) {
  KernelCacheOptions o;
  o.dir = dir_.string();
  o.compiler = "/nonexistent/cc";
  Result r = RunWithGenerator(DecomposedLayerNorm(), std::make_shared<SubopGenerator>(o));
  EXPECT_EQ(r.cmp.error, "");
  EXPECT_LT(r.cmp.max_rel, 1e-4);
  EXPECT_EQ(r.stats.generated_kernels, 0);
  EXPECT_NE(r.stats.generator_error.find("/nonexistent/cc"), std::string::npos)
      << r.stats.generator_error;
}

TEST_F(BackendTest, WholeModelsStayEqual) {
  auto gen = Generator();
  for (const std::string& bytes :
       {runtime::testing::SmallTransformerBytes(), runtime::testing::SmallCnnBytes()}) {
    Result r = RunWithGenerator(bytes, gen);
    EXPECT_EQ(r.cmp.error, "");
    EXPECT_LT(r.cmp.max_rel, 1e-4);
  }
}

}  // namespace
}  // namespace verisub::fusion
