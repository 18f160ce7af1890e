// softmax, layer_norm and reduce_mean: what imports as them (each "maps" case beside a "stays
// opaque" twin), their spec kernels against the ONNX reference kernels (the same model imported
// all-opaque), and the export back to the same ONNX operators.
#include <gtest/gtest.h>

#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/graph_hash.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/import_check.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::CountKind;
using testing::ModelBuilder;
using testing::SetFloat;
using testing::SetInt;
using testing::SetInts;

// Imports mapped and all-opaque, checks both compute the same outputs (spec kernels against the
// ONNX reference kernels), exports the mapped graph (the ONNX checker passes), imports it again
// and checks the same operators and outputs come back.
Graph ImportChecked(const std::string& bytes) {
  std::vector<HostTensor> in, want;
  Graph mapped = testing::ImportMappedAndOpaque(bytes, 42, &in, &want);
  if (mapped.num_nodes() == 0) return mapped;  // the import failed, and said so

  onnx::ModelProto exported;
  Status st = ExportOnnxModel(mapped, &exported);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_NO_THROW(onnx::checker::check_model(exported));
  auto back = ImportOnnxModel(exported, "exported");
  EXPECT_TRUE(back.ok()) << back.status().message();
  if (back.ok()) {
    EXPECT_EQ(OpCounts(mapped), OpCounts(*back));
    EXPECT_EQ(StructuralHash(mapped), StructuralHash(*back));
    auto c = Execute(*back, in);
    EXPECT_TRUE(c.ok() && !want.empty());
    if (c.ok() && !want.empty()) {
      EXPECT_EQ(testing::MaxAbsDiff(want, *c), 0.0);
    }
  }
  return mapped;
}

int CountOpType(const onnx::ModelProto& m, const std::string& type) {
  int k = 0;
  for (const auto& n : m.graph().node()) k += n.op_type() == type;
  return k;
}

// Attention-shaped scores [1, 2, 3, 5] along the last axis, a middle axis, and opset 11's
// flattening Softmax on the last axis (the same function).
TEST(NormOpsTest, SoftmaxMapsOnAnyAxisFromOpset13AndTheLastBefore) {
  ModelBuilder b(17);
  b.Input("x", {1, 2, 3, 5}).Output("last", {1, 2, 3, 5}).Output("mid", {1, 2, 3, 5});
  b.Output("neg", {1, 2, 3, 5});
  SetInt(b.Node("Softmax", {"x"}, {"last"}), "axis", -1);
  SetInt(b.Node("Softmax", {"x"}, {"mid"}), "axis", 1);
  b.Node("Softmax", {"x"}, {"neg"});  // default axis -1
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "softmax"), 3);

  ModelBuilder old(11);
  old.Input("x", {2, 3, 4}).Output("y", {2, 3, 4});
  SetInt(old.Node("Softmax", {"x"}, {"y"}), "axis", 2);
  EXPECT_EQ(CountKind(ImportChecked(old.Bytes()), "softmax"), 1);
}

// Must not map: opset 11 flattening at a middle axis (a softmax over two axes at once).
TEST(NormOpsTest, LegacySoftmaxOfAMiddleAxisStaysOpaque) {
  ModelBuilder old(11);
  old.Input("x", {2, 3, 4}).Output("y", {2, 3, 4});
  SetInt(old.Node("Softmax", {"x"}, {"y"}), "axis", 1);
  Graph g = ImportChecked(old.Bytes());
  EXPECT_EQ(CountKind(g, "softmax"), 0);
  EXPECT_EQ(CountKind(g, "onnx:Softmax"), 1);
  old.Node("Softmax", {"x"}, {"z"});  // default axis 1 before opset 13
  old.Output("z", {2, 3, 4});
  EXPECT_EQ(CountKind(ImportChecked(old.Bytes()), "softmax"), 0);
}

// BERT's form (last axis, scale and bias), two trailing axes, and no bias (a zero weight in the
// graph, left out again on export).
TEST(NormOpsTest, LayerNormalizationMapsWithAndWithoutBias) {
  ModelBuilder b(17);
  b.Input("x", {2, 3, 8}).Output("y", {2, 3, 8}).Output("z", {2, 3, 8});
  b.Output("nob", {2, 3, 8});
  b.RandomWeight("s", {8}, 1).RandomWeight("bias", {8}, 2);
  b.RandomWeight("s2", {3, 8}, 3).RandomWeight("b2", {3, 8}, 4);
  auto& ln = b.Node("LayerNormalization", {"x", "s", "bias"}, {"y"});
  SetInt(ln, "axis", -1);
  SetFloat(ln, "epsilon", 1e-3f);
  SetInt(b.Node("LayerNormalization", {"x", "s2", "b2"}, {"z"}), "axis", 1);
  b.Node("LayerNormalization", {"x", "s"}, {"nob"});
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "layer_norm"), 3);

  onnx::ModelProto m;
  ASSERT_TRUE(ExportOnnxModel(g, &m).ok());
  ASSERT_EQ(CountOpType(m, "LayerNormalization"), 3);
  int without_bias = 0;
  for (const auto& n : m.graph().node()) without_bias += n.input_size() == 2;
  EXPECT_EQ(without_bias, 1);
}

// Must not map: statistics outputs, a double-precision stash, a scale that broadcasts.
TEST(NormOpsTest, LayerNormalizationWithStatisticsOrBroadcastScaleStaysOpaque) {
  ModelBuilder b(17);
  b.Input("x", {2, 3, 8}).Output("y", {2, 3, 8}).Output("mean", {2, 3, 1});
  b.Output("z", {2, 3, 8}).Output("w", {2, 3, 8});
  b.RandomWeight("s", {8}, 1).RandomWeight("s1", {1}, 2).RandomWeight("bias", {8}, 3);
  b.Node("LayerNormalization", {"x", "s", "bias"}, {"y", "mean"});
  SetInt(b.Node("LayerNormalization", {"x", "s", "bias"}, {"z"}), "stash_type", 11);
  b.Node("LayerNormalization", {"x", "s1", "bias"}, {"w"});
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(CountKind(*g, "layer_norm"), 0);
  EXPECT_EQ(CountKind(*g, "onnx:LayerNormalization"), 3);
}

// ShuffleNet-v2's head (spatial axes, keepdims 0), keepdims 1, negative axes, no axes (all).
TEST(NormOpsTest, ReduceMeanWithConstantAxesMaps) {
  ModelBuilder b(17);
  b.Input("x", {2, 3, 4, 5}).Output("hw", {2, 3}).Output("kept", {2, 1, 4, 1});
  b.Output("all", {1, 1, 1, 1}).Output("flat", {});
  auto& hw = b.Node("ReduceMean", {"x"}, {"hw"});
  SetInts(hw, "axes", {2, 3});
  SetInt(hw, "keepdims", 0);
  SetInts(b.Node("ReduceMean", {"x"}, {"kept"}), "axes", {-1, 1});
  b.Node("ReduceMean", {"x"}, {"all"});
  SetInt(b.Node("ReduceMean", {"x"}, {"flat"}), "keepdims", 0);
  Graph g = ImportChecked(b.Bytes());
  EXPECT_EQ(CountKind(g, "reduce_mean"), 4);

  onnx::ModelProto m;
  ASSERT_TRUE(ExportOnnxModel(g, &m).ok());
  EXPECT_EQ(CountOpType(m, "ReduceMean"), 4);
}

// Must not map: a reduction of integers (the spec operators are float).
TEST(NormOpsTest, ReduceMeanOfIntegersStaysOpaque) {
  ModelBuilder b(17);
  b.Input("x", {2, 3}, kInt64).Output("y", {2, 1}, kInt64);
  SetInts(b.Node("ReduceMean", {"x"}, {"y"}), "axes", {1});
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(CountKind(*g, "reduce_mean"), 0);
  EXPECT_EQ(CountKind(*g, "onnx:ReduceMean"), 1);
}

// Export into an older opset refuses what it cannot write, naming the operator and the opset.
TEST(NormOpsTest, ExportRefusesFormsTheOpsetLacks) {
  ModelBuilder b(17);
  b.Input("x", {2, 3, 8}).Output("y", {2, 3, 8}).Output("z", {2, 3, 8});
  b.RandomWeight("s", {8}, 1);
  SetInt(b.Node("Softmax", {"x"}, {"y"}), "axis", 1);
  b.Node("LayerNormalization", {"x", "s"}, {"z"});
  auto g = ImportOnnxBytes(b.Bytes(), "model");
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (auto& [domain, version] : g->mutable_opsets())
    if (domain.empty() || domain == "ai.onnx") version = 16;
  onnx::ModelProto m;
  Status st = ExportOnnxModel(*g, &m);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("layer_norm has no ONNX operator before opset 17"), std::string::npos)
      << st.message();
  for (auto& [domain, version] : g->mutable_opsets())
    if (domain.empty() || domain == "ai.onnx") version = 11;
  st = ExportOnnxModel(*g, &m);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("softmax along axis 1 of rank 3 has no ONNX Softmax before opset 13"),
            std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace verisub::runtime
