// The modular-integer semantics: exact identities hold bit for bit; activations are distinct.
#include "specs/semantics.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/specs/test_util.h"

namespace verisub::specs {
namespace {

using Mod = ModIntSemantics;
using MT = Tensor<uint32_t>;

MT Eval(OpKind kind, const Params& p, std::vector<MT> in, int k = 0) {
  const MT* ptrs[kMaxOpInputs];
  for (size_t i = 0; i < in.size(); ++i) ptrs[i] = &in[i];
  MT out[kMaxOpOutputs];
  Status st = Evaluate(Mod(), kind, p, ptrs, out);
  EXPECT_TRUE(st.ok()) << st.message();
  return out[k];
}

MT Random(Shape s, std::mt19937_64& rng) {
  return testing::RandomTensor(Mod(), TensorType(s), rng);
}

TEST(ModIntTest, FieldArithmetic) {
  Mod m;
  EXPECT_EQ(m.Add(Mod::kPrime - 1, 1), 0u);
  EXPECT_EQ(m.Mul(m.Inverse(7), 7), 1u);
  EXPECT_EQ(m.Mul(m.DivInt(m.FromInt(5), 9), 9), 5u);
  EXPECT_EQ(m.FromInt(-1), Mod::kPrime - 1);
  EXPECT_EQ(m.Add(m.Neg(12345), 12345), 0u);
}

TEST(ModIntTest, MatmulAssociativityAndDistributivityAreExact) {
  std::mt19937_64 rng(3);
  Params none;
  MT a = Random({3, 4}, rng), b = Random({4, 5}, rng), c = Random({5, 2}, rng),
     d = Random({4, 5}, rng);
  MT ab_c = Eval(OpKind::kMatmul, none, {Eval(OpKind::kMatmul, none, {a, b}), c});
  MT a_bc = Eval(OpKind::kMatmul, none, {a, Eval(OpKind::kMatmul, none, {b, c})});
  EXPECT_EQ(ab_c.data, a_bc.data);
  MT lhs = Eval(OpKind::kMatmul, none, {a, Eval(OpKind::kEwAdd, none, {b, d})});
  MT rhs = Eval(OpKind::kEwAdd, none,
                {Eval(OpKind::kMatmul, none, {a, b}), Eval(OpKind::kMatmul, none, {a, d})});
  EXPECT_EQ(lhs.data, rhs.data);
}

TEST(ModIntTest, AveragePoolEqualsConvWithPoolKernel) {
  std::mt19937_64 rng(4);
  MT x = Random({2, 3, 5, 4}, rng);
  const OpSpec& pool = GetOp(OpKind::kPoolAvg);
  Params pp = pool.DefaultParams();  // 3x3, stride 1, same, no activation
  const OpSpec& cpool = GetOp(OpKind::kConstPool);
  MT kernel = Eval(OpKind::kConstPool, cpool.DefaultParams(), {x});
  Params cp = GetOp(OpKind::kConv2d).DefaultParams();
  cp[ops::kConvGroup] = kDepthwiseGroup;
  MT avg = Eval(OpKind::kPoolAvg, pp, {x});
  MT conv = Eval(OpKind::kConv2d, cp, {x, kernel});
  EXPECT_EQ(avg.data, conv.data);
  // A window sum would not be an average: dividing by 9 matters.
  MT sum_kernel = kernel;
  for (auto& v : sum_kernel.data) v = 1;
  EXPECT_NE(Eval(OpKind::kConv2d, cp, {x, sum_kernel}).data, avg.data);
}

TEST(ModIntTest, ActivationsAreDistinctAndNonLinear) {
  Mod m;
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 100; ++trial) {
    uint32_t x = m.FromInt(static_cast<int64_t>(rng() >> 2)),
             y = m.FromInt(static_cast<int64_t>(rng() >> 2));
    std::set<uint32_t> values;
    for (int a = 0; a < 4; ++a) values.insert(m.Activate(static_cast<Activation>(a), x));
    EXPECT_EQ(values.size(), 4u);
    for (int a = 1; a < 4; ++a) {
      auto act = static_cast<Activation>(a);
      EXPECT_NE(m.Activate(act, m.Add(x, y)), m.Add(m.Activate(act, x), m.Activate(act, y)));
      EXPECT_NE(m.Activate(act, m.Activate(act, x)), m.Activate(act, x));  // not idempotent
    }
  }
}

}  // namespace
}  // namespace verisub::specs
