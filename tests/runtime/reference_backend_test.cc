// The reference backend is the executor behind the Backend interface: identical results,
// refusal of nodes without kernels, and node timing after a run.
#include "runtime/reference_backend.h"

#include <gtest/gtest.h>

#include "runtime/executor.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

TEST(ReferenceBackendTest, RunsExactlyAsTheExecutor) {
  auto g = ImportOnnxBytes(testing::SmallCnnBytes(), "small_cnn");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto inputs = testing::RandomInputs(*g, 3);
  auto backend = MakeReferenceBackend();
  EXPECT_EQ(backend->Name(), "reference");
  auto prepared = backend->Prepare(*g, {});
  ASSERT_TRUE(prepared.ok()) << prepared.status().message();
  auto a = (*prepared)->Run(inputs);
  auto b = Execute(*g, inputs);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), b->size());
  for (size_t k = 0; k < a->size(); ++k) {
    EXPECT_EQ((*a)[k].dims, (*b)[k].dims);
    EXPECT_EQ((*a)[k].f32, (*b)[k].f32);
  }
}

TEST(ReferenceBackendTest, TimesANodeAfterARun) {
  auto g = ImportOnnxBytes(testing::SmallCnnBytes(), "small_cnn");
  ASSERT_TRUE(g.ok());
  auto prepared = MakeReferenceBackend()->Prepare(*g, {});
  ASSERT_TRUE(prepared.ok());
  EXPECT_FALSE((*prepared)->TimeNode(0, 3).ok());  // no run yet
  ASSERT_TRUE((*prepared)->Run(testing::RandomInputs(*g, 1)).ok());
  auto t = (*prepared)->TimeNode(g->num_nodes() - 1, 3);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_GE(*t, 0.0);
  EXPECT_FALSE((*prepared)->TimeNode(g->num_nodes(), 3).ok());
}

TEST(ReferenceBackendTest, RefusesNodesWithoutKernels) {
  testing::ModelBuilder b;
  b.Input("x", {2, 3}).Output("y", {2, 3});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  auto g = ImportOnnxBytes(b.Bytes(), "relu");
  ASSERT_TRUE(g.ok());
  Node custom = g->node(0);
  custom.op.reset();
  custom.op_type = "Mystery";
  custom.domain = "com.example";
  g->SetNode(0, custom);
  auto backend = MakeReferenceBackend();
  EXPECT_FALSE(backend->CanRun(*g, g->node(0)));
  auto prepared = backend->Prepare(*g, {});
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.status().message().find("com.example"), std::string::npos)
      << prepared.status().message();
}

}  // namespace
}  // namespace verisub::runtime
