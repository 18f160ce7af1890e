// Whole models on the oneDNN backend: the committed PyTorch exports (data/models) and the
// benchmark-model builders (runtime/models) give the reference backend's outputs within 1e-4
// relative; a model run many times keeps its memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "onnx/onnx_pb.h"
#include "runtime/dnnl/dnnl_backend.h"
#include "runtime/models/models.h"
#include "runtime/onnx_import.h"
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

TEST(DnnlModelsTest, CnnsKeepConvolutionsFusedAndOnOneDnn) {
  auto g = ImportOnnxFile("data/models/small_resnet.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto m = MakeDnnlBackend()->Prepare(*g, {});
  ASSERT_TRUE(m.ok()) << m.status().message();
  PrepareStats s = (*m)->stats();
  EXPECT_EQ(s.fallback_nodes, 0);
  EXPECT_GT(s.fused_nodes, 0);
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
