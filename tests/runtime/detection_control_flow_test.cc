// Detection post-processing (NonMaxSuppression against a brute-force reading of its definition on
// many boxes, where its grid of cells is on; RoiAlign's bins; ScatterElements' in-place path) and
// control flow (If and Loop reading values of the enclosing graph: imported as inputs, run, and
// written back as names by the export).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "onnx/onnx_pb.h"
#include "runtime/control_flow.h"
#include "runtime/executor.h"
#include "runtime/graph_hash.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#include "runtime/tensor_proto.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

using testing::ModelBuilder;

StatusOr<std::vector<HostTensor>> RunOne(const std::string& op,
                                         const std::vector<std::pair<std::string, HostTensor>>& in,
                                         std::vector<int64_t> out_dims, int32_t out_type,
                                         const std::function<void(onnx::NodeProto&)>& attrs) {
  return testing::RunOneNode(op, in, std::move(out_dims), attrs, out_type);
}

// NonMaxSuppression as its definition reads, every candidate compared with every kept box.
std::vector<int64_t> BruteForceNms(const std::vector<float>& boxes, const std::vector<float>& s,
                                   int64_t classes, int64_t n, int64_t max_out, float iou,
                                   float score_threshold) {
  std::vector<int64_t> rows;
  for (int64_t c = 0; c < classes; ++c) {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < n; ++i)
      if (s[c * n + i] > score_threshold) order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return s[c * n + a] > s[c * n + b]; });
    std::vector<int64_t> kept;
    for (int64_t i : order) {
      if (static_cast<int64_t>(kept.size()) >= max_out) break;
      bool suppressed = false;
      for (int64_t j : kept) {
        auto corner = [&](int64_t b, int k) { return boxes[b * 4 + k]; };
        const float ay0 = std::min(corner(i, 0), corner(i, 2)),
                    ay1 = std::max(corner(i, 0), corner(i, 2));
        const float ax0 = std::min(corner(i, 1), corner(i, 3)),
                    ax1 = std::max(corner(i, 1), corner(i, 3));
        const float by0 = std::min(corner(j, 0), corner(j, 2)),
                    by1 = std::max(corner(j, 0), corner(j, 2));
        const float bx0 = std::min(corner(j, 1), corner(j, 3)),
                    bx1 = std::max(corner(j, 1), corner(j, 3));
        const float w = std::max(0.f, std::min(ax1, bx1) - std::max(ax0, bx0));
        const float h = std::max(0.f, std::min(ay1, by1) - std::max(ay0, by0));
        const float inter = w * h;
        const float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
        const float uni = area_a + area_b - inter;
        if (inter > 0 && area_a > 0 && area_b > 0 && uni > 0 && inter / uni > iou) {
          suppressed = true;
          break;
        }
      }
      if (suppressed) continue;
      kept.push_back(i);
      rows.insert(rows.end(), {0, c, i});
    }
  }
  return rows;
}

TEST(DetectionKernelsTest, NonMaxSuppressionKeepsWhatTheDefinitionKeepsOnManyBoxes) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> pos(0, 300), size(1, 60), score(0, 1);
  const int64_t n = 1500, classes = 3;
  std::vector<float> boxes(n * 4), scores(classes * n);
  for (int64_t i = 0; i < n; ++i) {
    // torchvision's batched NMS: each class's boxes moved by its own offset (apart from the
    // others), corners in either order, a few empty boxes and repeated scores.
    const float off = static_cast<float>(i % 5) * 400;
    const float y = pos(rng) + off, x = pos(rng) + off;
    const float h = i % 97 == 0 ? 0 : size(rng), w = size(rng);
    if (i % 2)
      boxes[i * 4] = y, boxes[i * 4 + 1] = x, boxes[i * 4 + 2] = y + h, boxes[i * 4 + 3] = x + w;
    else
      boxes[i * 4] = y + h, boxes[i * 4 + 1] = x + w, boxes[i * 4 + 2] = y, boxes[i * 4 + 3] = x;
  }
  for (auto& s : scores) s = std::round(score(rng) * 200) / 200;
  std::vector<double> bd(boxes.begin(), boxes.end()), sd(scores.begin(), scores.end());
  for (const auto& [max_out, iou, threshold] : std::vector<std::tuple<int64_t, float, float>>{
           {100000, 0.5f, 0.05f}, {40, 0.3f, 0.f}, {100000, 0.f, 0.5f}}) {
    auto out = RunOne("NonMaxSuppression",
                      {{"boxes", HostTensor::FromDoubles(kFloat, {1, n, 4}, bd)},
                       {"scores", HostTensor::FromDoubles(kFloat, {1, classes, n}, sd)},
                       {"max", HostTensor::FromInts(kInt64, {1}, {max_out})},
                       {"iou", HostTensor::FromDoubles(kFloat, {1}, {iou})},
                       {"score", HostTensor::FromDoubles(kFloat, {1}, {threshold})}},
                      {-1, 3}, kInt64, [](onnx::NodeProto&) {});
    ASSERT_TRUE(out.ok()) << out.status().message();
    const std::vector<int64_t> expected =
        BruteForceNms(boxes, scores, classes, n, max_out, iou, threshold);
    EXPECT_GT(expected.size(), 3u * 30);
    EXPECT_EQ((*out)[0].ints, expected) << "max " << max_out << " iou " << iou;
    EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{static_cast<int64_t>(expected.size() / 3), 3}));
  }
}

TEST(DetectionKernelsTest, RoiAlignAveragesBilinearSamplesPerBin) {
  // A plane whose value is its x coordinate: every bilinear sample reads its own x, so a bin's
  // average is the mean x of its samples (clamped to the last column past the edge).
  std::vector<double> plane(8 * 8);
  for (int64_t i = 0; i < 64; ++i) plane[i] = static_cast<double>(i % 8);
  auto out = RunOne("RoiAlign",
                    {{"x", HostTensor::FromDoubles(kFloat, {1, 1, 8, 8}, plane)},
                     {"rois", HostTensor::FromDoubles(kFloat, {1, 4}, {1, 1, 5, 5})},
                     {"batch", HostTensor::FromInts(kInt64, {1}, {0})}},
                    {1, 1, 2, 2}, kFloat, [](onnx::NodeProto& n) {
                      testing::SetInt(n, "output_height", 2);
                      testing::SetInt(n, "output_width", 2);
                      testing::SetInt(n, "sampling_ratio", 2);
                      testing::SetString(n, "coordinate_transformation_mode", "half_pixel");
                    });
  ASSERT_TRUE(out.ok()) << out.status().message();
  // Half-pixel: the roi spans x in [0.5, 4.5]; bins [0.5, 2.5] and [2.5, 4.5], samples at
  // 1.0, 2.0 and 3.0, 4.0.
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{1.5, 3.5, 1.5, 3.5}));
  auto bad = RunOne("RoiAlign",
                    {{"x", HostTensor::FromDoubles(kFloat, {1, 1, 8, 8}, plane)},
                     {"rois", HostTensor::FromDoubles(kFloat, {1, 4}, {1, 1, 5, 5})},
                     {"batch", HostTensor::FromInts(kInt64, {1}, {3})}},
                    {1, 1, 1, 1}, kFloat, [](onnx::NodeProto&) {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("batch index 3"), std::string::npos)
      << bad.status().message();
}

TEST(DetectionKernelsTest, ScatterElementsWritesFloatsInPlaceAlongAnyAxis) {
  std::vector<double> data(3 * 2 * 4, 0), upd(2 * 2 * 3);
  for (size_t i = 0; i < upd.size(); ++i) upd[i] = static_cast<double>(i + 1);
  // Along axis 0 (MultiScaleRoIAlign's merge of pooled levels) and along the last axis.
  const std::vector<int64_t> rows = {2, 0, 1, 2, 0, 1, 1, 0, 0, 2, 2, 1};
  auto out = RunOne("ScatterElements",
                    {{"d", HostTensor::FromDoubles(kFloat, {3, 2, 4}, data)},
                     {"i", HostTensor::FromInts(kInt64, {2, 2, 3}, rows)},
                     {"u", HostTensor::FromDoubles(kFloat, {2, 2, 3}, upd)}},
                    {3, 2, 4}, kFloat, [](onnx::NodeProto&) {});
  ASSERT_TRUE(out.ok()) << out.status().message();
  std::vector<double> expected = data;
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 3; ++c) {
        const int64_t k = (a * 2 + b) * 3 + c;
        expected[(rows[k] * 2 + b) * 4 + c] = upd[k];
      }
  EXPECT_EQ((*out)[0].ToDoubles(), expected);
  auto last = RunOne("ScatterElements",
                     {{"d", HostTensor::FromDoubles(kFloat, {3, 2, 4}, data)},
                      {"i", HostTensor::FromInts(kInt64, {2, 2, 3}, rows)},
                      {"u", HostTensor::FromDoubles(kFloat, {2, 2, 3}, upd)}},
                     {3, 2, 4}, kFloat, [](onnx::NodeProto& n) { testing::SetInt(n, "axis", 2); });
  ASSERT_TRUE(last.ok()) << last.status().message();
  expected = data;
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 3; ++c) {
        const int64_t k = (a * 2 + b) * 3 + c;
        expected[(a * 2 + b) * 4 + rows[k]] = upd[k];
      }
  EXPECT_EQ((*last)[0].ToDoubles(), expected);
}

// A node `op` of `inputs` appended to `g`, its output `output`.
onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op,
                         std::vector<std::string> inputs, const std::string& output) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(output);
  return n;
}

// The graph of a new graph attribute `name` of `n`, named after it.
onnx::GraphProto* AddGraph(onnx::NodeProto& n, const std::string& name) {
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

// A graph of one node `op` of `inputs`, whose output is the graph's.
onnx::GraphProto Branch(const std::string& name, const std::string& op,
                        std::vector<std::string> inputs, const std::string& output) {
  onnx::GraphProto g;
  g.set_name(name);
  AddNode(&g, op, std::move(inputs), output)->set_name(name + "_node");
  g.add_output()->set_name(output);
  return g;
}

// y = cond ? x + w : x * x, the branches reading the graph's input x and weight w by name.
std::string IfModel() {
  ModelBuilder b(16);
  b.Input("cond", {}, kBool).Input("x", {2, 2});
  b.Weight("w", HostTensor::FromDoubles(kFloat, {2, 2}, {10, 20, 30, 40}));
  b.Output("y", {2, 2});
  onnx::NodeProto& n = b.Node("If", {"cond"}, {"y"}, "if");
  *AddGraph(n, "then_branch") = Branch("then", "Add", {"x", "w"}, "t");
  *AddGraph(n, "else_branch") = Branch("else", "Mul", {"x", "x"}, "e");
  return b.Bytes();
}

TEST(ControlFlowTest, IfReadsTheEnclosingGraphsValuesAsInputs) {
  ImportOptions options;
  options.map_to_spec_ops = false;
  auto g = ImportOnnxBytes(IfModel(), "if", options);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node* if_node = nullptr;
  for (const auto& n : g->nodes())
    if (n->op_type == "If") if_node = n.get();
  ASSERT_NE(if_node, nullptr);
  // The condition, then x and w, which the branches read.
  ASSERT_EQ(if_node->inputs.size(), 3u);
  EXPECT_EQ(g->value(if_node->inputs[1]).name, "x");
  EXPECT_EQ(g->value(if_node->inputs[2]).name, "w");
  const HostTensor x = HostTensor::FromDoubles(kFloat, {2, 2}, {1, 2, 3, 4});
  for (bool cond : {true, false}) {
    auto out = Execute(*g, {HostTensor::FromInts(kBool, {}, {cond}), x});
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_EQ((*out)[0].ToDoubles(),
              cond ? (std::vector<double>{11, 22, 33, 44}) : (std::vector<double>{1, 4, 9, 16}));
  }
  // The export writes the declared input only; the branches still read x and w by name.
  onnx::ModelProto exported;
  ASSERT_TRUE(ExportOnnxModel(*g, &exported).ok());
  for (const auto& n : exported.graph().node())
    if (n.op_type() == "If") {
      EXPECT_EQ(n.input_size(), 1);
    }
  auto back = ImportOnnxModel(exported, "exported", options);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(StructuralHash(*back), StructuralHash(*g));
}

TEST(ControlFlowTest, CapturedNamesSkipWhatASubgraphDefinesAndRenameOnlyThose) {
  // A Loop whose body defines "s" (its carried input) and "t", reads "x" from outside, and
  // holds an If that reads "t" (the body's) and "z" (from outside the Loop).
  onnx::NodeProto loop;
  loop.set_op_type("Loop");
  onnx::GraphProto* body = AddGraph(loop, "body");
  for (const char* in : {"i", "c", "s"}) body->add_input()->set_name(in);
  AddNode(body, "Add", {"s", "x"}, "t");
  *AddGraph(*AddNode(body, "If", {"c"}, "u"), "then_branch") =
      Branch("then", "Mul", {"t", "z"}, "v");
  for (const char* out : {"c", "u"}) body->add_output()->set_name(out);
  EXPECT_EQ(CapturedNames(loop), (std::vector<std::string>{"x", "z"}));
  RenameCaptured(&loop, {{"x", "x2"}, {"z", "z2"}, {"t", "never"}});
  EXPECT_EQ(CapturedNames(loop), (std::vector<std::string>{"x2", "z2"}));
  EXPECT_EQ(loop.attribute(0).g().node(0).input(0), "s");
  EXPECT_EQ(loop.attribute(0).g().node(1).attribute(0).g().node(0).input(0), "t");
}

TEST(ControlFlowTest, LoopCarriesValuesAndStacksScanOutputs) {
  // s starts at 0 and adds the graph's input x three times; each iteration's s is scanned out.
  ModelBuilder b(16);
  b.Input("x", {2});
  b.Int64Weight("trips", {3});
  b.Weight("s0", HostTensor::FromDoubles(kFloat, {2}, {0, 0}));
  b.Output("s", {2}).Output("history", {3, 2});
  onnx::NodeProto& n = b.Node("Loop", {"trips", "", "s0"}, {"s", "history"}, "loop");
  onnx::GraphProto* body = AddGraph(n, "body");
  for (const char* in : {"i", "c", "s_in"}) body->add_input()->set_name(in);
  AddNode(body, "Add", {"s_in", "x"}, "s_out");
  AddNode(body, "Identity", {"s_out"}, "scan");
  for (const char* out : {"c", "s_out", "scan"}) body->add_output()->set_name(out);
  ImportOptions options;
  options.map_to_spec_ops = false;
  auto g = ImportOnnxBytes(b.Bytes(), "loop", options);
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto out = Execute(*g, {HostTensor::FromDoubles(kFloat, {2}, {1, 2})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{3, 6}));
  EXPECT_EQ((*out)[1].dims, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*out)[1].ToDoubles(), (std::vector<double>{1, 2, 2, 4, 3, 6}));
}

TEST(ControlFlowTest, LoopAccumulatingByConcatAppendsAndKeepsValuesReadLater) {
  // acc grows by one row [s] per iteration (a Concat of the carried value: appended in place);
  // the scan output reads acc's shape after the Concat, so there that Concat must copy.
  for (bool read_after : {false, true}) {
    ModelBuilder b(16);
    b.Input("x", {2});
    b.Int64Weight("trips", {4});
    b.Weight("s0", HostTensor::FromDoubles(kFloat, {2}, {0, 0}));
    b.Weight("acc0", HostTensor::FromDoubles(kFloat, {0, 2}, {}));
    b.Output("s", {2}).Output("acc", {4, 2});
    if (read_after) b.Output("shapes", {4, 2}, kInt64);
    std::vector<std::string> outs = {"s", "acc"};
    if (read_after) outs.push_back("shapes");
    onnx::NodeProto& n = b.Node("Loop", {"trips", "", "s0", "acc0"}, outs, "loop");
    onnx::GraphProto* body = AddGraph(n, "body");
    for (const char* in : {"i", "c", "s_in", "acc_in"}) body->add_input()->set_name(in);
    HostTensor row_shape = HostTensor::FromInts(kInt64, {2}, {1, 2});
    ToTensorProto(row_shape, "row_shape", body->add_initializer());
    AddNode(body, "Add", {"s_in", "x"}, "s_out");
    AddNode(body, "Reshape", {"s_out", "row_shape"}, "row");
    testing::SetInt(*AddNode(body, "Concat", {"acc_in", "row"}, "acc_out"), "axis", 0);
    std::vector<std::string> body_outs = {"c", "s_out", "acc_out"};
    if (read_after) {
      AddNode(body, "Shape", {"acc_in"}, "shape");
      body_outs.push_back("shape");
    }
    for (const auto& o : body_outs) body->add_output()->set_name(o);
    ImportOptions options;
    options.map_to_spec_ops = false;
    auto g = ImportOnnxBytes(b.Bytes(), "loop_concat", options);
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto out = Execute(*g, {HostTensor::FromDoubles(kFloat, {2}, {1, 2})});
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{4, 8}));
    EXPECT_EQ((*out)[1].dims, (std::vector<int64_t>{4, 2}));
    EXPECT_EQ((*out)[1].ToDoubles(), (std::vector<double>{1, 2, 2, 4, 3, 6, 4, 8}));
    if (read_after) {
      EXPECT_EQ((*out)[2].ints, (std::vector<int64_t>{0, 2, 1, 2, 2, 2, 3, 2}));
    }
  }
}

TEST(ControlFlowTest, AnIfOfAConstantConditionFoldsALoopDoesNot) {
  // t = If(true) { w + w } (all constant: folds to its branch's value); s = a Loop over constants
  // (kept: a loop need not end); both read by the graph's outputs through x.
  ModelBuilder b(16);
  b.Input("x", {2});
  b.Weight("w", HostTensor::FromDoubles(kFloat, {2}, {1, 2}));
  b.Weight("yes", HostTensor::FromInts(kBool, {}, {1}));
  b.Int64Weight("trips", {2});
  b.Output("y", {2}).Output("z", {2});
  onnx::NodeProto& n = b.Node("If", {"yes"}, {"t"}, "if");
  for (const char* branch : {"then_branch", "else_branch"})
    *AddGraph(n, branch) = Branch(branch, "Add", {"w", "w"}, std::string(branch) + "_out");
  onnx::NodeProto& loop = b.Node("Loop", {"trips", "", "w"}, {"s"}, "loop");
  onnx::GraphProto* body = AddGraph(loop, "body");
  for (const char* in : {"i", "c", "s_in"}) body->add_input()->set_name(in);
  AddNode(body, "Add", {"s_in", "w"}, "s_out");
  for (const char* out : {"c", "s_out"}) body->add_output()->set_name(out);
  b.Node("Add", {"t", "x"}, {"y"});
  b.Node("Add", {"s", "x"}, {"z"});
  auto g = ImportOnnxBytes(b.Bytes(), "fold");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(testing::CountKind(*g, "onnx:If"), 0);
  EXPECT_EQ(testing::CountKind(*g, "onnx:Loop"), 1);
  auto out = Execute(*g, {HostTensor::FromDoubles(kFloat, {2}, {10, 20})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{12, 24}));
  EXPECT_EQ((*out)[1].ToDoubles(), (std::vector<double>{13, 26}));
}

}  // namespace
}  // namespace verisub::runtime
