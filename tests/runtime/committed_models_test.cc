// The committed PyTorch exports (data/models/*.onnx) import with static shapes, no more opaque
// nodes than before shape folding, and compute PyTorch's recorded outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "runtime/opaque_stats.h"
#include "runtime/tensor_proto.h"

namespace verisub::runtime {
namespace {

StatusOr<HostTensor> ReadTensor(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::TensorProto proto;
  if (!in || !proto.ParseFromIstream(&in)) return NotFound(path + ": cannot read");
  return FromTensorProto(proto);
}

struct CommittedModel {
  const char* name;
  int max_opaque;  // opaque nodes when the importer folded constants only (before shape folding)
};

class CommittedModelTest : public ::testing::TestWithParam<CommittedModel> {};

TEST_P(CommittedModelTest, ImportsStaticAndMatchesPyTorch) {
  const std::string base = std::string("data/models/") + GetParam().name;
  auto g = ImportOnnxFile(base + ".onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  OpaqueStats stats = MeasureOpaque(*g);
  EXPECT_EQ(stats.dynamic_values, 0);
  EXPECT_LE(stats.opaque, GetParam().max_opaque) << OpaqueSummaryLine(stats);
  auto input = ReadTensor(base + ".input_0.pb");
  auto expected = ReadTensor(base + ".output_0.pb");
  ASSERT_TRUE(input.ok() && expected.ok());
  auto out = Execute(*g, {*input});
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ((*out)[0].dims, expected->dims);
  std::vector<double> a = (*out)[0].ToDoubles(), b = expected->ToDoubles();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4 + 1e-4 * std::fabs(b[i]));
}

INSTANTIATE_TEST_SUITE_P(DataModels, CommittedModelTest,
                         ::testing::Values(CommittedModel{"small_resnet", 0},
                                           CommittedModel{"tiny_transformer", 7},
                                           CommittedModel{"mobilenet_v2_w025", 35},
                                           CommittedModel{"squeezenet1_1", 3},
                                           CommittedModel{"flow_warp", 3}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace verisub::runtime
