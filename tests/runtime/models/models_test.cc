// Every benchmark model passes the ONNX checker and strict shape inference, and has the node
// histogram and output shapes its architecture implies.
#include "runtime/models/models.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "runtime/models/model_io.h"

namespace verisub::runtime::models {
namespace {

using Histogram = std::map<std::string, int>;

Histogram OpHistogram(const onnx::ModelProto& model) {
  Histogram h;
  for (const onnx::NodeProto& n : model.graph().node()) ++h[n.op_type()];
  return h;
}

std::vector<int64_t> Shape(const onnx::ValueInfoProto& v) {
  std::vector<int64_t> dims;
  for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.dim_value());
  return dims;
}

int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

const onnx::TensorProto* FindInitializer(const onnx::ModelProto& model, const std::string& name) {
  for (const onnx::TensorProto& t : model.graph().initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

// Conv nodes whose group attribute equals `group`, or (group == 0) equals the input channels,
// i.e. depthwise convolutions.
int CountConvGroups(const onnx::ModelProto& model, int64_t group) {
  int count = 0;
  for (const onnx::NodeProto& n : model.graph().node()) {
    if (n.op_type() != "Conv") continue;
    const onnx::TensorProto* w = FindInitializer(model, n.input(1));
    EXPECT_NE(w, nullptr) << n.name();
    if (w == nullptr) continue;
    const int64_t g = IntAttribute(n, "group", 1);
    const bool depthwise = w->dims(1) == 1 && g == w->dims(0);
    if (group == 0 ? depthwise : g == group) ++count;
  }
  return count;
}

struct Expected {
  std::string name;
  Histogram ops;
  std::vector<std::vector<int64_t>> inputs;
  std::vector<int64_t> output;
};

void PrintTo(const Expected& e, std::ostream* os) { *os << e.name; }

int Total(const Histogram& h) {
  int n = 0;
  for (const auto& [op, count] : h) n += count;
  return n;
}

class ModelTest : public ::testing::TestWithParam<Expected> {};

TEST_P(ModelTest, ValidHistogramAndShapes) {
  const Expected& e = GetParam();
  StatusOr<onnx::ModelProto> model = BuildModel(e.name, BuildOptions{});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->opset_import(0).version(), kOpsetVersion);
  const Status valid = ValidateModel(*model);
  EXPECT_TRUE(valid.ok()) << valid.ToString();
  EXPECT_EQ(OpHistogram(*model), e.ops);
  EXPECT_EQ(model->graph().node_size(), Total(e.ops));
  ASSERT_EQ(model->graph().input_size(), static_cast<int>(e.inputs.size()));
  for (int i = 0; i < model->graph().input_size(); ++i) {
    EXPECT_EQ(Shape(model->graph().input(i)), e.inputs[static_cast<size_t>(i)]);
  }
  ASSERT_EQ(model->graph().output_size(), 1);
  EXPECT_EQ(Shape(model->graph().output(0)), e.output);
}

std::vector<int64_t> Image224() { return {1, 3, 224, 224}; }
std::vector<int64_t> Logits() { return {1, 1000}; }

// The counts follow from the published architectures (see runtime/models/README.md):
// ResNet-50: 1 stem + 16 bottlenecks x 3 + 4 projection shortcuts = 53 convs, 16 residual Adds.
Histogram ResNetOps() {
  return {{"Conv", 53},   {"BatchNormalization", 53}, {"Relu", 49},   {"Add", 16},
          {"MaxPool", 1}, {"GlobalAveragePool", 1},   {"Flatten", 1}, {"Gemm", 1}};
}

std::vector<int64_t> BertDims() { return {1, 128, 768}; }

// BERT: per layer 8 MatMul, 9 Add (6 biases, 2 residuals, GELU's +1), 4 Reshape, 4 Transpose,
// 2 Div (score scale, GELU), Softmax, Erf, 2 Mul, 2 LayerNormalization; plus the embedding LN.
Histogram BertOps(int layers) {
  return {{"MatMul", 8 * layers},    {"Add", 9 * layers}, {"Reshape", 4 * layers},
          {"Transpose", 4 * layers}, {"Div", 2 * layers}, {"Softmax", layers},
          {"Erf", layers},           {"Mul", 2 * layers}, {"LayerNormalization", 2 * layers + 1}};
}

// NasRNN: per step 16 MatMul, 8 + 3 Add, 4 Mul, 2 Relu, 5 Sigmoid, 8 Tanh; 5 steps.
Histogram NasRnnOps() {
  return {{"MatMul", 80}, {"Add", 55}, {"Mul", 20}, {"Relu", 10}, {"Sigmoid", 25}, {"Tanh", 40}};
}

INSTANTIATE_TEST_SUITE_P(
    AllModels, ModelTest,
    ::testing::Values(
        Expected{"resnet50", ResNetOps(), {Image224()}, Logits()},
        Expected{"resnext50_32x4d", ResNetOps(), {Image224()}, Logits()},
        // 5 stem + 3 A x 7 + B 4 + 4 C x 10 + D 6 + 2 E x 9 = 94 BasicConv2d blocks.
        Expected{"inception_v3",
                 {{"Conv", 94},
                  {"BatchNormalization", 94},
                  {"Relu", 94},
                  {"Concat", 15},
                  {"AveragePool", 9},
                  {"MaxPool", 4},
                  {"GlobalAveragePool", 1},
                  {"Flatten", 1},
                  {"Gemm", 1}},
                 {{1, 3, 299, 299}},
                 Logits()},
        // 1 stem conv + 8 fire modules x 3 + the 1x1 classifier conv.
        Expected{"squeezenet1_1",
                 {{"Conv", 26},
                  {"Relu", 26},
                  {"Concat", 8},
                  {"MaxPool", 3},
                  {"GlobalAveragePool", 1},
                  {"Flatten", 1}},
                 {Image224()},
                 Logits()},
        // 17 inverted residuals (the first without expansion), 10 of them with a skip Add.
        Expected{"mobilenet_v2",
                 {{"Conv", 52},
                  {"BatchNormalization", 52},
                  {"Clip", 35},
                  {"Add", 10},
                  {"GlobalAveragePool", 1},
                  {"Flatten", 1},
                  {"Gemm", 1}},
                 {Image224()},
                 Logits()},
        // 15 normal cells (12 convs, 3 avg pools, 5 adds) and 3 reduction cells (12 convs,
        // 2 max + 2 avg pools, 5 adds), each with two conv+ReLU input adapters and a concat.
        Expected{"nasnet_a",
                 {{"Conv", 217},
                  {"Relu", 37},
                  {"AveragePool", 51},
                  {"MaxPool", 7},
                  {"Add", 90},
                  {"Concat", 18},
                  {"GlobalAveragePool", 1},
                  {"Flatten", 1},
                  {"Gemm", 1}},
                 {Image224()},
                 Logits()},
        Expected{"nasrnn",
                 NasRnnOps(),
                 {{1, 512}, {1, 512}, {1, 512}, {1, 512}, {1, 512}, {1, 512}},
                 {1, 512}},
        Expected{"bert_1layer", BertOps(1), {BertDims()}, BertDims()},
        Expected{"bert_base", BertOps(12), {BertDims()}, BertDims()}),
    [](const ::testing::TestParamInfo<Expected>& info) { return info.param.name; });

TEST(ModelDetailTest, ResNeXtHasGroupedConvsOnlyWhereExpected) {
  const onnx::ModelProto resnext = BuildResNeXt50({});
  EXPECT_EQ(CountConvGroups(resnext, 32), 16);  // one 3x3 per bottleneck
  EXPECT_EQ(CountConvGroups(resnext, 1), 53 - 16);
  EXPECT_EQ(CountConvGroups(BuildResNet50({}), 1), 53);
}

TEST(ModelDetailTest, MobileNetV2ConvsAreDepthwiseWhereExpected) {
  const onnx::ModelProto model = BuildMobileNetV2({});
  EXPECT_EQ(CountConvGroups(model, 0), 17);  // one depthwise 3x3 per inverted residual
  EXPECT_EQ(CountConvGroups(model, 1), 52 - 17);
}

TEST(ModelDetailTest, NasNetSeparableConvsAreDepthwise) {
  // 5 separable convolutions per cell, 18 cells.
  EXPECT_EQ(CountConvGroups(BuildNasNetA({}), 0), 90);
}

TEST(ModelDetailTest, InceptionPoolsCountPaddingLikePyTorch) {
  const onnx::ModelProto model = BuildInceptionV3({});
  int asymmetric_kernels = 0;
  for (const onnx::NodeProto& n : model.graph().node()) {
    if (n.op_type() == "AveragePool") {
      EXPECT_EQ(IntAttribute(n, "count_include_pad", 0), 1) << n.name();
    }
    if (n.op_type() != "Conv") continue;
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.name() == "kernel_shape" && a.ints(0) != a.ints(1)) {
        ++asymmetric_kernels;
        // Symmetric "same" padding for 1x7 / 7x1 / 1x3 / 3x1 kernels.
        for (const onnx::AttributeProto& p : n.attribute()) {
          if (p.name() != "pads") continue;
          EXPECT_EQ(p.ints(0), (a.ints(0) - 1) / 2) << n.name();
          EXPECT_EQ(p.ints(1), (a.ints(1) - 1) / 2) << n.name();
          EXPECT_EQ(p.ints(0), p.ints(2)) << n.name();
          EXPECT_EQ(p.ints(1), p.ints(3)) << n.name();
        }
      }
    }
  }
  // C: 2 + 4 per block x 4 blocks; D: 2; E: 4 per block x 2 blocks.
  EXPECT_EQ(asymmetric_kernels, 4 * 6 + 2 + 2 * 4);
}

TEST(ModelDetailTest, SqueezeNetPoolsUseCeilMode) {
  const onnx::ModelProto model = BuildSqueezeNet11({});
  for (const onnx::NodeProto& n : model.graph().node()) {
    if (n.op_type() == "MaxPool") {
      EXPECT_EQ(IntAttribute(n, "ceil_mode", 0), 1) << n.name();
    }
  }
}

TEST(ModelDetailTest, BertSoftmaxRunsOverKeysPerHead) {
  StatusOr<onnx::ModelProto> inferred = InferModelShapes(BuildModel("bert_1layer", {}).value());
  ASSERT_TRUE(inferred.ok()) << inferred.status().ToString();
  std::string softmax_output;
  for (const onnx::NodeProto& n : inferred->graph().node()) {
    if (n.op_type() == "Softmax") softmax_output = n.output(0);
  }
  bool found = false;
  for (const onnx::ValueInfoProto& v : inferred->graph().value_info()) {
    if (v.name() != softmax_output) continue;
    found = true;
    EXPECT_EQ(Shape(v), (std::vector<int64_t>{1, 12, 128, 128}));
  }
  EXPECT_TRUE(found);
}

TEST(ModelRegistryTest, UnknownNameIsNotFound) {
  StatusOr<onnx::ModelProto> model = BuildModel("resnet51", {});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kNotFound);
  EXPECT_NE(model.status().message().find("resnet50"), std::string::npos);
}

TEST(ModelRegistryTest, NamesAreUniqueAndMatchGraphNames) {
  std::map<std::string, int> seen;
  for (const ModelEntry& m : ListModels()) {
    EXPECT_EQ(++seen[std::string(m.name)], 1) << m.name;
    if (m.name == "bert_base" || m.name == "inception_v3") continue;  // covered above; big
    EXPECT_EQ(m.build({}).graph().name(), m.name);
  }
  EXPECT_EQ(seen.size(), 9u);
}

}  // namespace
}  // namespace verisub::runtime::models
