// Regression tests of issue 17's runtime crashes and wrong results, each on the committed fuzz
// corpus file that reproduces it (tests/fuzz/corpus/onnx_import/regress_*.onnx, made from
// tests/fuzz/onnx_cases/*.textproto): a clear error instead of SIGFPE, length_error or bad_alloc,
// and a graph input kept when an initializer gives its default.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "onnx/onnx_pb.h"
#include "runtime/executor.h"
#include "runtime/memory_budget.h"
#include "runtime/onnx_export.h"
#include "runtime/onnx_import.h"
#include "tests/runtime/test_models.h"

namespace verisub::runtime {
namespace {

std::string Corpus(const std::string& name) {
  std::ifstream in("tests/fuzz/corpus/onnx_import/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ExpectError(const StatusOr<Graph>& g, const std::vector<std::string>& fragments) {
  ASSERT_FALSE(g.ok());
  for (const auto& f : fragments)
    EXPECT_NE(g.status().message().find(f), std::string::npos)
        << "missing '" << f << "' in: " << g.status().message();
}

TEST(HardeningTest, ConvStrideZeroIsAnErrorNotSigfpe) {
  ExpectError(ImportOnnxBytes(Corpus("regress_conv_stride_zero.onnx"), "conv.onnx"),
              {"conv.onnx", "node 'n0' (Conv)", "'strides'", "value 0"});
}

TEST(HardeningTest, ReshapeOfZeroSizeThenItsShapeIsAnErrorNotASegfault) {
  ExpectError(ImportOnnxBytes(Corpus("regress_reshape_zero_then_shape.onnx"), "reshape.onnx"),
              {"reshape.onnx", "node 'n1' (Reshape)", "-1"});
}

TEST(HardeningTest, DepthToSpaceHugeBlocksizeIsAnErrorNotSigfpe) {
  ExpectError(ImportOnnxBytes(Corpus("regress_depthtospace_huge_blocksize.onnx"), "d2s.onnx"),
              {"d2s.onnx", "node 'n0' (DepthToSpace)", "'blocksize'", "at most"});
}

TEST(HardeningTest, MaxPoolStrideZeroIsAnErrorNotSigfpe) {
  ExpectError(ImportOnnxBytes(Corpus("regress_maxpool_stride_zero.onnx"), "max.onnx"),
              {"max.onnx", "(MaxPool)", "'strides'"});
}

TEST(HardeningTest, AveragePoolStrideOneZeroIsAnErrorNotSigfpe) {
  ExpectError(ImportOnnxBytes(Corpus("regress_averagepool_stride_zero.onnx"), "avg.onnx"),
              {"avg.onnx", "(AveragePool)", "'strides'"});
}

// Found by fuzz_onnx_import (structure-aware mutation of ONNX's layer-normalization test model):
// axis = INT64_MAX segfaulted inside ONNX's LayerNormalization inference.
TEST(HardeningTest, LayerNormalizationAxisInt64MaxIsAnErrorNotASegfault) {
  ExpectError(ImportOnnxBytes(Corpus("regress_layernorm_axis_int64_max.onnx"), "layernorm.onnx"),
              {"layernorm.onnx", "(LayerNormalization)", "'axis'", "out of range"});
}

// Found by fuzz_onnx_import: a rank-2 weight of ConvTranspose was a null dereference in ONNX's
// convTransposeShapeInference.
TEST(HardeningTest, ConvTransposeWithARank2WeightIsAnErrorNotASegfault) {
  ExpectError(ImportOnnxBytes(Corpus("regress_convtranspose_rank2_weight.onnx"), "ct.onnx"),
              {"ct.onnx", "(ConvTranspose)", "the weight (input 1) has rank 2"});
}

// Found by fuzz_onnx_import: a rank-1 B of Gemm (opset 6) crashed ONNX's inference; a
// zero-element initializer with a huge dim overflowed Concat's dims (UBSan).
TEST(HardeningTest, GemmWithARank1OperandIsAnErrorNotASegfault) {
  // The model's inputs have symbolic dimensions: without static shapes required, the import
  // goes on to ONNX's inference, where the rank check stands in front of the crash.
  ImportOptions dynamic;
  dynamic.require_static_shapes = false;
  ExpectError(ImportOnnxBytes(Corpus("regress_gemm_rank1_b.onnx"), "gemm.onnx", dynamic),
              {"gemm.onnx", "(Gemm)", "Gemm needs rank 2"});
}

TEST(HardeningTest, ConcatOfDimsThatOverflowIsNotUndefinedBehaviour) {
  auto g = ImportOnnxBytes(Corpus("regress_concat_dims_overflow.onnx"), "concat.onnx");
  if (!g.ok()) {
    EXPECT_EQ(g.status().message().rfind("concat.onnx", 0), 0u);
  }
}

// Found by fuzz_onnx_import under UBSan: the raw-data size check multiplied a huge element count
// by the element size.
TEST(HardeningTest, InitializerWhoseByteCountOverflowsIsAnError) {
  auto g = ImportOnnxBytes(Corpus("regress_initializer_bytes_overflow.onnx"), "init.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message().rfind("init.onnx", 0), 0u) << g.status().message();
}

// Found by fuzz_onnx_import (a timeout): a softmax over [2^40,4,0] holds nothing but looped 2^42
// times; the budget counts a zero dimension as one.
TEST(HardeningTest, EmptyTensorWithHugeDimsIsRefusedNotLoopedOver) {
  auto g = ImportOnnxBytes(Corpus("regress_softmax_empty_huge_dims.onnx"), "softmax.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("memory budget"), std::string::npos) << g.status().message();
}

TEST(HardeningTest, InputOfShape1x3x2pow31x2pow31IsRefusedNamingTheTensor) {
  ExpectError(ImportOnnxBytes(Corpus("regress_huge_input_shape.onnx"), "huge.onnx"),
              {"huge.onnx", "tensor 'x' [1,3,2147483648,2147483648]", "overflows"});
}

TEST(HardeningTest, NineGigabyteInputIsRefusedByTheMemoryBudget) {
  testing::ModelBuilder b;
  b.Input("x", {1, 3, 50000, 15000}).Output("y", {1, 3, 50000, 15000});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  ExpectError(ImportOnnxBytes(b.Bytes(), "big.onnx"),
              {"big.onnx", "tensor 'x'", "9000000000 bytes", "memory budget"});
  // A larger budget lets it through (nothing is allocated by import).
  ImportOptions roomy;
  roomy.memory.max_tensor_bytes = int64_t{16} << 30;
  auto g = ImportOnnxBytes(b.Bytes(), "big.onnx", roomy);
  ASSERT_TRUE(g.ok()) << g.status().message();
  // The executor, which computes in doubles, refuses before allocating anything.
  auto run = Execute(*g, {});
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("memory budget"), std::string::npos)
      << run.status().message();
}

TEST(HardeningTest, TensorBytesIsCheckedArithmetic) {
  EXPECT_EQ(TensorBytes({1, 3, int64_t{1} << 31, int64_t{1} << 31}, 4), -1);
  EXPECT_EQ(TensorBytes({int64_t{1} << 62}, 4), -1);
  EXPECT_EQ(TensorBytes({2, -1}, 4), -1);
  EXPECT_EQ(TensorBytes({2, 3}, 4), 24);
  EXPECT_EQ(TensorBytes({}, 8), 8);
  // Found by fuzzing: no element, but partial products overflow (Concat summed its dims).
  EXPECT_EQ(TensorBytes({0, INT64_MAX, 2}, 4), -1);
  EXPECT_EQ(TensorBytes({0, 5}, 4), 0);
}

TEST(HardeningTest, InitializerNamedLikeAnInputKeepsTheInput) {
  const std::string bytes = Corpus("regress_initializer_named_like_input.onnx");
  auto g = ImportOnnxBytes(bytes, "default.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->inputs().size(), 2u);
  EXPECT_EQ(g->value(g->inputs()[1]).name, "bias");
  EXPECT_EQ(g->value(g->inputs()[1]).constant, nullptr) << "an overridable input was folded";
  ASSERT_NE(g->value(g->inputs()[1]).input_default, nullptr);
  // The caller's value wins over the default.
  auto out = Execute(*g, {HostTensor::FromDoubles(kFloat, {2}, {10, 20}),
                          HostTensor::FromDoubles(kFloat, {2}, {100, 200})});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{110, 220}));
  // Export keeps both the input and its default.
  onnx::ModelProto model;
  ASSERT_TRUE(ExportOnnxModel(*g, &model).ok());
  ASSERT_EQ(model.graph().input_size(), 2);
  EXPECT_EQ(model.graph().input(1).name(), "bias");
  bool has_default = false;
  for (const auto& init : model.graph().initializer()) has_default |= init.name() == "bias";
  EXPECT_TRUE(has_default);
}

TEST(HardeningTest, BeforeIr4AnInitializerListedAsInputIsAWeight) {
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(Corpus("regress_initializer_named_like_input.onnx")));
  model.set_ir_version(3);
  auto g = ImportOnnxModel(model, "old.onnx");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->inputs().size(), 1u);
}

}  // namespace
}  // namespace verisub::runtime
