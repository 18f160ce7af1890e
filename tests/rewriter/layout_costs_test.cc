// The analytic layout cost source: which combinations each operator admits and how they are
// priced.
#include "rewriter/layout_costs.h"

#include <gtest/gtest.h>

#include "rewriter/measured_layout_costs.h"
#include "runtime/onnx_import.h"
#ifdef VERISUB_HAVE_DNNL
#include "runtime/dnnl/dnnl_backend.h"
#endif
#include "tests/rewriter/test_graphs.h"
#include "tests/runtime/test_models.h"

namespace verisub::rewriter {
namespace {

using specs::Layout;
using testing::GraphBuilder;

constexpr const char* kConv = "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";

class LayoutCostsTest : public ::testing::Test {
 protected:
  LayoutCostsTest()
      : device_(*runtime::DevicePreset("cpu-2core")), model_(device_), costs_(&model_, device_) {}

  // Cost of node `i` of `g` with its activation input 0 in `in` and output 0 in `out` (other
  // inputs plain).
  std::optional<double> Cost(const runtime::Graph& g, int i, std::vector<Layout> in,
                             std::vector<Layout> out) {
    return costs_.KernelCostUs(g, g.node(i), in, out);
  }

  runtime::DeviceDescription device_;
  runtime::AnalyticCostModel model_;
  AnalyticLayoutCosts costs_;
};

TEST_F(LayoutCostsTest, BlockedConvolutionIsFasterAndPaysForPadding) {
  GraphBuilder b;
  int x = b.Input("x", {1, 64, 28, 28});
  int y = b.Op(kConv, {x, b.Weight("w", {64, 64, 3, 3}, 1)});
  int z = b.Op(kConv, {y, b.Weight("w2", {20, 64, 3, 3}, 2)});  // 20 = 2.5 blocks of 8
  b.Output(z);
  runtime::Graph g = b.Finish();
  const Layout P = Layout::kPlain, B8 = Layout::kNCHW8c, B16 = Layout::kNCHW16c;
  const double plain = *Cost(g, 0, {P, P}, {P});
  EXPECT_DOUBLE_EQ(*Cost(g, 0, {B8, P}, {B8}), plain * kConvBlocked8Factor);
  EXPECT_DOUBLE_EQ(*Cost(g, 0, {B16, P}, {B16}), plain * kConvBlocked16Factor);
  EXPECT_DOUBLE_EQ(*Cost(g, 0, {Layout::kNHWC, P}, {Layout::kNHWC}), plain * kConvNhwcFactor);
  // Mixed layouts only for the first layer (C <= 4), and never column-major.
  EXPECT_FALSE(Cost(g, 0, {P, P}, {B8}));
  EXPECT_FALSE(Cost(g, 0, {B8, P}, {B16}));
  EXPECT_FALSE(Cost(g, 0, {Layout::kColMajor, P}, {Layout::kColMajor}));
  // 20 output channels padded to 24 (8c) or 32 (16c).
  const double plain2 = *Cost(g, 1, {P, P}, {P});
  EXPECT_DOUBLE_EQ(*Cost(g, 1, {B8, P}, {B8}), plain2 * kConvBlocked8Factor * 24 / 20);
  EXPECT_DOUBLE_EQ(*Cost(g, 1, {B16, P}, {B16}), plain2 * kConvBlocked16Factor * 32 / 20);
}

TEST_F(LayoutCostsTest, GroupedConvolutionNeedsWholeBlocksPerGroup) {
  GraphBuilder b;
  int x = b.Input("x", {1, 16, 8, 8});
  // Two groups of 8 channels: whole blocks of 8, not of 16.
  int y = b.Op("conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=2]",
               {x, b.Weight("w", {16, 8, 3, 3}, 1)});
  // Depthwise over 12 channels: any block, padded (12 -> 16).
  int x2 = b.Input("x2", {1, 12, 8, 8});
  int z = b.Op("conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=dw]",
               {x2, b.Weight("w2", {12, 1, 3, 3}, 2)});
  b.Output(y);
  b.Output(z);
  runtime::Graph g = b.Finish();
  const Layout P = Layout::kPlain, B8 = Layout::kNCHW8c, B16 = Layout::kNCHW16c;
  EXPECT_DOUBLE_EQ(*Cost(g, 0, {B8, P}, {B8}), *Cost(g, 0, {P, P}, {P}) * kConvBlocked8Factor);
  EXPECT_FALSE(Cost(g, 0, {B16, P}, {B16}));
  EXPECT_DOUBLE_EQ(*Cost(g, 1, {B8, P}, {B8}),
                   *Cost(g, 1, {P, P}, {P}) * kConvBlocked8Factor * 16 / 12);
}

TEST_F(LayoutCostsTest, FirstLayerReadsPlainAndWritesBlocked) {
  GraphBuilder b;
  int x = b.Input("x", {1, 3, 32, 32});
  b.Output(b.Op(kConv, {x, b.Weight("w", {16, 3, 3, 3}, 1)}));
  runtime::Graph g = b.Finish();
  const double plain = *Cost(g, 0, {Layout::kPlain, Layout::kPlain}, {Layout::kPlain});
  EXPECT_DOUBLE_EQ(*Cost(g, 0, {Layout::kPlain, Layout::kPlain}, {Layout::kNCHW8c}),
                   plain * kConvBlocked8Factor);
}

TEST_F(LayoutCostsTest, ElementwiseIsLayoutAgnosticOpaqueIsPlainOnly) {
  GraphBuilder b;
  int x = b.Input("x", {1, 16, 8, 8});
  int r = b.Op("relu", {x});
  int s = b.Op("ewadd", {r, x});
  int o = b.Opaque("Neg", s);
  b.Output(o);
  runtime::Graph g = b.Finish();
  const Layout P = Layout::kPlain, B8 = Layout::kNCHW8c, H = Layout::kNHWC;
  EXPECT_DOUBLE_EQ(*Cost(g, 0, {B8}, {B8}), *Cost(g, 0, {P}, {P}));
  EXPECT_FALSE(Cost(g, 0, {B8}, {H}));
  EXPECT_TRUE(Cost(g, 1, {H, H}, {H}));
  EXPECT_FALSE(Cost(g, 1, {H, B8}, {H}));
  EXPECT_TRUE(Cost(g, 2, {P}, {P}));
  EXPECT_FALSE(Cost(g, 2, {B8}, {B8}));
}

TEST_F(LayoutCostsTest, ChannelConcatIsBlockedOnlyOnWholeBlocks) {
  GraphBuilder b;
  int x = b.Input("x", {1, 16, 8, 8});
  int y = b.Input("y", {1, 8, 8, 8});
  int c1 = b.Op("concat[axis=1]", {x, y});  // 16 + 8: whole blocks of 8, not of 16
  int c2 = b.Op("concat[axis=2]", {x, x});
  b.Output(c1);
  b.Output(c2);
  runtime::Graph g = b.Finish();
  const Layout B8 = Layout::kNCHW8c, B16 = Layout::kNCHW16c;
  EXPECT_TRUE(Cost(g, 0, {B8, B8}, {B8}));
  EXPECT_FALSE(Cost(g, 0, {B16, B16}, {B16}));
  EXPECT_TRUE(Cost(g, 0, {Layout::kNHWC, Layout::kNHWC}, {Layout::kNHWC}));
  EXPECT_FALSE(Cost(g, 0, {B8, Layout::kPlain}, {B8}));
  EXPECT_FALSE(Cost(g, 1, {B8, B8}, {B8}));  // not along channels
}

// A slice copies its sub-tensor in its input's layout: channels-last anywhere, blocked only where
// the channel offset and count are whole blocks (YOLO's C2f halves of 32 of 64 channels).
TEST_F(LayoutCostsTest, ChannelSliceIsBlockedOnlyOnWholeBlocks) {
  GraphBuilder b;
  int x = b.Input("x", {1, 64, 8, 8});
  b.Output(b.Op("slice[axis=1,start=32,end=64]", {x}));
  b.Output(b.Op("slice[axis=1,start=8,end=40]", {x}));
  b.Output(b.Op("slice[axis=2,start=2,end=6]", {x}));
  runtime::Graph g = b.Finish();
  const Layout P = Layout::kPlain, N = Layout::kNHWC, B8 = Layout::kNCHW8c, B16 = Layout::kNCHW16c;
  for (int i : {0, 1, 2}) {
    EXPECT_TRUE(Cost(g, i, {P}, {P})) << i;
    EXPECT_TRUE(Cost(g, i, {N}, {N})) << i;
    EXPECT_FALSE(Cost(g, i, {N}, {P})) << i;  // a conversion, priced as such
  }
  EXPECT_TRUE(Cost(g, 0, {B16}, {B16}));
  EXPECT_FALSE(Cost(g, 1, {B16}, {B16}));  // offset 8: half a block
  EXPECT_TRUE(Cost(g, 1, {B8}, {B8}));
  EXPECT_TRUE(Cost(g, 2, {B16}, {B16}));  // along rows: every channel block whole

  // Read by a relu rather than written out, the channel pieces of the one image are views of
  // its buffer (free) where plain or on whole blocks; a copy elsewhere.
  GraphBuilder v;
  int y = v.Input("x", {1, 64, 8, 8});
  v.Output(v.Op("relu", {v.Op("slice[axis=1,start=32,end=64]", {y})}));
  v.Output(v.Op("relu", {v.Op("slice[axis=1,start=8,end=40]", {y})}));
  runtime::Graph gv = v.Finish();
  EXPECT_EQ(Cost(gv, 0, {P}, {P}), 0.0);
  EXPECT_EQ(Cost(gv, 0, {B16}, {B16}), 0.0);
  EXPECT_GT(Cost(gv, 0, {N}, {N}).value_or(0), 0.0);
  EXPECT_EQ(Cost(gv, 2, {B8}, {B8}), 0.0);  // offset 8 of 8-channel blocks: whole blocks
  EXPECT_EQ(Cost(gv, 2, {P}, {P}), 0.0);
  EXPECT_GT(Cost(g, 0, {P}, {P}).value_or(0), 0.0);  // a graph output: copied
}

// A split's pieces follow each other: views where each is contiguous in the common layout (the
// outputs of convolutions merged along output channels, 32 + 16 channels of one image), a copy
// where a piece is not whole blocks or the pieces are graph outputs.
TEST_F(LayoutCostsTest, ChannelSplitPiecesAreViews) {
  GraphBuilder v;
  int c = v.Op("concat[axis=1]", {v.Op("relu", {v.Input("a", {1, 32, 8, 8})}),
                                  v.Op("relu", {v.Input("b", {1, 8, 8, 8})})});
  std::vector<int> pieces = v.Ops("split[axis=1]", {c});
  ASSERT_EQ(pieces.size(), 2u);
  for (int p : pieces) v.Output(v.Op("relu", {p}));
  runtime::Graph g = v.Finish();
  const int split = 3;
  ASSERT_EQ(*g.node(split).op, specs::OpKind::kSplit);
  const Layout P = Layout::kPlain, B8 = Layout::kNCHW8c, B16 = Layout::kNCHW16c;
  EXPECT_EQ(Cost(g, split, {P}, {P, P}), 0.0);
  EXPECT_EQ(Cost(g, split, {B8}, {B8, B8}), 0.0);
  EXPECT_NE(Cost(g, split, {B16}, {B16, B16}).value_or(1), 0.0);  // 8 channels: half a block
  EXPECT_NE(Cost(g, split, {P}, {B8, B8}).value_or(1), 0.0);
  GraphBuilder o;
  int d = o.Op("concat[axis=1]", {o.Op("relu", {o.Input("a", {1, 32, 8, 8})}),
                                  o.Op("relu", {o.Input("b", {1, 8, 8, 8})})});
  for (int p : o.Ops("split[axis=1]", {d})) o.Output(p);
  runtime::Graph go = o.Finish();
  EXPECT_GT(Cost(go, split, {P}, {P, P}).value_or(0), 0.0);  // graph outputs: copied
}

// A mean over the spatial axes runs as a global pooling in its input's layout (channel blocks
// that divide C), writing a plain output; a mean over other axes reads plain only.
TEST_F(LayoutCostsTest, SpatialMeanReadsAnyImageLayoutAndWritesPlain) {
  GraphBuilder b;
  int x = b.Input("x", {1, 24, 7, 7});
  b.Output(b.Op("reduce_mean[axes=12,keepdims=0]", {x}));
  b.Output(b.Op("reduce_mean[axes=12,keepdims=1]", {x}));
  b.Output(b.Op("reduce_mean[axes=2,keepdims=1]", {x}));
  runtime::Graph g = b.Finish();
  const Layout P = Layout::kPlain, H = Layout::kNHWC, B8 = Layout::kNCHW8c, B16 = Layout::kNCHW16c;
  for (int i : {0, 1}) {
    ASSERT_TRUE(IsSpatialMean(g, g.node(i)));
    ASSERT_TRUE(Cost(g, i, {P}, {P}));
    EXPECT_LT(*Cost(g, i, {H}, {P}), *Cost(g, i, {P}, {P}));
    EXPECT_LT(*Cost(g, i, {B8}, {P}), *Cost(g, i, {P}, {P}));
    EXPECT_FALSE(Cost(g, i, {B16}, {P}));  // 24 channels: a padded last block
  }
  EXPECT_FALSE(Cost(g, 1, {H}, {H}));  // the output is plain
  EXPECT_FALSE(IsSpatialMean(g, g.node(2)));
  EXPECT_TRUE(Cost(g, 2, {P}, {P}));
  EXPECT_FALSE(Cost(g, 2, {H}, {P}));
}

TEST_F(LayoutCostsTest, ConversionIsBytesOverBandwidth) {
  runtime::Value v;
  v.dims = {1, 20, 10, 10};
  v.rank_known = true;
  const double bytes = 4.0 * 2000;
  EXPECT_DOUBLE_EQ(costs_.ConversionCostUs(v, Layout::kPlain, Layout::kNHWC),
                   2 * bytes / (device_.bandwidth_gbps * 1e3) + device_.launch_overhead_us);
  // nchw8c pads 20 channels to 24.
  EXPECT_DOUBLE_EQ(
      costs_.ConversionCostUs(v, Layout::kPlain, Layout::kNCHW8c),
      (bytes + bytes * 24 / 20) / (device_.bandwidth_gbps * 1e3) + device_.launch_overhead_us);
  EXPECT_DOUBLE_EQ(costs_.ConversionCostUs(v, Layout::kNHWC, Layout::kNHWC), 0);
}

#ifdef VERISUB_HAVE_DNNL
// Issue 16: the same admissible combinations, priced by oneDNN: convolutions timed per output
// layout (kept in the cost table under "@out=<layout>"), conversions timed as reorders.
TEST(MeasuredLayoutCostsTest, MeasuresConvolutionsPerLayoutAndReorders) {
  GraphBuilder b;
  int x = b.Input("x", {1, 16, 14, 14});
  b.Output(b.Op(kConv, {x, b.Weight("w", {16, 16, 3, 3}, 1)}));
  runtime::Graph g = b.Finish();
  runtime::MeasuredCpuCostModel model({}, runtime::CostTable(runtime::ThisMachine(1)));
  MeasuredLayoutCosts costs(&model);
  const Layout P = Layout::kPlain, B8 = Layout::kNCHW8c;
  auto plain = costs.KernelCostUs(g, g.node(0), std::vector<Layout>{P, P}, std::vector<Layout>{P});
  auto blocked =
      costs.KernelCostUs(g, g.node(0), std::vector<Layout>{B8, P}, std::vector<Layout>{B8});
  ASSERT_TRUE(plain && blocked);
  EXPECT_GT(*plain, 0);
  EXPECT_GT(*blocked, 0);
  // Inadmissible stays inadmissible.
  EXPECT_FALSE(
      costs.KernelCostUs(g, g.node(0), std::vector<Layout>{P, P}, std::vector<Layout>{B8}));
  const runtime::Value& v = g.value(g.node(0).outputs[0]);
  EXPECT_GT(costs.ConversionCostUs(v, P, B8), 0);
  EXPECT_EQ(costs.ConversionCostUs(v, B8, B8), 0);
  int per_layout = 0, reorders = 0;
  const runtime::CostTable table = model.table();
  for (const auto& [key, e] : table.entries()) {
    per_layout += key.find("@out=") != std::string::npos;
    reorders += key.rfind("reorder [1,16,14,14] ", 0) == 0;
  }
  EXPECT_EQ(per_layout, 2);
  EXPECT_EQ(reorders, 1);
}

// A dilated ONNX Conv (no spec operator: DeepLab's atrous convolutions) is laid out as conv2d is,
// measured per layout with its attributes in the key, and priced in bfloat16 where this CPU has
// the kernels; a layout change between its input and output stays inadmissible. Before, the DP
// kept it plain, where oneDNN runs a gemm over every tap: DeepLabV3-MobileNetV3 ran 27.5 ms in
// the DP's layouts against 8.5 ms in oneDNN's own.
TEST(MeasuredLayoutCostsTest, DilatedOnnxConvolutionsAreLaidOutAndMeasured) {
  runtime::testing::ModelBuilder mb;
  mb.Input("x", {1, 16, 14, 14}).Output("y", {1, 16, 14, 14});
  mb.RandomWeight("w", {16, 16, 3, 3}, 1);
  auto& n = mb.Node("Conv", {"x", "w"}, {"y"});
  runtime::testing::SetInts(n, "dilations", {2, 2});
  runtime::testing::SetInts(n, "pads", {2, 2, 2, 2});
  auto g = runtime::ImportOnnxBytes(mb.Bytes(), "dilated");
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1);
  ASSERT_TRUE(g->node(0).opaque());
  runtime::MeasuredCpuCostModel model({}, runtime::CostTable(runtime::ThisMachine(1)));
  MeasuredLayoutCosts costs(&model);
  const Layout P = Layout::kPlain;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c}) {
    auto t = costs.KernelCostUs(*g, g->node(0), std::vector<Layout>{l, P}, std::vector<Layout>{l});
    ASSERT_TRUE(t) << static_cast<int>(l);
    EXPECT_GT(*t, 0);
    EXPECT_FALSE(
        costs.KernelCostUs(*g, g->node(0), std::vector<Layout>{P, P}, std::vector<Layout>{l}));
  }
  int per_layout = 0;
  const runtime::CostTable table = model.table();
  for (const auto& [key, e] : table.entries())
    per_layout +=
        key.find("dilations") != std::string::npos && key.find("@out=") != std::string::npos;
  EXPECT_EQ(per_layout, 3);
  if (runtime::dnnl_backend::HasBf16Kernels()) {
    const Format in{Layout::kNCHW16c, Precision::kBf16}, w{P, Precision::kF32};
    auto bf16 = costs.FormatKernelCostUs(*g, g->node(0), std::vector<Format>{in, w},
                                         std::vector<Format>{in});
    ASSERT_TRUE(bf16);
    EXPECT_GT(*bf16, 0);
  }
}

// A spatial mean is timed in each input layout it reads (keys "@in=<layout>").
TEST(MeasuredLayoutCostsTest, MeasuresSpatialMeansPerInputLayout) {
  GraphBuilder b;
  int x = b.Input("x", {1, 32, 7, 7});
  b.Output(b.Op("reduce_mean[axes=12,keepdims=0]", {x}));
  runtime::Graph g = b.Finish();
  runtime::MeasuredCpuCostModel model({}, runtime::CostTable(runtime::ThisMachine(1)));
  MeasuredLayoutCosts costs(&model);
  const Layout P = Layout::kPlain;
  for (Layout l : {Layout::kNHWC, Layout::kNCHW8c, Layout::kNCHW16c}) {
    auto t = costs.KernelCostUs(g, g.node(0), std::vector<Layout>{l}, std::vector<Layout>{P});
    ASSERT_TRUE(t) << static_cast<int>(l);
    EXPECT_GT(*t, 0);
  }
  int per_input_layout = 0;
  const runtime::CostTable table = model.table();
  for (const auto& [key, e] : table.entries())
    per_input_layout += key.find("@in=") != std::string::npos;
  EXPECT_EQ(per_input_layout, 3);
}

// A channel concat of two convolutions the backend builds in place (the convolutions write into
// its buffer) is free in the layouts where it is in place: plain, or blocked where both parts'
// channels are whole blocks; channels-last pays the copy.
TEST(MeasuredLayoutCostsTest, ConcatInPlaceIsFreeWhereItCutsAlongChannels) {
  GraphBuilder b;
  int x = b.Input("x", {1, 16, 14, 14});
  int a = b.Op(kConv, {x, b.Weight("w", {16, 16, 3, 3}, 1)});
  int c = b.Op(kConv, {x, b.Weight("w2", {16, 16, 3, 3}, 2)});
  b.Output(b.Op("relu", {b.Op("concat[axis=1]", {a, c})}));
  runtime::Graph g = b.Finish();
  runtime::MeasuredCpuCostModel model({}, runtime::CostTable(runtime::ThisMachine(1)));
  MeasuredLayoutCosts costs(&model);
  const runtime::Node& concat = g.node(2);
  ASSERT_EQ(concat.op, specs::OpKind::kConcat);
  auto cost = [&](Layout l) {
    return costs.KernelCostUs(g, concat, std::vector<Layout>{l, l}, std::vector<Layout>{l});
  };
  for (Layout l : {Layout::kPlain, Layout::kNCHW8c, Layout::kNCHW16c}) {
    ASSERT_TRUE(cost(l));
    EXPECT_EQ(*cost(l), 0) << static_cast<int>(l);
  }
  ASSERT_TRUE(cost(Layout::kNHWC));
  EXPECT_GT(*cost(Layout::kNHWC), 0);
}
#endif

}  // namespace
}  // namespace verisub::rewriter
