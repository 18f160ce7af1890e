// Generated kernels compute what their sub-operator graphs evaluate to, on random shapes; they
// are compiled once and found in the cache after; a missing compiler is a clear error.
#include "fusion/halide_kernel.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "runtime/graph_text.h"
#include "tests/fusion/fusion_test_util.h"
#include "tests/runtime/test_models.h"

namespace verisub::fusion {
namespace {

namespace fs = std::filesystem;
using runtime::HostTensor;

// A fresh cache folder, removed afterwards.
class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("verisub_kernels_" + std::to_string(getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
  static inline int counter_ = 0;
};

KernelCacheOptions In(const std::string& dir) {
  KernelCacheOptions o;
  o.dir = dir;
  return o;
}

// Runs `kernel` on float32 copies of `inputs`.
std::vector<double> RunKernel(const runtime::GeneratedKernel& kernel, const SubGraph& g,
                              const std::vector<std::vector<double>>& inputs) {
  std::vector<std::vector<float>> in32;
  std::vector<const float*> ptrs;
  for (const auto& v : inputs) in32.emplace_back(v.begin(), v.end());
  for (const auto& v : in32) ptrs.push_back(v.data());
  std::vector<float> out(NumElements(g.dims(g.output)), NAN);
  Status st = kernel.Run(ptrs, out.data());
  EXPECT_TRUE(st.ok()) << st.message();
  return {out.begin(), out.end()};
}

// Compiles `lowered` (all of `g`) into a fresh cache and runs it on `g`'s random inputs (`seed`)
// at each thread count: within `tolerance` (relative; 0: exactly) of what the sub-operator graph
// evaluates to.
void ExpectKernelComputesItsGraph(const runtime::Graph& g, const LoweredCluster& lowered,
                                  uint64_t seed, double tolerance,
                                  std::initializer_list<int> thread_counts) {
  TempDir dir;
  KernelCache compiled(In(dir.path()));
  auto kernel = compiled.Get(lowered.graph, "test");
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  const auto inputs = testing::ClusterInputs(g, lowered, runtime::testing::RandomInputs(g, seed));
  auto want = EvaluateSubGraph(lowered.graph, inputs);
  ASSERT_TRUE(want.ok());
  for (int threads : thread_counts) {
    omp_set_num_threads(threads);
    const std::vector<double> got = RunKernel(**kernel, lowered.graph, inputs);
    if (tolerance == 0.0)
      EXPECT_EQ(got, *want) << threads;
    else
      EXPECT_LT(testing::MaxRelDiff(got, *want), tolerance) << threads;
  }
}

TEST(HalideKernelTest, GeneratedKernelsEqualTheirSubOperatorGraphs) {
  TempDir dir;
  KernelCache cache(In(dir.path()));
  int kernels = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    for (const std::string& text : testing::SpecOperatorCases(seed)) {
      SCOPED_TRACE(text);
      auto g = runtime::ParseGraphText(text);
      ASSERT_TRUE(g.ok()) << g.status().message();
      auto lowered = testing::LowerWhole(*g);
      ASSERT_TRUE(lowered.ok()) << lowered.status().message();
      const auto inputs =
          testing::ClusterInputs(*g, *lowered, runtime::testing::RandomInputs(*g, seed));
      auto want = EvaluateSubGraph(lowered->graph, inputs);
      ASSERT_TRUE(want.ok()) << want.status().message();
      auto kernel = cache.Get(lowered->graph, "test");
      ASSERT_TRUE(kernel.ok()) << kernel.status().message();
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        // float32 arithmetic (and a polynomial erf) against double.
        EXPECT_LT(testing::MaxRelDiff(RunKernel(**kernel, lowered->graph, inputs), *want), 2e-5)
            << SubGraphText(lowered->graph);
      }
      ++kernels;
    }
  }
  EXPECT_EQ(cache.compiled() + cache.hits(), kernels);
  EXPECT_GT(cache.compiled(), kernels / 2);
}

SubGraph SoftmaxRows(int64_t rows = 3, int64_t cols = 40) {
  SubGraph g;
  const int x = g.Input({rows, cols});
  const int m = g.BroadcastTo(g.Reduce(ReduceFn::kMax, x, {1}), {rows, cols});
  const int e = g.Unary(UnaryFn::kExp, g.Binary(BinaryFn::kAdd, x, g.Unary(UnaryFn::kNeg, m)));
  const int s = g.BroadcastTo(g.Reduce(ReduceFn::kSum, e, {1}), {rows, cols});
  g.output = g.Binary(BinaryFn::kMul, e, g.Unary(UnaryFn::kRecip, s));
  return g;
}

TEST(HalideKernelTest, ASecondLoadCompilesNothing) {
  TempDir dir;
  const SubGraph g = SoftmaxRows();
  {
    KernelCache first(In(dir.path()));
    ASSERT_TRUE(first.Get(g, "softmax").ok());
    EXPECT_EQ(first.compiled(), 1);
    EXPECT_EQ(first.hits(), 0);
  }
  KernelCache second(In(dir.path()));
  auto k = second.Get(g, "softmax");
  ASSERT_TRUE(k.ok()) << k.status().message();
  EXPECT_EQ(second.compiled(), 0);
  EXPECT_EQ(second.hits(), 1);
  EXPECT_EQ((*k)->name().rfind("softmax#", 0), 0u) << (*k)->name();
  // Nothing but the runtime and the kernel is left in the folder (no temporary files).
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".so") << e.path();
  }
  EXPECT_EQ(files, 2);
}

TEST(HalideKernelTest, AMissingCompilerIsAClearError) {
  TempDir dir;
  KernelCacheOptions o = In(dir.path());
  o.compiler = "/nonexistent/cc";
  KernelCache cache(o);
  auto k = cache.Get(SoftmaxRows(), "softmax");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("/nonexistent/cc"), std::string::npos)
      << k.status().message();
}

TEST(HalideKernelTest, AMissingCodeGeneratorIsAClearError) {
  TempDir dir;
  KernelCacheOptions o = In(dir.path());
  o.codegen = "/nonexistent/libverisub_codegen.so";
  KernelCache cache(o);
  auto k = cache.Get(SoftmaxRows(), "softmax");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("/nonexistent/libverisub_codegen.so"), std::string::npos)
      << k.status().message();
}

TEST(HalideKernelTest, AMalformedGraphIsRefused) {
  TempDir dir;
  KernelCache cache(In(dir.path()));
  SubGraph g = SoftmaxRows();
  g.nodes[2].args = {7};  // an operand defined later
  auto k = cache.Get(g, "bad");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("%2"), std::string::npos) << k.status().message();
}

TEST(HalideKernelTest, TheStatementShowsTheSchedule) {
  KernelCache cache(In(""));
  // 256 rows of 512: four parallel tasks of 64 rows.
  auto s = cache.Statement(SoftmaxRows(256, 512));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NE(s->find("halide_do_par_for"), std::string::npos) << *s;
  EXPECT_NE(s->find("x16"), std::string::npos) << *s;  // 16-lane vectors
  // A small one runs on the calling thread: a task of the pool costs more than its work.
  auto small = cache.Statement(SoftmaxRows());
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->find("halide_do_par_for"), std::string::npos) << *small;
}

// A kernel large enough to split into parallel tasks (a softmax of 256 rows of 512: eight tasks)
// runs them on the caller's OpenMP threads and computes what its graph evaluates to, at one and
// two threads.
TEST(HalideKernelTest, ParallelTasksRunOnTheCallersThreads) {
  TempDir dir;
  KernelCache cache(In(dir.path()));
  const SubGraph g = SoftmaxRows(256, 512);
  auto kernel = cache.Get(g, "test");
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  std::vector<double> x(256 * 512);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i));
  auto want = EvaluateSubGraph(g, {x});
  ASSERT_TRUE(want.ok());
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    EXPECT_LT(testing::MaxRelDiff(RunKernel(**kernel, g, {x}), *want), 2e-5) << threads;
  }
}

// The CUDA target compiles without a GPU: the PTX of a softmax for sm_80 (the GPU backend's).
TEST(HalideKernelTest, CudaPtxWithoutAGpu) {
  KernelCache cache(In(""));
  auto ptx = cache.CudaPtx(SoftmaxRows());
  ASSERT_TRUE(ptx.ok()) << ptx.status().message();
  EXPECT_NE(ptx->find(".target sm_80"), std::string::npos) << ptx->substr(0, 400);
  EXPECT_NE(ptx->find(".entry"), std::string::npos);
  EXPECT_NE(ptx->find("ld.global"), std::string::npos);
  EXPECT_NE(ptx->find("st.global"), std::string::npos);
  EXPECT_FALSE(cache.CudaPtx(SoftmaxRows(), "x86-64-linux").ok());
}

// erf (a GELU's, or ONNX Erf) is a rational function of the clamped input, as the backend's own
// pass computes it (runtime/dnnl/vector_math.cc ErfOf), not an exp and a division besides:
// within 4e-7 of erf everywhere (the pass's own bound, reached near the +-4 clamp), NaN kept, +-inf
// to +-1.
TEST(HalideKernelTest, ErfIsARationalFunctionWithinFourTenMillionths) {
  SubGraph g;
  const int64_t n = 16 * 1024 + 5;  // and a tail
  g.output = g.Unary(UnaryFn::kErf, g.Input({n}));
  KernelCache cache(In(""));
  auto s = cache.Statement(g);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->find("exp_f32"), std::string::npos) << *s;
  TempDir dir;
  KernelCache compiled(In(dir.path()));
  auto kernel = compiled.Get(g, "test");
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  std::vector<double> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = -6.0 + 12.0 * static_cast<double>(i) / (n - 8);
  x[n - 5] = NAN, x[n - 4] = INFINITY, x[n - 3] = -INFINITY, x[n - 2] = 1e30, x[n - 1] = -1e-30;
  const std::vector<double> got = RunKernel(**kernel, g, {x});
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << got[i];
      continue;
    }
    const double want = std::erf(static_cast<double>(static_cast<float>(x[i])));
    worst = std::max(worst, std::abs(got[i] - want));
  }
  EXPECT_LT(worst, 4e-7);
}

// A channel shuffle (ShuffleNet's reshape, transpose, reshape) over 7x7 planes: each input axis of
// the reshapes reads only its own group of output axes, so the planes are read as they lie (one
// dense loop of 49, vectorized), not through a division and a modulo of the flat index per element.
TEST(HalideKernelTest, AChannelShuffleReadsItsPlanesDensely) {
  auto g = runtime::ParseGraphText(
      "input x [1,58,7,7]\n"
      "output (reshape[shape=[1,58,7,7]] (transpose[perm=[0,2,1,3,4]] "
      "(reshape[shape=[1,2,29,7,7]] x)))\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto lowered = testing::LowerWhole(*g);
  ASSERT_TRUE(lowered.ok()) << lowered.status().message();
  const std::string text = SubGraphText(lowered->graph);
  EXPECT_EQ(text.find("%7"), std::string::npos) << text;  // no modulo by a plane's width
  KernelCache cache(In(""));
  auto s = cache.Statement(lowered->graph);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NE(s->find("x16"), std::string::npos) << *s;
  ExpectKernelComputesItsGraph(*g, *lowered, 3, 0.0, {1});
}

// A masked softmax as GPT-style exports write it: the scores reshaped to [heads, tokens^2], the
// mask added, reshaped back. The reshapes come before the reductions, so each row's max and sum
// are still computed beside the row, in the parallel loop, not whole on one thread first; a
// reshape after a reduction (a group norm's way back) keeps them whole.
TEST(HalideKernelTest, AReshapeBeforeASoftmaxKeepsItsRowsParallel) {
  auto g = runtime::ParseGraphText(
      "input x [1,8,64,128]\n"
      "input m [8192]\n"
      "output (softmax[axis=3] (reshape[shape=[1,8,64,128]] "
      "(bias_add[axis=1] (reshape[shape=[8,8192]] x) m)))\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto lowered = testing::LowerWhole(*g);
  ASSERT_TRUE(lowered.ok()) << lowered.status().message();
  EXPECT_TRUE(ReductionsKeepOutputAxes(lowered->graph)) << SubGraphText(lowered->graph);
  KernelCache cache(In(""));
  auto s = cache.Statement(lowered->graph);
  ASSERT_TRUE(s.ok()) << s.status().message();
  // The parallel task (printed first, before the pipeline's own function) computes the rows'
  // reductions.
  const std::string task = s->substr(0, s->find("external_plus_metadata"));
  EXPECT_NE(s->find("halide_do_par_for"), std::string::npos) << *s;
  EXPECT_NE(task.find("vector_reduce(Max"), std::string::npos) << *s;
  EXPECT_NE(task.find("vector_reduce(Add"), std::string::npos) << *s;
  ExpectKernelComputesItsGraph(*g, *lowered, 5, 2e-5, {1, 2});

  auto group_norm = runtime::ParseGraphText(
      "input x [1,8,4,4]\n"
      "output (reshape[shape=[1,8,4,4]] (softmax[axis=2] (reshape[shape=[1,2,64]] x)))\n");
  ASSERT_TRUE(group_norm.ok()) << group_norm.status().message();
  auto lowered_gn = testing::LowerWhole(*group_norm);
  ASSERT_TRUE(lowered_gn.ok()) << lowered_gn.status().message();
  EXPECT_FALSE(ReductionsKeepOutputAxes(lowered_gn->graph)) << SubGraphText(lowered_gn->graph);
}

}  // namespace
}  // namespace verisub::fusion
