// softmax, layer_norm and reduce_mean: kernels in double against hand-computed values, shape-rule
// errors, and their modular-integer maps (distinct from the other operators', exact where the
// real identity is algebraic).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "specs/evaluate.h"
#include "specs/term.h"
#include "tests/specs/test_util.h"

namespace verisub::specs {
namespace {

using testing::ExpectData;
using testing::MakeTensor;
using testing::Out;
using testing::RunOp;

void ExpectError(const std::string& op, const std::vector<Tensor<double>>& in,
                 const std::string& message) {
  auto r = RunOp(op, in);
  ASSERT_FALSE(r.ok()) << op << " should fail";
  EXPECT_NE(r.status().message().find(message), std::string::npos)
      << op << " -> " << r.status().message();
}

Tensor<double> Zeros(Shape s) { return MakeTensor(s, std::vector<double>(s.NumElements(), 0.0)); }

TEST(NormKernelsTest, SoftmaxAlongEachAxis) {
  Tensor<double> x = MakeTensor({2, 3}, {1, 2, 3, 0, 0, 1000});
  const double e = std::exp(1.0), z = 1 + e + e * e;
  // The last row's 1000 would overflow exp without the max subtraction.
  ExpectData(Out("softmax[axis=1]", {x}), {2, 3}, {1 / z, e / z, e * e / z, 0, 0, 1});
  const double a = 1 / (1 + e), b = e / (1 + e);
  ExpectData(Out("softmax[axis=0]", {MakeTensor({2, 2}, {1, 5, 2, 5})}), {2, 2}, {a, 0.5, b, 0.5});
}

TEST(NormKernelsTest, LayerNormOverTrailingAxes) {
  // Row [1, 3]: mean 2, variance 1; row [2, 2]: variance 0, output = bias.
  Tensor<double> x = MakeTensor({2, 2}, {1, 3, 2, 2});
  const double k = 1 / std::sqrt(1 + 1e-5);
  ExpectData(Out("layer_norm[axis=1]", {x, MakeTensor({2}, {2, 1}), MakeTensor({2}, {0, 10})}),
             {2, 2}, {-2 * k, 10 + k, 0, 10});
  // Over both axes: mean 2, variance 0.5.
  const double k2 = 1 / std::sqrt(0.5 + 1e-5);
  ExpectData(Out("layer_norm[axis=0]", {x, MakeTensor({2, 2}, {1, 1, 1, 1}), Zeros({2, 2})}),
             {2, 2}, {-k2, k2, 0, 0});
}

TEST(NormKernelsTest, ReduceMeanOverAxisMasks) {
  std::vector<double> d(24);
  for (int i = 0; i < 24; ++i) d[i] = i;
  Tensor<double> x = MakeTensor({2, 3, 2, 2}, d);
  ExpectData(Out("reduce_mean[axes=12,keepdims=0]", {x}), {2, 3},
             {1.5, 5.5, 9.5, 13.5, 17.5, 21.5});
  ExpectData(Out("reduce_mean[axes=2,keepdims=1]", {x}), {2, 1, 2, 2},
             {4, 5, 6, 7, 16, 17, 18, 19});
  ExpectData(Out("reduce_mean[axes=15,keepdims=0]", {x}), {}, {11.5});
}

TEST(NormKernelsTest, ShapeRuleErrors) {
  ExpectError("softmax[axis=2]", {Zeros({2, 3})},
              "softmax: parameter 'axis'=2 is out of range for rank 2");
  ExpectError("layer_norm[axis=1]", {Zeros({2, 3}), Zeros({2}), Zeros({3})},
              "layer_norm: input 1 [2] must have shape [3], the axes of input 0 from 'axis'=1");
  ExpectError("layer_norm[axis=1]", {Zeros({2, 3}), Zeros({3}), Zeros({1, 3})},
              "input 2 [1,3] must have shape [3]");
  ExpectError("layer_norm[axis=1,epsilon=0]", {Zeros({2, 3}), Zeros({3}), Zeros({3})},
              "parameter 'epsilon' must be positive");
  ExpectError("reduce_mean[axes=4]", {Zeros({2, 3})},
              "reduce_mean: parameter 'axes'=4 (a bit mask of axes) must name one or more axes of "
              "rank 2");
  ExpectError("reduce_mean[axes=1,keepdims=2]", {Zeros({2, 3})},
              "parameter 'keepdims'=2 must be 0 or 1");
}

// Concat histories: lost on the axes the operator mixes, kept on the others.
TEST(NormKernelsTest, SplitTreesSurviveOnlyUnmixedAxes) {
  auto cat = RunOp("concat[axis=0]", {Zeros({1, 4}), Zeros({2, 4})});
  ASSERT_TRUE(cat.ok());
  const Tensor<double>& c = (*cat)[0];
  for (const char* op : {"softmax[axis=1]", "reduce_mean[axes=2,keepdims=1]"}) {
    auto r = RunOp(op, {c});
    ASSERT_TRUE(r.ok()) << op;
    EXPECT_TRUE(RunOp("split[axis=0]", {(*r)[0]}).ok()) << op;
  }
  auto sm = RunOp("softmax[axis=0]", {c});
  ASSERT_TRUE(sm.ok());
  EXPECT_FALSE(RunOp("split[axis=0]", {(*sm)[0]}).ok());
  auto ln = RunOp("layer_norm[axis=0]", {c, Zeros({3, 4}), Zeros({3, 4})});
  ASSERT_TRUE(ln.ok());
  EXPECT_FALSE(RunOp("split[axis=0]", {(*ln)[0]}).ok());
}

using Mod = ModIntSemantics;
using MT = Tensor<uint32_t>;

MT Eval(const std::string& op_with_params, std::vector<MT> in) {
  auto ast = ParseTermString("(" + op_with_params + ")");
  EXPECT_TRUE(ast.ok());
  const OpSpec* op = FindOp(ast->head);
  EXPECT_NE(op, nullptr);
  Params p = op->DefaultParams();
  for (const auto& [k, v] : ast->params)
    EXPECT_TRUE(ParseParamValue(*op->FindParam(k), v, &p).ok());
  const MT* ptrs[kMaxOpInputs];
  for (size_t i = 0; i < in.size(); ++i) ptrs[i] = &in[i];
  MT out[kMaxOpOutputs];
  Status st = Evaluate(Mod(), op->kind, p, ptrs, out);
  EXPECT_TRUE(st.ok()) << st.message();
  return out[0];
}

// reduce_mean is linear in the modular semantics (the mean is exact); softmax's normalisation is
// its own non-linear map: the modular softmax is neither exp nor linear.
TEST(NormKernelsTest, ModularMaps) {
  std::mt19937_64 rng(3);
  MT x = testing::RandomTensor(Mod(), TensorType(Shape{2, 3}), rng);
  MT y = testing::RandomTensor(Mod(), TensorType(Shape{2, 3}), rng);
  MT sum = Eval("ewadd", {x, y});
  MT lhs = Eval("reduce_mean[axes=2,keepdims=1]", {sum});
  MT rhs = Eval("ewadd", {Eval("reduce_mean[axes=2,keepdims=1]", {x}),
                          Eval("reduce_mean[axes=2,keepdims=1]", {y})});
  EXPECT_EQ(lhs.data, rhs.data);
  EXPECT_NE(Eval("softmax[axis=1]", {x}).data, Eval("exp", {x}).data);
  EXPECT_NE(Eval("softmax[axis=1]", {sum}).data,
            Eval("ewadd", {Eval("softmax[axis=1]", {x}), Eval("softmax[axis=1]", {y})}).data);
  const Mod m;
  for (uint32_t v : {0u, 1u, 2u, 12345u}) {
    EXPECT_NE(m.Reciprocal(v), m.BnScale(v, 1e-5));
    EXPECT_NE(m.Reciprocal(v), m.Activate(Activation::kExp, v));
  }
}

}  // namespace
}  // namespace verisub::specs
