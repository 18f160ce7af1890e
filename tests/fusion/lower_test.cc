// Every lowering equals its operator's reference kernel: spec operators on random shapes against
// the reference executor, ONNX operators against ONNX's own node tests (libonnx-testdata).
#include "fusion/lower.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/graph_text.h"
#include "runtime/onnx_import.h"
#include "runtime/tensor_proto.h"
#include "tests/fusion/fusion_test_util.h"
#include "tests/runtime/test_models.h"

namespace verisub::fusion {
namespace {

using runtime::Graph;
using runtime::HostTensor;

// Lowers the whole graph of `text` and compares the evaluation with the reference executor's.
void ExpectLoweringEqual(const std::string& text, uint64_t seed) {
  SCOPED_TRACE(text);
  auto g = runtime::ParseGraphText(text);
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto lowered = testing::LowerWhole(*g);
  ASSERT_TRUE(lowered.ok()) << lowered.status().message();
  const std::vector<HostTensor> inputs = runtime::testing::RandomInputs(*g, seed);
  auto expected = runtime::Execute(*g, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  auto got = EvaluateSubGraph(lowered->graph, testing::ClusterInputs(*g, *lowered, inputs));
  ASSERT_TRUE(got.ok()) << got.status().message();
  // The executor rounds its outputs to float32.
  EXPECT_LT(testing::MaxRelDiff(*got, (*expected)[0].ToDoubles()), 1e-6);
}

TEST(LowerTest, SpecOperatorsOnRandomSmallShapes) {
  for (uint64_t seed = 1; seed <= 6; ++seed)
    for (const std::string& text : testing::SpecOperatorCases(seed))
      ExpectLoweringEqual(text, seed);
}

// A row-major tensor of `dims` stored in `layout` (padding lanes 0), by the InLayouts reindex.
std::vector<double> Stored(const std::vector<double>& x, const std::vector<int64_t>& dims,
                           specs::Layout layout) {
  SubGraph id;
  id.output = id.Input(dims);
  auto stored = InLayouts(id, {specs::Layout::kPlain}, layout);
  EXPECT_TRUE(stored.ok()) << stored.status().message();
  auto v = EvaluateSubGraph(*stored, {x});
  EXPECT_TRUE(v.ok());
  return v.ok() ? *v : std::vector<double>();
}

// An element-wise cluster over stored tensors computed in their physical index space equals the
// same cluster with every input and the output converted by its own reindex, padding included.
TEST(LowerTest, ElementwiseInPhysicalSpaceEqualsConvertedLayouts) {
  auto g = runtime::ParseGraphText(
      "input x [2,20,3,5]\nweight s [20]\nweight b [20]\ninput y [2,20,3,5]\n"
      "output (sigmoid (ewmul (bias_add[axis=1] (channel_scale[axis=1] x s) b) y))\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto lowered = testing::LowerWhole(*g);
  ASSERT_TRUE(lowered.ok()) << lowered.status().message();
  const auto inputs = testing::ClusterInputs(*g, *lowered, runtime::testing::RandomInputs(*g, 11));
  for (specs::Layout layout :
       {specs::Layout::kNHWC, specs::Layout::kNCHW8c, specs::Layout::kNCHW16c}) {
    SCOPED_TRACE(std::string(specs::LayoutName(layout)));
    std::vector<specs::Layout> layouts;
    std::vector<std::vector<double>> stored;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const bool full = lowered->graph.input_dims[k].size() == 4;
      layouts.push_back(full ? layout : specs::Layout::kPlain);
      stored.push_back(full ? Stored(inputs[k], lowered->graph.input_dims[k], layout) : inputs[k]);
    }
    auto converted = InLayouts(lowered->graph, layouts, layout);
    ASSERT_TRUE(converted.ok()) << converted.status().message();
    const std::optional<SubGraph> physical = InPhysicalSpace(lowered->graph, layouts, layout);
    ASSERT_TRUE(physical.has_value());
    EXPECT_EQ(SubGraphText(*physical).find("/16%"), std::string::npos) << "no division";
    auto a = EvaluateSubGraph(*converted, stored);
    auto b = EvaluateSubGraph(*physical, stored);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b);
  }
  // Not element-wise: a softmax reduces, a transpose moves data.
  for (const char* text : {"input x [2,20,3,5]\noutput (softmax[axis=1] x)\n",
                           "input x [2,20,3,5]\noutput (relu (transpose[perm=[0,1,3,2]] x))\n"}) {
    auto h = runtime::ParseGraphText(text);
    ASSERT_TRUE(h.ok());
    auto l = testing::LowerWhole(*h);
    ASSERT_TRUE(l.ok());
    EXPECT_FALSE(InPhysicalSpace(l->graph, {specs::Layout::kNCHW16c}, specs::Layout::kNCHW16c))
        << text;
  }
}

TEST(LowerTest, NodesThatDoNotLowerSayWhy) {
  auto g = runtime::ParseGraphText(
      "input x [1,4,8,8]\nweight w [4,4,3,3]\n"
      "output (conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] x w)\n");
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(Lowerable(*g, 0));
  auto lowered = testing::LowerWhole(*g);
  ASSERT_FALSE(lowered.ok());
  EXPECT_NE(lowered.status().message().find("conv2d"), std::string::npos)
      << lowered.status().message();
}

// ONNX's backend node tests of one node that lowers: the lowering evaluated on the test's
// inputs gives its expected output (ONNX's tolerance, rtol 1e-3 and atol 1e-7, on float32 data).
TEST(LowerTest, OnnxNodeTestsOfLowerableOperators) {
  namespace fs = std::filesystem;
  const fs::path root = "/usr/share/libonnx-testdata/data/node";
  if (!fs::exists(root)) GTEST_SKIP() << "libonnx-testdata is not installed";
  auto read = [](const fs::path& p) -> StatusOr<HostTensor> {
    std::ifstream in(p, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    onnx::TensorProto proto;
    if (!proto.ParseFromString(buf.str())) return DataLoss(p.string());
    return runtime::FromTensorProto(proto);
  };
  int lowered_tests = 0;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const fs::path dir = root / name;
    if (!fs::exists(dir / "model.onnx") || !fs::exists(dir / "test_data_set_0")) continue;
    runtime::ImportOptions options;
    options.map_to_spec_ops = false;
    auto g = runtime::ImportOnnxFile((dir / "model.onnx").string(), options);
    if (!g.ok() || g->num_nodes() != 1 || g->outputs().size() != 1) continue;
    if (!Lowerable(*g, 0)) {
      if (std::getenv("VERISUB_DEBUG_LOWER")) std::printf("not lowered: %s\n", name.c_str());
      continue;
    }
    std::vector<HostTensor> inputs;
    bool ok = true;
    for (size_t k = 0; k < g->inputs().size() && ok; ++k) {
      auto t = read(dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb"));
      ok = t.ok();
      if (ok) inputs.push_back(std::move(*t));
    }
    auto expected = read(dir / "test_data_set_0" / "output_0.pb");
    if (!ok || !expected.ok()) continue;
    auto lowered = testing::LowerWhole(*g);
    ASSERT_TRUE(lowered.ok()) << name << ": " << lowered.status().message();
    auto got = EvaluateSubGraph(lowered->graph, testing::ClusterInputs(*g, *lowered, inputs));
    ASSERT_TRUE(got.ok()) << name << ": " << got.status().message();
    const std::vector<double> want = expected->ToDoubles();
    ASSERT_EQ(got->size(), want.size()) << name;
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i]) && std::isnan((*got)[i])) continue;
      if (std::isinf(want[i]) && (*got)[i] == want[i]) continue;
      ASSERT_LE(std::fabs((*got)[i] - want[i]), 1e-7 + 1e-3 * std::fabs(want[i]))
          << name << " element " << i;
    }
    ++lowered_tests;
  }
  // Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Abs, Neg, Reciprocal, Erf, HardSigmoid, HardSwish,
  // LeakyRelu, Elu, Softplus, Clip with constant bounds, Add/Sub/Mul/Div/Pow (a constant
  // exponent) with broadcasting, Max/Min/Sum/Mean of any arity, Softmax, LogSoftmax,
  // Reduce{Mean,Sum,Max}, Transpose, Reshape, Flatten, Squeeze, Unsqueeze: 106 tests of
  // libonnx-testdata 1.13 (what is left uses other types or non-constant parameters).
  EXPECT_GE(lowered_tests, 106);
  std::printf("ONNX node tests lowered and equal: %d\n", lowered_tests);
}

}  // namespace
}  // namespace verisub::fusion
