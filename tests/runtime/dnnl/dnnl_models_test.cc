// Whole models on the oneDNN backend: the committed PyTorch exports (data/models) and the
// benchmark-model builders (runtime/models) give the reference backend's outputs within 1e-4
// relative; a model run many times keeps its memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "onnx/onnx_pb.h"
#include "runtime/dnnl/builder.h"
#include "runtime/dnnl/dnnl_backend.h"
#include "runtime/models/models.h"
#include "runtime/onnx_import.h"
#include "runtime/reference_backend.h"
#include "runtime/tensor_proto.h"
#include "tests/runtime/dnnl/dnnl_test_util.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

constexpr double kTolerance = 1e-4;

HostTensor ReadTensor(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  onnx::TensorProto proto;
  EXPECT_TRUE(proto.ParseFromString(buf.str())) << path;
  auto t = FromTensorProto(proto);
  EXPECT_TRUE(t.ok()) << path;
  return t.ok() ? *t : HostTensor();
}

class ExportedModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExportedModelTest, MatchesTheReferenceBackend) {
  const std::string base = "data/models/" + GetParam();
  auto g = ImportOnnxFile(base + ".onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::vector<HostTensor> inputs = {ReadTensor(base + ".input_0.pb")};
  PrepareStats stats;
  auto cmp = testing::CompareWithReference(*g, inputs, &stats);
  EXPECT_EQ(cmp.error, "");
  EXPECT_LT(cmp.max_rel, kTolerance) << "max_abs " << cmp.max_abs;
  // PyTorch's own output agrees too (float32 on both sides, different summation orders).
  auto run = MakeDnnlBackend()->Prepare(*g, {});
  ASSERT_TRUE(run.ok());
  auto out = (*run)->Run(inputs);
  ASSERT_TRUE(out.ok()) << out.status().message();
  auto torch = testing::Compare(*out, {ReadTensor(base + ".output_0.pb")});
  EXPECT_EQ(torch.error, "");
  EXPECT_LT(torch.max_rel, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(DataModels, ExportedModelTest,
                         ::testing::Values("small_resnet", "tiny_transformer", "mobilenet_v2_w025",
                                           "squeezenet1_1"));

// Precision as a layout: every activation stored in bfloat16 (float32 accumulation) gives the
// exported models' outputs within bfloat16's precision of PyTorch's; mixed assignments (every
// other value) too, with the conversions between; a CPU without native bfloat16 kernels refuses
// it, saying which ISA it has.
TEST(DnnlModelsTest, Bfloat16StorageStaysWithinItsPrecision) {
  for (const std::string name : {"small_resnet", "tiny_transformer", "mobilenet_v2_w025"}) {
    const std::string base = "data/models/" + name;
    auto g = ImportOnnxFile(base + ".onnx");
    ASSERT_TRUE(g.ok()) << g.status().message();
    std::vector<HostTensor> inputs = {ReadTensor(base + ".input_0.pb")};
    HostTensor torch = ReadTensor(base + ".output_0.pb");
    for (int every : {1, 2}) {
      PrepareOptions options;
      options.storage_types.assign(g->num_values(), 0);
      int k = 0;
      for (int v = 0; v < g->num_values(); ++v)
        if (!g->value(v).constant && g->value(v).elem_type == kFloat && k++ % every == 0)
          options.storage_types[v] = kBfloat16;
      auto run = MakeDnnlBackend()->Prepare(*g, options);
      if (!dnnl_backend::HasBf16Kernels()) {
        ASSERT_FALSE(run.ok());
        EXPECT_NE(run.status().message().find(dnnl_backend::CpuIsaName()), std::string::npos)
            << run.status().message();
        GTEST_SKIP() << "no native bfloat16 kernels on this CPU (" << dnnl_backend::CpuIsaName()
                     << ")";
      }
      ASSERT_TRUE(run.ok()) << run.status().message();
      auto out = (*run)->Run(inputs);
      ASSERT_TRUE(out.ok()) << out.status().message();
      auto cmp = testing::Compare(*out, {torch});
      EXPECT_EQ(cmp.error, "");
      // bfloat16 keeps 8 significant bits (relative 2^-9 per rounding): a few percent after a
      // network's worth of roundings, far below any real divergence.
      EXPECT_LT(cmp.norm_rel, 0.05) << name << " every " << every;
      EXPECT_GT(cmp.max_abs, 0) << name << ": nothing was rounded";
    }
  }
  auto g = ImportOnnxFile("data/models/small_resnet.onnx");
  ASSERT_TRUE(g.ok());
  PrepareOptions wrong;
  wrong.storage_types.assign(g->num_values() + 1, 0);
  EXPECT_FALSE(MakeDnnlBackend()->Prepare(*g, wrong).ok());
}

TEST(DnnlModelsTest, CnnsKeepConvolutionsFusedAndOnOneDnn) {
  auto g = ImportOnnxFile("data/models/small_resnet.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto m = MakeDnnlBackend()->Prepare(*g, {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  PrepareStats s = (*m)->stats();
  EXPECT_EQ(s.fallback_nodes, 0);
  EXPECT_GT(s.fused_nodes, 0);
}

// Without library fusion (`--fusion none`) nothing is fused, more steps run, and every output
// is what the reference backend computes; with it, fewer steps and the same outputs.
TEST(DnnlModelsTest, WithoutLibraryFusionEveryNodeIsAKernelAndTheOutputsStay) {
  for (const char* model : {"data/models/small_resnet.onnx", "data/models/tiny_transformer.onnx",
                            "data/models/mobilenet_v2_w025.onnx"}) {
    SCOPED_TRACE(model);
    auto g = ImportOnnxFile(model);
    ASSERT_TRUE(g.ok()) << g.status().message();
    const auto inputs = testing::RandomInputs(*g, 3);
    auto reference = MakeReferenceBackend()->Prepare(*g, {});
    ASSERT_TRUE(reference.ok());
    auto want = (*reference)->Run(inputs);
    ASSERT_TRUE(want.ok());
    PrepareStats steps[2];
    for (bool fuse : {false, true}) {
      PrepareOptions options;
      options.library_fusion = fuse;
      auto m = MakeDnnlBackend()->Prepare(*g, options);
      ASSERT_TRUE(m.ok()) << m.status().message();
      steps[fuse] = (*m)->stats();
      auto out = (*m)->Run(inputs);
      ASSERT_TRUE(out.ok()) << out.status().message();
      auto cmp = testing::Compare(*out, *want);
      EXPECT_EQ(cmp.error, "");
      EXPECT_LT(cmp.max_abs / std::max(cmp.max_ref, 1.0), kTolerance) << fuse;
    }
    EXPECT_EQ(steps[0].fused_nodes, 0);
    EXPECT_GT(steps[1].fused_nodes, 0);
    EXPECT_GT(steps[0].steps, steps[1].steps);
  }
}

class BuilderModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BuilderModelTest, MatchesTheReferenceBackend) {
  models::BuildOptions opts;
  opts.image_size = GetParam() == "inception_v3" ? 75 : 32;
  onnx::ModelProto proto;
  if (GetParam() == "bert") {
    models::BertConfig cfg;
    cfg.layers = 1;
    cfg.hidden = 64;
    cfg.heads = 4;
    cfg.sequence = 16;
    cfg.intermediate = 128;
    proto = models::BuildBert(cfg, opts);
  } else {
    auto built = models::BuildModel(GetParam(), opts);
    ASSERT_TRUE(built.ok()) << built.status().message();
    proto = *built;
  }
  auto g = ImportOnnxModel(proto, GetParam());
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto cmp = testing::CompareWithReference(*g, testing::RandomInputs(*g, 5));
  EXPECT_EQ(cmp.error, "");
  // The builders' random weights are not normalized: outputs span magnitudes up to hundreds,
  // so errors are measured against the output's scale (elementwise, a value near zero that is
  // the difference of large terms differs by float32 rounding of those terms).
  EXPECT_LT(cmp.max_abs / std::max(cmp.max_ref, 1.0), kTolerance)
      << "max_abs " << cmp.max_abs << " max_ref " << cmp.max_ref;
  EXPECT_LT(cmp.norm_rel, kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Builders, BuilderModelTest,
                         ::testing::Values("resnet50", "mobilenet_v2", "squeezenet1_1",
                                           "inception_v3", "bert"));

// Resident memory after many runs stays where it was after a few (no per-run allocation that
// is never freed).
int64_t ResidentKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

TEST(DnnlModelsTest, RepeatedRunsDoNotGrowMemory) {
  auto g = ImportOnnxFile("data/models/squeezenet1_1.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto m = MakeDnnlBackend()->Prepare(*g, {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto inputs = testing::RandomInputs(*g, 1);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE((*m)->Run(inputs).ok());
  int64_t before = ResidentKb();
  for (int i = 0; i < 300; ++i) ASSERT_TRUE((*m)->Run(inputs).ok());
  int64_t after = ResidentKb();
  ASSERT_GT(before, 0);
  EXPECT_LT(after - before, 2048) << before << " kB -> " << after << " kB";
}

}  // namespace
}  // namespace verisub::runtime
