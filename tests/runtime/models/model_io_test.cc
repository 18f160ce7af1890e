// Validation rejects broken models with the node named; serialization is deterministic; files are
// written atomically.
#include "runtime/models/model_io.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/models/graph_builder.h"
#include "runtime/models/models.h"

namespace verisub::runtime::models {
namespace {

// x[1,4] -> MatMul(w[4,3]) -> Relu -> y[1,3]
onnx::ModelProto SmallModel() {
  GraphBuilder b("small", 3);
  const std::string x = b.AddInput("x", {1, 4});
  const std::string w = b.AddUniformWeight("w", {4, 3}, -1, 1);
  const std::string y = b.AddNode("Relu", {b.AddNode("MatMul", {x, w})});
  b.AddOutput(y, {1, 3});
  return std::move(b).Finish();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ValidateModelTest, AcceptsAWellFormedModel) {
  EXPECT_TRUE(ValidateModel(SmallModel()).ok()) << ValidateModel(SmallModel()).ToString();
}

TEST(ValidateModelTest, RejectsAMissingInitializer) {
  onnx::ModelProto m = SmallModel();
  m.mutable_graph()->clear_initializer();
  const Status s = ValidateModel(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("small"), std::string::npos) << s.message();
}

TEST(ValidateModelTest, RejectsADeclaredOutputShapeThatContradictsInference) {
  onnx::ModelProto m = SmallModel();
  m.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(5);
  EXPECT_FALSE(ValidateModel(m).ok());
}

TEST(ValidateModelTest, RejectsAnIncompatibleMatMul) {
  onnx::ModelProto m = SmallModel();
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(5);
  const Status s = ValidateModel(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("shape inference"), std::string::npos) << s.message();
}

TEST(ValidateModelTest, RejectsAnOutputWithoutStaticShape) {
  onnx::ModelProto m = SmallModel();
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("batch");
  m.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("batch");
  const Status s = ValidateModel(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("static shape"), std::string::npos) << s.message();
}

TEST(ValidateModelTest, RejectsAnUnknownOperator) {
  onnx::ModelProto m = SmallModel();
  m.mutable_graph()->mutable_node(1)->set_op_type("NoSuchOp");
  const Status s = ValidateModel(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("NoSuchOp"), std::string::npos) << s.message();
}

TEST(SerializeModelTest, SameOptionsGiveIdenticalBytes) {
  // The small and medium models; bert_base and the big CNNs are built in models_test.
  for (const char* name : {"squeezenet1_1", "mobilenet_v2", "nasrnn", "bert_1layer"}) {
    const std::string a = SerializeModel(BuildModel(name, {}).value()).value();
    const std::string b = SerializeModel(BuildModel(name, {}).value()).value();
    EXPECT_EQ(a, b) << name;
    BuildOptions other;
    other.seed = 1;
    EXPECT_NE(SerializeModel(BuildModel(name, other).value()).value(), a) << name;
  }
}

TEST(SerializeModelTest, BytesParseBackToTheSameModel) {
  const onnx::ModelProto m = BuildMobileNetV2({});
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(SerializeModel(m).value()));
  EXPECT_EQ(parsed.graph().node_size(), m.graph().node_size());
  EXPECT_EQ(SerializeModel(parsed).value(), SerializeModel(m).value());
}

class WriteModelFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("verisub_models_test_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(WriteModelFileTest, WritesExactlyTheSerializedBytes) {
  const onnx::ModelProto m = SmallModel();
  const std::string path = (dir_ / "small.onnx").string();
  ASSERT_TRUE(WriteModelFile(m, path).ok());
  EXPECT_EQ(ReadFile(path), SerializeModel(m).value());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  // Overwriting an existing file works too.
  ASSERT_TRUE(WriteModelFile(BuildSqueezeNet11({}), path).ok());
  EXPECT_EQ(ReadFile(path), SerializeModel(BuildSqueezeNet11({})).value());
}

TEST_F(WriteModelFileTest, MissingFolderFailsAndLeavesNothing) {
  const std::string path = (dir_ / "missing" / "small.onnx").string();
  const Status s = WriteModelFile(SmallModel(), path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("missing"), std::string::npos) << s.message();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "missing"));
}

// verisub-models' library call: each named model in DIR/NAME.onnx (the folder must exist: no
// program of the tree creates one), the exact bytes of the builder's model, one report line
// each; an unknown name is an error naming it.
TEST_F(WriteModelFileTest, WriteModelsWritesEachNamedModel) {
  const std::filesystem::path out = dir_ / "made" / "here";
  std::string report;
  BuildOptions options;
  options.seed = 7;
  const Status missing = WriteModels({"squeezenet1_1"}, out.string(), options, &report);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("made/here"), std::string::npos) << missing.message();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "made"));
  std::filesystem::create_directories(out);
  ASSERT_TRUE(WriteModels({"squeezenet1_1"}, out.string(), options, &report).ok());
  EXPECT_EQ(ReadFile((out / "squeezenet1_1.onnx").string()),
            SerializeModel(BuildSqueezeNet11(options)).value());
  EXPECT_EQ(report.rfind("squeezenet1_1 ", 0), 0u) << report;
  EXPECT_NE(report.find((out / "squeezenet1_1.onnx").string() + "\n"), std::string::npos);

  const Status bad = WriteModels({"no_such_model"}, out.string(), options, &report);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("no_such_model"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace verisub::runtime::models
