// The committed PyTorch-exported models (data/models/) load, pass the checker and strict shape
// inference, and their recorded tensors match the graph's input and output shapes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/models/model_io.h"

namespace verisub::runtime::models {
namespace {

std::filesystem::path DataDir() { return VERISUB_EXPORTED_MODELS_DIR; }

template <typename Proto>
bool ParseFile(const std::filesystem::path& path, Proto* proto) {
  std::ifstream in(path, std::ios::binary);
  return in && proto->ParseFromIstream(&in);
}

std::vector<int64_t> Shape(const onnx::ValueInfoProto& v) {
  std::vector<int64_t> dims;
  for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.dim_value());
  return dims;
}

class ExportedModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExportedModelTest, LoadsValidatesAndMatchesRecordedTensors) {
  const std::string name = GetParam();
  onnx::ModelProto model;
  ASSERT_TRUE(ParseFile(DataDir() / (name + ".onnx"), &model)) << name;
  EXPECT_EQ(model.opset_import(0).version(), 17);
  EXPECT_EQ(model.producer_name(), "pytorch");
  const Status valid = ValidateModel(model);
  EXPECT_TRUE(valid.ok()) << valid.ToString();
  ASSERT_EQ(model.graph().input_size(), 1);
  ASSERT_EQ(model.graph().output_size(), 1);
  const std::pair<const char*, const onnx::ValueInfoProto*> recorded[] = {
      {".input_0.pb", &model.graph().input(0)}, {".output_0.pb", &model.graph().output(0)}};
  for (const auto& [suffix, value] : recorded) {
    onnx::TensorProto tensor;
    ASSERT_TRUE(ParseFile(DataDir() / (name + suffix), &tensor)) << name << suffix;
    EXPECT_EQ(tensor.data_type(), onnx::TensorProto::FLOAT);
    const std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
    EXPECT_EQ(dims, Shape(*value)) << name << suffix;
    int64_t elements = 1;
    for (int64_t d : dims) elements *= d;
    EXPECT_EQ(tensor.raw_data().size(), static_cast<size_t>(elements) * sizeof(float));
  }
}

INSTANTIATE_TEST_SUITE_P(Committed, ExportedModelTest,
                         ::testing::Values("small_resnet", "tiny_transformer", "mobilenet_v2_w025",
                                           "squeezenet1_1"));

TEST(ExportedModelsFolderTest, StaysUnderTenMegabytes) {
  uintmax_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(DataDir())) {
    if (entry.is_regular_file()) total += entry.file_size();
  }
  EXPECT_LE(total, 10u * 1000u * 1000u);
}

}  // namespace
}  // namespace verisub::runtime::models
