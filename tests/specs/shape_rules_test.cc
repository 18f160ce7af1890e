// Shape-rule errors name the operator, the parameter or input, and why.
#include <gtest/gtest.h>

#include "tests/specs/test_util.h"

namespace verisub::specs {
namespace {

using testing::MakeTensor;
using testing::RunOp;

Tensor<double> Zeros(Shape s) { return MakeTensor(s, std::vector<double>(s.NumElements(), 0.0)); }

void ExpectError(const std::string& op, const std::vector<Tensor<double>>& in,
                 const std::string& message) {
  auto r = RunOp(op, in);
  ASSERT_FALSE(r.ok()) << op << " should fail";
  EXPECT_NE(r.status().message().find(message), std::string::npos)
      << op << " -> " << r.status().message();
}

TEST(ShapeRulesTest, Conv2d) {
  ExpectError("conv2d", {Zeros({1, 3, 5, 5}), Zeros({4, 4, 3, 3})},
              "conv2d: input 0 has 3 channels but weight [4,4,3,3] with 1 group(s) expects 4");
  ExpectError("conv2d[padding=same]", {Zeros({1, 4, 5, 5}), Zeros({4, 4, 2, 2})},
              "conv2d: padding=same needs an odd window along height, got 2");
  ExpectError("conv2d[padding=valid]", {Zeros({1, 4, 2, 2}), Zeros({4, 4, 3, 3})},
              "larger than the input (2) along height");
  ExpectError("conv2d[group=dw]", {Zeros({1, 4, 5, 5}), Zeros({4, 2, 3, 3})},
              "group=dw needs a weight with 1 input channel per group");
  ExpectError("conv2d[group=3]", {Zeros({1, 6, 5, 5}), Zeros({4, 2, 3, 3})},
              "output channels are not divisible by group=3");
  ExpectError("conv2d", {Zeros({4, 5, 5}), Zeros({4, 4, 3, 3})},
              "conv2d: input 0 must have rank 4");
  ExpectError("conv2d[stride_h=0]", {Zeros({1, 4, 5, 5}), Zeros({4, 4, 3, 3})},
              "parameter 'stride_h': value 0 is below the minimum 1");
}

TEST(ShapeRulesTest, InferTypesChecksParameterValuesAndNamesTheOperator) {
  TensorType x(Shape{1, 4, 5, 5}), w(Shape{4, 4, 3, 3});
  const TensorType* in[] = {&x, &w};
  TensorType out[kMaxOpOutputs];
  Params p = GetOp(OpKind::kConv2d).DefaultParams();
  p[ops::kConvActivation] = static_cast<int64_t>(Activation::kErf);  // no convolution applies it
  Status st = InferTypes(OpKind::kConv2d, p, in, out);
  EXPECT_EQ(st.message(), "conv2d: parameter 'activation': value 11 is not one of its names");
  p = GetOp(OpKind::kConv2d).DefaultParams();
  ASSERT_TRUE(InferTypes(OpKind::kConv2d, p, in, out).ok());
  EXPECT_EQ(out[0].shape, (Shape{1, 4, 5, 5}));
}

TEST(ShapeRulesTest, OtherOperators) {
  ExpectError("matmul", {Zeros({2, 3}), Zeros({4, 5})},
              "matmul: inner dimensions differ: [2,3] x [4,5]");
  ExpectError("matmul", {Zeros({3}), Zeros({3, 5})}, "matmul: input 0 must have rank >= 2");
  ExpectError("ewadd", {Zeros({2, 3}), Zeros({3, 2})},
              "ewadd: inputs have different shapes [2,3] and [3,2]");
  ExpectError("smul", {Zeros({2, 3}), Zeros({1})},
              "smul: input 1 must be a scalar (rank 0), got [1]");
  ExpectError("transpose[perm=[1,0]]", {Zeros({2, 3, 4})},
              "transpose: parameter 'perm' has 2 entries but input 0 has rank 3");
  ExpectError("concat[axis=1]", {Zeros({2, 3}), Zeros({3, 3})},
              "concat: inputs [2,3] and [3,3] differ in dimension 0, which is not the concat axis");
  ExpectError("concat[axis=3]", {Zeros({2, 3}), Zeros({2, 3})},
              "concat: parameter 'axis'=3 is out of range for rank 2");
  ExpectError("split[axis=0]", {Zeros({4, 3})},
              "split: input 0 has no concat along axis 0 to undo");
  ExpectError("enlarge", {Zeros({4, 4, 5, 5})},
              "enlarge: cannot enlarge kernel [4,4,5,5] to a smaller 3x3 window");
  ExpectError("enlarge", {Zeros({4, 4, 2, 3})}, "cannot be centred in a 3x3 window");
  ExpectError("reshape[shape=[4,-1]]", {Zeros({2, 3})},
              "reshape: cannot infer -1: 6 elements are not divisible by 4");
  ExpectError("reshape[shape=[4,2]]", {Zeros({2, 3})}, "has 6 elements, target shape has 8");
  ExpectError("batchnorm", {Zeros({1, 3, 2, 2}), Zeros({3}), Zeros({2}), Zeros({3}), Zeros({3})},
              "batchnorm: input 2 [2] must have 3 entries, one per channel of input 0");
  ExpectError("bias_add[axis=1]", {Zeros({2, 3}), Zeros({2})},
              "bias_add: bias [2] does not match dimension 1");
  ExpectError("channel_scale[axis=0]", {Zeros({2, 3}), Zeros({3})},
              "channel_scale: scale [3] does not match dimension 0 of input 0 [2,3]");
  ExpectError("channel_scale[axis=2]", {Zeros({2, 3}), Zeros({3})},
              "channel_scale: parameter 'axis'=2 is out of range for input 0 [2,3]");
  ExpectError("channel_scale[axis=1]", {Zeros({2, 3}), Zeros({1, 3})},
              "channel_scale: input 1 must have rank 1");
  ExpectError("pool_max[padding=valid,kernel_h=5]", {Zeros({1, 1, 3, 3})},
              "pool_max: window 5 is larger than the input");
  ExpectError("const_iconv[kernel_h=2]", {Zeros({1, 2, 3, 3})},
              "const_iconv: kernel 2x3 must be odd");
}

TEST(ShapeRulesTest, SplitOfAMixedHistoryIsAmbiguous) {
  auto a = RunOp("concat[axis=0]", {Zeros({1, 2}), Zeros({2, 2})});
  auto b = RunOp("concat[axis=0]", {Zeros({2, 2}), Zeros({1, 2})});
  ASSERT_TRUE(a.ok() && b.ok());
  auto sum = RunOp("ewadd", {(*a)[0], (*b)[0]});
  ASSERT_TRUE(sum.ok());
  ExpectError("split[axis=0]", {(*sum)[0]}, "mixes different concat histories");
  // Equal histories survive the elementwise operator.
  auto same = RunOp("ewadd", {(*a)[0], (*a)[0]});
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(RunOp("split[axis=0]", {(*same)[0]}).ok());
}

TEST(ParamsTest, ParseAndFormatRoundTrip) {
  const OpSpec& t = *FindOp("transpose");
  Params p;
  ASSERT_TRUE(ParseParamValue(t.params[0], "[0,2,3,1]", &p).ok());
  EXPECT_EQ(FormatParamValue(t.params[0], p), "[0,2,3,1]");
  EXPECT_FALSE(ParseParamValue(t.params[0], "[0,0]", &p).ok());
  const OpSpec& bn = *FindOp("batchnorm");
  ASSERT_TRUE(ParseParamValue(bn.params[0], "1e-05", &p).ok());
  EXPECT_EQ(FormatParamValue(bn.params[0], p), "1e-05");
  const OpSpec& conv = *FindOp("conv2d");
  ASSERT_TRUE(ParseParamValue(*conv.FindParam("group"), "dw", &p).ok());
  EXPECT_EQ(p[4], kDepthwiseGroup);
  EXPECT_EQ(FormatParamValue(*conv.FindParam("group"), p), "dw");
  Status bad = ParseParamValue(*conv.FindParam("padding"), "full", &p);
  EXPECT_EQ(bad.message(), "parameter 'padding': unknown value 'full' (allowed: same|valid)");
}

}  // namespace
}  // namespace verisub::specs
