// The CUDA backend. The arena planner runs everywhere; the rest needs a GPU and is skipped,
// with the reason, where CUDA finds none (CI, the development machines): every GPU kernel
// against the reference backend on random inputs, the fusions, the CPU fallback, CUDA graph
// replay, and every development model (smaller images) within 1e-4 of max |reference|.
#include "runtime/cuda/cuda_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "onnx/onnx_pb.h"
#include "runtime/cuda/arena.h"
#include "runtime/graph_text.h"
#include "runtime/models/models.h"
#include "runtime/onnx_import.h"
#include "runtime/reference_backend.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using cuda_backend::ArenaBuffer;
using cuda_backend::PlanArena;
using cuda_backend::PlanIsValid;

constexpr double kTolerance = 1e-4;

TEST(CudaArenaTest, BuffersLiveAtOnceNeverShareBytes) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<ArenaBuffer> b(1 + rng() % 40);
    for (auto& x : b) {
      x.bytes = 1 + rng() % 5000;
      x.first = static_cast<int>(rng() % 30);
      x.last = x.first + static_cast<int>(rng() % 10);
    }
    auto plan = PlanArena(b, 64);
    ASSERT_TRUE(PlanIsValid(b, plan)) << "trial " << trial;
    int64_t sum = 0;
    for (auto& x : b) sum += (x.bytes + 63) / 64 * 64;
    EXPECT_LE(plan.bytes, sum);
    for (int64_t o : plan.offsets) EXPECT_EQ(o % 64, 0);
  }
}

TEST(CudaArenaTest, AChainReusesMemory) {
  // x0 -> x1 -> x2 -> x3: each buffer lives over two steps, so two slots suffice.
  std::vector<ArenaBuffer> b;
  for (int s = 0; s < 4; ++s) b.push_back({1024, s, s + 1});
  auto plan = PlanArena(b, 256);
  EXPECT_TRUE(PlanIsValid(b, plan));
  EXPECT_EQ(plan.bytes, 2048);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
}

TEST(CudaArenaTest, ADetectedOverlapIsInvalid) {
  std::vector<ArenaBuffer> b = {{100, 0, 2}, {100, 1, 3}};
  cuda_backend::ArenaPlan plan;
  plan.offsets = {0, 50};
  plan.bytes = 150;
  EXPECT_FALSE(PlanIsValid(b, plan));
}

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status st = CudaDeviceStatus();
    if (!st.ok()) GTEST_SKIP() << "no GPU: " << st.message();
  }

  // Runs `g` on the GPU (twice: eager, then the captured graph) and on the reference backend;
  // returns the GPU model's statistics. `narrow` (kFloat16, kBfloat16 or 0): every float
  // activation stored so, and the outputs compared by relative norm within `norm_tolerance`.
  PrepareStats Check(const Graph& g, const std::string& name, uint64_t seed = 7, int32_t narrow = 0,
                     double norm_tolerance = 0) {
    PrepareStats stats;
    PrepareOptions options;
    if (narrow) {
      options.storage_types.assign(g.num_values(), 0);
      for (int v = 0; v < g.num_values(); ++v)
        if (g.value(v).elem_type == kFloat && !g.value(v).constant && !g.value(v).dims.empty())
          options.storage_types[v] = narrow;  // scalars stay float32, as a Session keeps them
    }
    auto gpu = MakeCudaBackend()->Prepare(g, options);
    if (!gpu.ok()) {
      ADD_FAILURE() << name << ": " << gpu.status().message();
      return stats;
    }
    stats = (*gpu)->stats();
    auto ref = MakeReferenceBackend()->Prepare(g, {});
    EXPECT_TRUE(ref.ok());
    if (!ref.ok()) return stats;
    for (int round = 0; round < 2; ++round) {
      auto inputs = testing::RandomInputs(g, seed + round);
      auto a = (*gpu)->Run(inputs);
      auto b = (*ref)->Run(inputs);
      if (!a.ok() || !b.ok()) {
        ADD_FAILURE() << name << ": " << (a.ok() ? b.status() : a.status()).message();
        return stats;
      }
      EXPECT_EQ(a->size(), b->size()) << name;
      for (size_t o = 0; o < std::min(a->size(), b->size()); ++o) {
        const auto x = (*a)[o].ToDoubles(), y = (*b)[o].ToDoubles();
        EXPECT_EQ((*a)[o].dims, (*b)[o].dims) << name;
        if (x.size() != y.size()) continue;
        double ref_max = 0, err = 0, diff2 = 0, ref2 = 0;
        for (size_t i = 0; i < x.size(); ++i) {
          ref_max = std::max(ref_max, std::abs(y[i]));
          err = std::max(err, std::isnan(x[i]) ? INFINITY : std::abs(x[i] - y[i]));
          diff2 += (x[i] - y[i]) * (x[i] - y[i]);
          ref2 += y[i] * y[i];
        }
        if (narrow) {
          const double rel =
              std::isnan(diff2) ? INFINITY : std::sqrt(diff2 / std::max(ref2, 1e-30));
          EXPECT_LE(rel, norm_tolerance) << name << " output " << o << " round " << round;
          if (round == 0)
            std::printf("%-28s %s relative error %.2e\n", name.c_str(),
                        narrow == kFloat16 ? "fp16" : "bf16", rel);
        } else {
          EXPECT_LE(err, kTolerance * std::max(ref_max, 1e-6))
              << name << " output " << o << " round " << round << " (max |ref| " << ref_max << ")";
        }
      }
    }
    return stats;
  }

  PrepareStats CheckText(const std::string& text, const std::string& name, int32_t narrow = 0,
                         double norm_tolerance = 0) {
    auto g = ParseGraphText(text);
    EXPECT_TRUE(g.ok()) << name << ": " << g.status().message();
    return g.ok() ? Check(*g, name, 7, narrow, norm_tolerance) : PrepareStats();
  }
};

TEST_F(CudaBackendTest, ConvolutionAbsorbsScaleBiasResidualAndActivation) {
  for (std::string act : {"relu", "silu", "hard_swish"}) {
    PrepareStats s = CheckText(
        "input x [1,8,10,10]\ninput r [1,16,10,10]\nweight w [16,8,3,3]\nweight s [16]\n"
        "weight b [16]\noutput (" +
            act +
            " (ewadd (bias_add[axis=1] (channel_scale[axis=1] "
            "(conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] x w) s) b) r))\n",
        "conv_" + act);
    EXPECT_EQ(s.fused_nodes, 4) << act;
    EXPECT_EQ(s.steps, 1) << act;
    EXPECT_EQ(s.fallback_nodes, 0) << act;
  }
}

// One graph per GPU kernel: (name, graph text).
std::vector<std::pair<std::string, std::string>> OpCases() {
  std::vector<std::pair<std::string, std::string>> c = {
      {"pool_max",
       "input x [1,4,9,9]\noutput (pool_max[kernel_h=3,kernel_w=3,stride_h=2,stride_w=2,"
       "padding=same,activation=none] x)\n"},
      {"pool_avg",
       "input x [1,4,9,9]\noutput (pool_avg[kernel_h=3,kernel_w=3,stride_h=1,stride_w=1,"
       "padding=same,activation=relu] x)\n"},
      {"smul", "input x [2,3,4,5]\ninput s []\noutput (smul x s)\n"},
      {"affine",
       "input x [2,6,4,5]\nweight s [6]\nweight b [6]\n"
       "output (relu (bias_add[axis=1] (channel_scale[axis=1] x s) b))\n"},
      {"softmax_last", "input x [3,7,33]\noutput (softmax[axis=2] x)\n"},
      {"softmax_middle", "input x [3,7,33]\noutput (softmax[axis=1] x)\n"},
      {"layer_norm",
       "input x [4,5,48]\nweight s [48]\nweight b [48]\n"
       "output (layer_norm[axis=2,epsilon=1e-5] x s b)\n"},
      {"transpose", "input x [2,3,4,5]\noutput (transpose[perm=[0,2,3,1]] x)\n"},
      {"slice", "input x [2,9,4]\noutput (slice[axis=1,start=2,end=7] x)\n"},
      {"concat", "input x [2,3,4]\ninput y [2,5,4]\noutput (concat[axis=1] x y)\n"},
      {"reduce_mean", "input x [2,3,4,5]\noutput (reduce_mean[axes=12,keepdims=1] x)\n"},
      {"matmul_bias_relu",
       "input a [6,32]\nweight b [32,24]\nweight c [24]\n"
       "output (relu (bias_add[axis=1] (matmul a b) c))\n"},
      {"matmul_batch_rows", "input a [2,3,6,32]\nweight b [32,24]\noutput (matmul a b)\n"},
      {"matmul_batched", "input a [4,6,32]\ninput b [4,32,5]\noutput (matmul a b)\n"},
      {"matmul_shared_a", "input a [6,32]\ninput b [3,32,5]\noutput (matmul a b)\n"},
  };
  for (std::string op : {"relu", "sigmoid", "tanh", "relu6", "hard_sigmoid", "hard_swish", "silu",
                         "gelu", "gelu_tanh", "exp", "erf"})
    c.push_back({op, "input x [2,3,4,5]\noutput (" + op + " x)\n"});
  for (std::string op : {"ewadd", "ewsub", "ewmul"})
    c.push_back({op, "input x [2,3,4,5]\ninput y [2,3,4,5]\noutput (" + op + " x y)\n"});
  for (std::string params : {"stride_h=1,stride_w=1,padding=same,activation=none,group=1",
                             "stride_h=2,stride_w=2,padding=same,activation=relu,group=1",
                             "stride_h=1,stride_w=2,padding=valid,activation=sigmoid,group=1",
                             "stride_h=2,stride_w=2,padding=same,activation=none,group=dw"}) {
    const bool dw = params.find("group=dw") != std::string::npos;
    c.push_back({"conv2d[" + params + "]",
                 "input x [2,8,13,11]\n" +
                     std::string(dw ? "weight w [8,1,3,3]\n" : "weight w [16,8,3,3]\n") +
                     "output (conv2d[" + params + "] x w)\n"});
  }
  return c;
}

// Without a GPU too: every case parses and the backend claims a kernel for each of its nodes.
TEST(CudaBackendCasesTest, EveryCaseHasGpuKernels) {
  auto backend = MakeCudaBackend();
  for (const auto& [name, text] : OpCases()) {
    auto g = ParseGraphText(text);
    ASSERT_TRUE(g.ok()) << name << ": " << g.status().message();
    for (int i = 0; i < g->num_nodes(); ++i)
      EXPECT_TRUE(backend->CanRun(*g, g->node(i))) << name << ": " << g->node(i).KindName();
  }
}

TEST_F(CudaBackendTest, EveryKernelMatchesTheReference) {
  for (const auto& [name, text] : OpCases()) {
    PrepareStats s = CheckText(text, name);
    EXPECT_EQ(s.fallback_nodes, 0) << name;
    if (name == "affine") {
      EXPECT_EQ(s.steps, 1);
    }
  }
  PrepareStats m = CheckText(
      "input a [6,32]\nweight b [32,24]\nweight c [24]\n"
      "output (gelu_tanh (bias_add[axis=1] (matmul a b) c))\n",
      "matmul_bias_gelu_tanh");
  EXPECT_EQ(m.fused_nodes, 2);
}

// Every kernel with its activations stored in float16 and in bfloat16 (float32 arithmetic):
// within the rounding of the storage type, and still no CPU fallback.
TEST_F(CudaBackendTest, EveryKernelIn16Bits) {
  for (auto [narrow, tolerance] : {std::pair{kFloat16, 5e-3}, std::pair{kBfloat16, 3e-2}})
    for (const auto& [name, text] : OpCases())
      EXPECT_EQ(CheckText(text, name, narrow, tolerance).fallback_nodes, 0) << name;
}

// Two convolutions meeting in a residual add (ResNet's downsampling blocks): one group takes
// the add and the relu, the other stops before them; each node runs exactly once.
TEST_F(CudaBackendTest, TwoConvolutionsShareOneResidualAdd) {
  const std::string conv = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";
  PrepareStats s = CheckText(
      "input x [1,8,10,10]\nweight w1 [16,8,1,1]\nweight w2 [16,8,3,3]\nweight b1 [16]\n"
      "weight b2 [16]\noutput (relu (ewadd (bias_add[axis=1] (" +
          conv +
          " x w1) b1) "
          "(bias_add[axis=1] (" +
          conv + " x w2) b2)))\n",
      "downsample");
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.fused_nodes, 4);
}

// ONNX pooling the import keeps (NasNet's average pooling that excludes padding) runs on cuDNN.
TEST_F(CudaBackendTest, OnnxPooling) {
  for (std::string op : {"AveragePool", "MaxPool"}) {
    for (int include : {0, 1}) {
      testing::ModelBuilder b;
      b.Input("x", {1, 4, 9, 9}).Output("y", {1, 4, 9, 9});
      auto& n = b.Node(op, {"x"}, {"y"});
      testing::SetInts(n, "kernel_shape", {3, 3});
      testing::SetInts(n, "pads", {1, 1, 1, 1});
      if (op == "AveragePool") testing::SetInt(n, "count_include_pad", include);
      ImportOptions options;
      options.map_to_spec_ops = false;
      auto g = ImportOnnxBytes(b.Bytes(), op, options);
      ASSERT_TRUE(g.ok()) << g.status().message();
      EXPECT_EQ(Check(*g, op + std::to_string(include)).fallback_nodes, 0) << op;
    }
  }
}

// ONNX operators kept as they are: broadcasting Add and Mul, Split and Concat, and Neg, which
// has no GPU kernel.
StatusOr<Graph> OnnxGraph() {
  testing::ModelBuilder b;
  b.Input("x", {2, 3, 4, 5}).Input("y", {3, 1, 5}).Output("z", {2, 3, 4, 5});
  b.Node("Add", {"x", "y"}, {"s"});
  b.Node("Neg", {"s"}, {"n"});
  b.Node("Mul", {"n", "x"}, {"m"});
  testing::SetInt(b.Node("Split", {"m"}, {"m1", "m2"}), "axis", 2);  // two halves along H
  testing::SetInt(b.Node("Concat", {"m2", "m1"}, {"z"}), "axis", 2);
  ImportOptions options;
  options.map_to_spec_ops = false;
  return ImportOnnxBytes(b.Bytes(), "onnx_ops", options);
}

TEST(CudaBackendCasesTest, OnnxOperatorsBesidesNegHaveGpuKernels) {
  auto g = OnnxGraph();
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto backend = MakeCudaBackend();
  for (int i = 0; i < g->num_nodes(); ++i)
    EXPECT_EQ(backend->CanRun(*g, g->node(i)), g->node(i).KindName() != "onnx:Neg")
        << g->node(i).KindName();
}

// The same on the GPU: Neg runs on the CPU between GPU kernels, with the right result.
TEST_F(CudaBackendTest, OnnxOperatorsAndCpuFallback) {
  auto g = OnnxGraph();
  ASSERT_TRUE(g.ok()) << g.status().message();
  PrepareStats s = Check(*g, "onnx_ops");
  EXPECT_EQ(s.fallback_nodes, 1);
  EXPECT_EQ(s.fallback_kinds["onnx:Neg"], 1);
}

// Without a GPU too: a storage type a value cannot take is refused before anything runs.
TEST(CudaBackendCasesTest, RefusesStorageTypesAValueCannotTake) {
  auto g = ParseGraphText("input x [2,3]\noutput (relu x)\n");
  ASSERT_TRUE(g.ok());
  PrepareOptions options;
  options.storage_types.assign(g->num_values(), kInt8);
  auto m = MakeCudaBackend()->Prepare(*g, options);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("cannot be stored as"), std::string::npos);
  options.storage_types.assign(1, kFloat16);
  EXPECT_FALSE(MakeCudaBackend()->Prepare(*g, options).ok());  // one type per value
}

// Small images keep every operator and make the reference fast; Inception-v3's stem needs
// more than the others.
models::BuildOptions TestSize(std::string_view name) {
  models::BuildOptions options;
  options.image_size = name == "inception_v3" ? 160 : 96;
  return options;
}

// Without a GPU too: every development model builds and imports at its test size.
TEST(CudaBackendCasesTest, DevelopmentModelsBuildAtTestSizes) {
  for (const models::ModelEntry& e : models::ListModels()) {
    if (e.name == "bert_base") continue;
    std::string bytes;
    ASSERT_TRUE(e.build(TestSize(e.name)).SerializeToString(&bytes));
    auto g = ImportOnnxBytes(bytes, std::string(e.name));
    EXPECT_TRUE(g.ok()) << e.name << ": " << g.status().message();
  }
}

TEST_F(CudaBackendTest, DevelopmentModels) {
  for (const models::ModelEntry& e : models::ListModels()) {
    if (e.name == "bert_base") continue;  // bert_1layer has the same operators
    onnx::ModelProto proto = e.build(TestSize(e.name));
    std::string bytes;
    ASSERT_TRUE(proto.SerializeToString(&bytes));
    auto g = ImportOnnxBytes(bytes, std::string(e.name));
    ASSERT_TRUE(g.ok()) << e.name << ": " << g.status().message();
    PrepareStats s = Check(*g, std::string(e.name));
    // 16-bit storage: float16 within 2e-2 (measured on an H200: 5e-4 to 1.5e-2); NasNet-A's
    // random-weight activations overflow float16's range, so it is checked in bfloat16.
    if (e.name == "nasnet_a")
      Check(*g, std::string(e.name), 7, kBfloat16, 5e-2);
    else
      Check(*g, std::string(e.name), 7, kFloat16, 2e-2);
    std::string kinds;
    for (const auto& [k, c] : s.fallback_kinds) kinds += " " + k + "=" + std::to_string(c);
    RecordProperty(std::string(e.name) + "_cpu_nodes", s.fallback_nodes);
    std::printf("%-16s %4d steps, %4d fused, %3d on the CPU%s\n", std::string(e.name).c_str(),
                s.steps, s.fused_nodes, s.fallback_nodes, kinds.c_str());
  }
}

}  // namespace
}  // namespace verisub::runtime
