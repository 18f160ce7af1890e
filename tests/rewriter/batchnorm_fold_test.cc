// A BatchNormalization that the exporter did not fold (Conv -> BatchNormalization -> Relu, as
// torch.onnx.export writes a model exported in training mode's structure with eval statistics):
// imported as channel_scale + bias_add, folded into the convolution's kernel by the shipped
// rules, the folded kernel computed into a new initializer, the shift Conv's bias, outputs equal,
// checker passing.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "runtime/onnx_import.h"
#include "tests/rewriter/run_command.h"
#include "tests/runtime/test_models.h"

namespace verisub::rewriter {
namespace {

namespace fs = std::filesystem;
using runtime::testing::ModelBuilder;
using testing::CommandResult;
using testing::RunCommand;

// x -> Conv (no bias, or with one) -> BatchNormalization (constant statistics) -> Relu -> y.
std::string ConvBnRelu(int64_t group, bool conv_bias) {
  ModelBuilder b;
  const int64_t c = 8;
  b.Input("x", {1, c, 6, 6}).Output("y", {1, c, 6, 6});
  b.RandomWeight("w", {c, c / group, 3, 3}, 1);
  b.RandomWeight("gamma", {c}, 2).RandomWeight("beta", {c}, 3).RandomWeight("mean", {c}, 4);
  std::vector<double> var(c);
  for (int64_t i = 0; i < c; ++i) var[i] = 0.25 + 0.5 * static_cast<double>(i);
  b.Weight("var", runtime::HostTensor::FromDoubles(runtime::kFloat, {c}, var));
  std::vector<std::string> conv_in = {"x", "w"};
  if (conv_bias) {
    b.RandomWeight("bias", {c}, 5);
    conv_in.push_back("bias");
  }
  auto& conv = b.Node("Conv", conv_in, {"c"}, "conv");
  runtime::testing::SetInts(conv, "pads", {1, 1, 1, 1});
  runtime::testing::SetInt(conv, "group", group);
  runtime::testing::SetFloat(
      b.Node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"}, "bn"), "epsilon",
      1e-3f);
  b.Node("Relu", {"bn"}, {"y"}, "relu");
  return b.Bytes();
}

class BatchnormFoldTest : public ::testing::TestWithParam<std::pair<int64_t, bool>> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("verisub_bn_fold_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + std::to_string(GetParam().first) + "_" + std::to_string(GetParam().second));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_P(BatchnormFoldTest, FoldsIntoTheConvolutionWithEqualOutputs) {
  const auto [group, conv_bias] = GetParam();
  {
    std::string bytes = ConvBnRelu(group, conv_bias);
    FILE* f = std::fopen((dir_ / "in.onnx").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  CommandResult r =
      RunCommand(std::string(VERISUB_OPT_PATH) + " " + (dir_ / "in.onnx").string() + " -o " +
                 (dir_ / "out.onnx").string() + " --cost analytic --verify-outputs");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("verify outputs:  ok"), std::string::npos) << r.output;
  EXPECT_NO_THROW(onnx::checker::check_model((dir_ / "out.onnx").string()));

  onnx::ModelProto out;
  {
    std::ifstream in(dir_ / "out.onnx", std::ios::binary);
    ASSERT_TRUE(out.ParseFromIstream(&in));
  }
  int convs = 0, muls = 0, bns = 0, adds = 0, conv_inputs = 0;
  std::string kernel;
  for (const onnx::NodeProto& n : out.graph().node()) {
    convs += n.op_type() == "Conv";
    muls += n.op_type() == "Mul";
    bns += n.op_type() == "BatchNormalization";
    adds += n.op_type() == "Add";
    if (n.op_type() == "Conv") kernel = n.input(1), conv_inputs = n.input_size();
  }
  EXPECT_EQ(convs, 1) << r.output;
  EXPECT_EQ(muls, 0) << r.output;
  EXPECT_EQ(bns, 0) << r.output;
  // The conv's bias (scaled) and the batchnorm's shift are one vector, Conv's third input
  // (fuse-epilogues), and the Relu follows it.
  EXPECT_EQ(adds, 0) << r.output;
  EXPECT_EQ(conv_inputs, 3) << r.output;
  // The kernel is a new initializer (the scaled one), not the model's "w".
  bool kernel_is_initializer = false;
  for (const onnx::TensorProto& t : out.graph().initializer())
    kernel_is_initializer |= t.name() == kernel;
  EXPECT_TRUE(kernel_is_initializer) << kernel;
  EXPECT_NE(kernel, "w");
}

INSTANTIATE_TEST_SUITE_P(Shapes, BatchnormFoldTest,
                         ::testing::Values(std::make_pair(int64_t{1}, false),
                                           std::make_pair(int64_t{1}, true),
                                           std::make_pair(int64_t{8}, false)));

}  // namespace
}  // namespace verisub::rewriter
