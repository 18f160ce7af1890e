// The measured GPU cost model on this machine's GPU: skipped, with the reason, where CUDA finds
// none (CI, the development machines); run on a GPU machine it times real cuDNN/cuBLAS kernels.
#include "runtime/cuda/cuda_cost.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "runtime/graph_text.h"
#include "specs/registry.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
using specs::Shape;

// "op[name=value,...]" with these shapes; omitted parameters take their defaults.
OpCostQuery Query(const std::string& text, std::vector<Shape> in, std::vector<Shape> out) {
  OpCostQuery q;
  const size_t bracket = text.find('[');
  const specs::OpSpec* op = specs::FindOp(text.substr(0, bracket));
  EXPECT_NE(op, nullptr) << text;
  if (op == nullptr) return q;
  q.op = op->kind;
  q.params = op->DefaultParams();
  if (bracket != std::string::npos) {
    std::string list = text.substr(bracket + 1, text.size() - bracket - 2);
    size_t start = 0;
    while (start < list.size()) {
      // Values may hold commas inside brackets (perm=[0,2,1]).
      size_t end = start;
      for (int depth = 0; end < list.size() && (depth > 0 || list[end] != ','); ++end)
        depth += list[end] == '[' ? 1 : list[end] == ']' ? -1 : 0;
      const std::string item = list.substr(start, end - start);
      const size_t eq = item.find('=');
      const specs::ParamDesc* d = op->FindParam(item.substr(0, eq));
      EXPECT_NE(d, nullptr) << item;
      if (d != nullptr) {
        EXPECT_TRUE(specs::ParseParamValue(*d, item.substr(eq + 1), &q.params).ok()) << item;
      }
      start = end + 1;
    }
  }
  q.inputs = std::move(in);
  q.outputs = std::move(out);
  return q;
}

class CudaCostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto here = ThisGpu(0);
    if (!here.ok()) GTEST_SKIP() << here.status().message();
    auto m = CudaCostModel::Create(CudaCostOptions(), CostTable(*here));
    ASSERT_TRUE(m.ok()) << m.status().message();
    model_ = std::move(m).value();
  }
  std::unique_ptr<CudaCostModel> model_;
};

TEST_F(CudaCostTest, TimesEveryKernelKindAndCachesTheTimes) {
  const std::string conv = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";
  const std::string conv_bias_relu =
      "conv2d_bias[stride_h=1,stride_w=1,padding=same,activation=relu,group=1]";
  std::vector<OpCostQuery> queries = {
      Query(conv, {{1, 64, 56, 56}, {64, 64, 3, 3}}, {{1, 64, 56, 56}}),
      Query(conv, {{1, 256, 56, 56}, {256, 256, 3, 3}}, {{1, 256, 56, 56}}),
      Query(conv_bias_relu, {{1, 64, 56, 56}, {64, 64, 3, 3}, {64}}, {{1, 64, 56, 56}}),
      Query("conv2d[stride_h=2,stride_w=2,padding=same,activation=relu6,group=dw]",
            {{1, 64, 56, 56}, {64, 1, 3, 3}}, {{1, 64, 28, 28}}),
      Query("matmul[activation=none]", {{128, 768}, {768, 3072}}, {{128, 3072}}),
      Query("matmul[activation=none]", {{12, 128, 64}, {12, 64, 128}}, {{12, 128, 128}}),
      Query("pool_max[kernel_h=3,kernel_w=3,stride_h=2,stride_w=2,padding=same,activation=none]",
            {{1, 64, 112, 112}}, {{1, 64, 56, 56}}),
      Query("relu", {{1, 64, 56, 56}}, {{1, 64, 56, 56}}),
      Query("gelu", {{128, 3072}}, {{128, 3072}}),
      Query("ewadd", {{1, 64, 56, 56}, {1, 64, 56, 56}}, {{1, 64, 56, 56}}),
      Query("bias_add[axis=1]", {{1, 64, 56, 56}, {64}}, {{1, 64, 56, 56}}),
      Query("channel_scale[axis=1]", {{1, 64, 56, 56}, {64}}, {{1, 64, 56, 56}}),
      Query("smul", {{1, 64, 56, 56}, {}}, {{1, 64, 56, 56}}),
      Query("concat[axis=1]", {{1, 64, 28, 28}, {1, 64, 28, 28}}, {{1, 128, 28, 28}}),
      Query("transpose[perm=[0,2,1]]", {{12, 128, 64}}, {{12, 64, 128}}),
  };
  std::vector<double> times;
  for (const OpCostQuery& q : queries) {
    int runs = 0;
    auto t = model_->Measure(q, &runs);
    ASSERT_TRUE(t.ok()) << q.Key() << ": " << t.status().message();
    EXPECT_TRUE(std::isfinite(*t) && *t > 0 && *t < 0.1) << q.Key() << ": " << *t << " s";
    EXPECT_GE(runs, 5);
    times.push_back(*t);
  }
  // 16x the multiply-adds of the same convolution: slower.
  EXPECT_GT(times[1], times[0]);
  // The bound a search rejects candidates on stays below every time.
  for (size_t i = 0; i < queries.size(); ++i)
    EXPECT_LT(model_->LowerBoundUs(queries[i]), times[i] * 1e6) << queries[i].Key();
  // Through the table: measured once, then answered from it.
  auto first = model_->OpTimeUs(queries[0]);
  auto second = model_->OpTimeUs(queries[0]);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(model_->stats().measured, 1);
  EXPECT_EQ(model_->stats().hits, 1);
  EXPECT_EQ(model_->table().header().engine, "cudnn");
  EXPECT_TRUE(model_->table().Find(queries[0].Key()).has_value());
}

TEST_F(CudaCostTest, ShapesCuDnnDisagreesWithAreEstimatedNotCached) {
  // An output shape no convolution of these inputs has: cuDNN's own shape differs.
  OpCostQuery q = Query("conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]",
                        {{1, 8, 16, 16}, {8, 8, 3, 3}}, {{1, 8, 15, 15}});
  EXPECT_FALSE(model_->Measure(q, nullptr).ok());
  auto t = model_->OpTimeUs(q);
  ASSERT_TRUE(t.ok());
  EXPECT_GT(*t, 0);
  EXPECT_EQ(model_->stats().estimated, 1);
  EXPECT_FALSE(model_->table().Find(q.Key()).has_value());
}

// Without a GPU (every machine CI runs on): a table measured on one answers, the rest is
// estimated, nothing is measured, and the fusion cuDNN runs is priced.
TEST(CudaCostTableOnlyTest, AnswersFromItsTableAndPricesWhatCuDnnFuses) {
  CostTableHeader h;
  h.engine = "cudnn";
  h.engine_version = "9.14.0";
  h.cpu_model = "NVIDIA H100 80GB HBM3";
  h.isa = "sm_90";
  h.backend_revision = kCudaCostRevision;
  const std::string conv = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";
  OpCostQuery known = Query(conv, {{1, 64, 56, 56}, {64, 64, 3, 3}}, {{1, 64, 56, 56}});
  OpCostQuery unknown = Query(conv, {{1, 32, 28, 28}, {32, 32, 3, 3}}, {{1, 32, 28, 28}});
  CostTable table(h);
  table.Insert(known.Key(), 31.5, 170);
  CudaCostOptions options;
  options.missing = MissingCost::kAnalytic;
  auto model = CudaCostModel::FromTable(options, table);
  EXPECT_EQ(model->Name(), "gpu-measured:cudnn-9.14.0:NVIDIA H100 80GB HBM3 (table only)");
  auto t = model->OpTimeUs(known);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, 31.5);
  auto e = model->OpTimeUs(unknown);
  ASSERT_TRUE(e.ok());
  EXPECT_GT(*e, 0);
  EXPECT_EQ(model->stats().hits, 1);
  EXPECT_EQ(model->stats().estimated, 1);
  EXPECT_EQ(model->stats().measured, 0);
  EXPECT_FALSE(model->Measure(known, nullptr).ok());
  // Its lower bound (MinFlops at 4 PFLOP/s) needs no GPU either and stays below the estimate.
  EXPECT_DOUBLE_EQ(model->LowerBoundUs(known), MinFlops(known) / 4e9);
  EXPECT_GT(model->LowerBoundUs(known), 0);
  EXPECT_LT(model->LowerBoundUs(unknown), *e);

  CudaCostOptions strict;
  strict.missing = MissingCost::kError;
  auto complete = CudaCostModel::FromTable(strict, table);
  auto missing = complete->OpTimeUs(unknown);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(unknown.Key()), std::string::npos);

  // cuDNN's fused kernel takes a convolution's bias and a ReLU, not a sigmoid.
  auto g = ParseGraphText(
      "input x [1,4,8,8]\nweight w [4,4,3,3]\nweight b [4]\nweight v [4,4,3,3]\nweight c [4]\n"
      "output (relu (bias_add[axis=1] (" +
      conv +
      " x w) b))\n"
      "output (sigmoid (bias_add[axis=1] (" +
      conv + " x v) c))\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::vector<char> absorbed = model->AbsorbedNodes(*g);
  ASSERT_EQ(absorbed.size(), static_cast<size_t>(g->num_nodes()));
  std::vector<std::string> kinds;
  for (int i = 0; i < g->num_nodes(); ++i)
    if (absorbed[i]) kinds.push_back(g->node(i).KindName());
  std::sort(kinds.begin(), kinds.end());
  EXPECT_EQ(kinds, (std::vector<std::string>{"bias_add", "bias_add", "relu"}));

  // A batchnorm imported as a constant channel_scale and shift is priced, scale and all: the
  // proved rules fold the scale into the kernel for every engine, which a free scale would not
  // prompt (the export would keep a Mul that PyTorch runs as a kernel of its own).
  auto bn = ParseGraphText(
      "input x [1,4,8,8]\nweight w [4,4,3,3]\nweight s [4]\nweight b [4]\nweight v [4,4,3,3]\n"
      "weight t [8]\n"
      "output (relu (bias_add[axis=1] (channel_scale[axis=1] (" +
      conv +
      " x w) s) b))\n"
      "output (relu (channel_scale[axis=3] (" +
      conv + " x v) t))\n");
  ASSERT_TRUE(bn.ok()) << bn.status().message();
  absorbed = model->AbsorbedNodes(*bn);
  kinds.clear();
  for (int i = 0; i < bn->num_nodes(); ++i)
    if (absorbed[i]) kinds.push_back(bn->node(i).KindName());
  std::sort(kinds.begin(), kinds.end());
  EXPECT_TRUE(kinds.empty()) << kinds.size();
}

}  // namespace
}  // namespace verisub::runtime
