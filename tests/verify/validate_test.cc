// Axiom validation: a subset of the real axioms holds on every small shape; wrong axioms in a
// fixture are caught with their smallest breaking case; canonical polynomials are canonical.
#include "verify/validate.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "verify/poly.h"

namespace verisub::verify {
namespace {

ValidateOptions Quiet(std::vector<specs::Axiom> axioms, int max_dim) {
  ValidateOptions o;
  o.axioms = std::move(axioms);
  o.max_dim = max_dim;
  o.threads = 2;
  o.progress = false;
  return o;
}

TEST(ValidateTest, RealAxiomsHoldOnEverySmallShape) {
  auto all = specs::AllAxioms();
  ASSERT_TRUE(all.ok());
  // One or more axioms of every kind of kernel: conv (all parameter assignments), matmul, pools,
  // split trees, batchnorm, constants; of the sub-operators, exp's and the reciprocal's laws,
  // max's, a sum's linearity and an order fact (Z3 on every element; the broadcasts reach extent
  // 4, beyond these shapes). The full set runs in `make validate-axioms`.
  const std::vector<std::string> names = {"conv_relu_fusion",
                                          "conv_concat_in_channels",
                                          "conv_enlarge",
                                          "matmul_assoc",
                                          "matmul_concat_inner",
                                          "split0_concat",
                                          "split1_concat",
                                          "pool_max_concat_channels",
                                          "pool_avg_as_conv",
                                          "batchnorm_concat_batch",
                                          "ewmul_distrib",
                                          "conv_identity",
                                          "transpose_nhwc_roundtrip",
                                          "bias_concat_along_axis",
                                          "concat_interchange",
                                          "exp_ewadd",
                                          "recip_ewmul",
                                          "ewmax_assoc",
                                          "reduce_sum_ewadd",
                                          "ewmax_ewadd"};
  std::vector<specs::Axiom> subset;
  for (const specs::Axiom& ax : *all)
    if (std::find(names.begin(), names.end(), ax.name) != names.end()) subset.push_back(ax);
  ASSERT_EQ(subset.size(), names.size());
  auto report = ValidateAxioms(Quiet(subset, 3));
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->valid, static_cast<int>(names.size()));
  for (const AxiomValidation& v : report->axioms) {
    EXPECT_EQ(v.verdict, AxiomVerdict::kValid) << v.name << ": " << v.detail;
    EXPECT_GT(v.cases_checked, 0) << v.name;
    EXPECT_EQ(v.cases_checked, v.cases_enumerated) << v.name;
    EXPECT_TRUE(v.complete) << v.name;
    EXPECT_EQ(v.assignments_without_shapes, 0) << v.name;
  }
}

TEST(ValidateTest, WrongAxiomsAreCaughtWithTheSmallestCase) {
  const std::string wrong = R"(
relu_distributes (x y) (relu (ewadd x y)) = (ewadd (relu x) (relu y))
conv_linear_with_relu (x:4 y:4 w:4) (conv2d[activation=relu] (ewadd x y) w) = (ewadd (conv2d[activation=relu] x w) (conv2d[activation=relu] y w))
concat_assoc (x y z) (concat (concat x y) z) = (concat x (concat y z))
matmul_comm (x:2 y:2) (matmul[activation=none] x y) = (matmul[activation=none] y x)
conv_concat_any_group (x:4 w:4 v:4) (concat[axis=1] (conv2d x w) (conv2d x v)) = (conv2d x (concat[axis=0] w v))
pool_max_linear (x:4 y:4) (pool_max[activation=none] (ewadd x y)) = (ewadd (pool_max[activation=none] x) (pool_max[activation=none] y))
concat_interchange_one_axis (a b c d) (concat[axis=0] (concat[axis=0] a b) (concat[axis=0] c d)) = (concat[axis=0] (concat[axis=0] a c) (concat[axis=0] b d))
)";
  auto axioms = specs::ParseAxioms("fixture", wrong);
  ASSERT_TRUE(axioms.ok()) << axioms.status().message();
  auto report = ValidateAxioms(Quiet(*axioms, 2));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->wrong, static_cast<int>(axioms->size()));
  for (const AxiomValidation& v : report->axioms) {
    EXPECT_EQ(v.verdict, AxiomVerdict::kWrong) << v.name;
    EXPECT_FALSE(v.detail.empty()) << v.name;
  }
  // The smallest breaking shapes: one element each for relu over a sum.
  EXPECT_NE(report->axioms[0].detail.find("x=[1] y=[1]"), std::string::npos)
      << report->axioms[0].detail;
  // Concat associativity keeps the data but changes the split tree.
  EXPECT_NE(report->axioms[2].detail.find("different types"), std::string::npos)
      << report->axioms[2].detail;
  // The block interchange along one axis (concat_interchange needs two) reorders the blocks.
  EXPECT_NE(report->axioms[6].detail.find("a=[1] b=[1] c=[1] d=[1]"), std::string::npos)
      << report->axioms[6].detail;
}

TEST(ValidateTest, AnInjectedWrongAxiomAmongTrueOnesIsTheOnlyOneReported) {
  const std::string text = R"(
ewadd_comm (x y) (ewadd x y) = (ewadd y x)
conv_relu_is_linear (x:4 w:4 v:4) (conv2d[activation=relu] x (ewadd w v)) = (ewadd (conv2d[activation=relu] x w) (conv2d[activation=relu] x v))
smul_ewadd (x y s:0) (smul (ewadd x y) s) = (ewadd (smul x s) (smul y s))
)";
  auto axioms = specs::ParseAxioms("fixture", text);
  ASSERT_TRUE(axioms.ok()) << axioms.status().message();
  auto report = ValidateAxioms(Quiet(*axioms, 2));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->valid, 2);
  EXPECT_EQ(report->wrong, 1);
  EXPECT_EQ(report->axioms[1].verdict, AxiomVerdict::kWrong);
  EXPECT_NE(report->axioms[1].detail.find("activation=relu"), std::string::npos);
}

TEST(ValidateTest, ProposedConstantAxiomsHold) {
  // tests/verify/constant_axioms.txt: identity constants with any compatible shape reference.
  std::ifstream in("tests/verify/constant_axioms.txt");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  auto axioms = specs::ParseAxioms("constant_axioms.txt", text.str());
  ASSERT_TRUE(axioms.ok()) << axioms.status().message();
  ASSERT_EQ(axioms->size(), 3u);
  auto report = ValidateAxioms(Quiet(*axioms, 3));
  ASSERT_TRUE(report.ok());
  for (const AxiomValidation& v : report->axioms) {
    EXPECT_EQ(v.verdict, AxiomVerdict::kValid) << v.name << ": " << v.detail;
    EXPECT_GT(v.cases_checked, 0) << v.name;
  }
  // Its tempting fourth member is wrong: a depthwise convolution with a kernel built for more
  // channels multiplies the channels.
  auto wrong =
      specs::ParseAxioms("fixture",
                         "pool_avg_as_conv_any_ref (x:4 y:4) (pool_avg[activation=none] x) "
                         "= (conv2d[activation=none,group=dw] x (const_pool y))");
  ASSERT_TRUE(wrong.ok()) << wrong.status().message();
  auto r2 = ValidateAxioms(Quiet(*wrong, 2));
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->axioms[0].verdict, AxiomVerdict::kWrong);
  EXPECT_NE(r2->axioms[0].detail.find("x=[1,1,1,1] y=[1,2,1,1]"), std::string::npos)
      << r2->axioms[0].detail;
}

TEST(ValidateTest, CappedCoverageIsReportedAsPartial) {
  auto all = specs::AllAxioms();
  ASSERT_TRUE(all.ok());
  std::vector<specs::Axiom> one;
  for (const specs::Axiom& ax : *all)
    if (ax.name == "ewadd_concat") one.push_back(ax);
  ASSERT_EQ(one.size(), 1u);
  ValidateOptions opt = Quiet(one, 2);
  opt.max_cases_per_assignment = 1;
  auto capped = ValidateAxioms(opt);
  ASSERT_TRUE(capped.ok());
  const AxiomValidation& v = capped->axioms[0];
  EXPECT_EQ(v.verdict, AxiomVerdict::kValid);
  EXPECT_FALSE(v.complete);
  EXPECT_EQ(v.cases_checked, v.assignments);  // one case per parameter assignment
  EXPECT_GT(v.cases_enumerated, v.cases_checked);
}

// Shapes are enumerated per tensor (max_dim^rank of them): a bound past kMaxValidateDim is
// refused before any enumeration (issue 17: max_dim 1000 aborted with bad_alloc).
TEST(ValidateTest, AnAbsurdDimensionBoundIsRefused) {
  for (int max_dim : {0, kMaxValidateDim + 1, 1000}) {
    auto report = ValidateAxioms(Quiet({}, max_dim));
    ASSERT_FALSE(report.ok()) << max_dim;
    EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(report.status().message().find("max_dim"), std::string::npos);
  }
}

// The library checks thread counts itself (issue 17: 100,000 threads crashed in TBB's teardown).
TEST(ValidateTest, AnAbsurdThreadCountIsRefused) {
  ValidateOptions o = Quiet({}, 2);
  o.threads = 100000;
  auto report = ValidateAxioms(o);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("threads"), std::string::npos);
}

TEST(PolyStoreTest, EqualPolynomialsHaveEqualIds) {
  PolyStore s;
  PolySemantics p{&s};
  auto a = s.Input(0, 0), b = s.Input(0, 1), c = s.Input(1, 0);
  EXPECT_EQ(p.Mul(p.Add(a, b), c), p.Add(p.Mul(c, a), p.Mul(b, c)));
  EXPECT_EQ(p.Add(a, p.Neg(a)), p.Zero());
  EXPECT_EQ(p.Mul(p.DivInt(a, 3), p.FromInt(3)), a);
  EXPECT_EQ(p.Max(a, b), p.Max(b, a));
  EXPECT_NE(p.Mul(a, b), p.Add(a, b));
  EXPECT_NE(
      p.Activate(specs::Activation::kRelu, p.Add(a, b)),
      p.Add(p.Activate(specs::Activation::kRelu, a), p.Activate(specs::Activation::kRelu, b)));
  EXPECT_NE(p.Activate(specs::Activation::kRelu, a), p.Activate(specs::Activation::kTanh, a));
  EXPECT_EQ(s.ToString(p.Add(p.FromInt(2), p.Mul(a, a))), "2 + t0_0^2");
}

// What the sub-operator axioms need decided by identity: max as a semilattice, exp's and the
// reciprocal's laws; and nothing that is false in the reals.
TEST(PolyStoreTest, MaxExpAndReciprocalHaveCanonicalForms) {
  using specs::Activation;
  PolyStore s;
  PolySemantics p{&s};
  auto a = s.Input(0, 0), b = s.Input(0, 1), c = s.Input(1, 0);
  EXPECT_EQ(p.Max(a, p.Max(b, c)), p.Max(p.Max(a, b), c));
  EXPECT_EQ(p.Max(a, a), a);
  EXPECT_EQ(p.Max(p.Max(a, b), a), p.Max(a, b));
  EXPECT_NE(p.Max(a, b), a);
  EXPECT_NE(p.Max(p.Add(a, c), p.Add(b, c)), p.Add(p.Max(a, b), c));  // an order fact: Z3's
  EXPECT_EQ(s.ToString(p.Max(c, p.Max(b, a))), "max(t0_0, t0_1, t1_0)");

  auto exp = [&](PolyStore::Id x) { return p.Activate(Activation::kExp, x); };
  EXPECT_EQ(exp(p.Add(a, b)), p.Mul(exp(a), exp(b)));
  EXPECT_EQ(exp(p.Add(a, a)), p.Mul(exp(a), exp(a)));
  EXPECT_EQ(exp(p.Neg(a)), p.Reciprocal(exp(a)));
  EXPECT_EQ(exp(p.Zero()), p.One());
  EXPECT_NE(p.Mul(exp(a), exp(a)), exp(a));
  EXPECT_NE(exp(p.Mul(a, b)), p.Mul(exp(a), exp(b)));
  EXPECT_NE(exp(p.DivInt(a, 2)), exp(a));

  auto recip = [&](PolyStore::Id x) { return p.Activate(Activation::kRecip, x); };
  EXPECT_EQ(recip(p.Mul(a, b)), p.Mul(recip(a), recip(b)));
  EXPECT_EQ(recip(recip(a)), a);
  EXPECT_EQ(recip(p.Neg(a)), p.Neg(recip(a)));
  EXPECT_EQ(recip(p.FromInt(4)), p.DivInt(p.One(), 4));
  EXPECT_EQ(recip(a), p.Reciprocal(a));  // the operator and softmax's normalisation agree
  EXPECT_NE(recip(p.Add(a, b)), p.Add(recip(a), recip(b)));
  EXPECT_NE(recip(a), a);
}

}  // namespace
}  // namespace verisub::verify
