// The shipped sub-operator rules (data/rules/subop.pb) applied to lowered kernels: the issue's
// examples fire where their parameters and ranks hold and nowhere else, a rewrite never makes a
// kernel larger, and every rewritten kernel computes what it computed before (the lowerings of
// every spec operator on random shapes).
#include "fusion/subop_rules.h"

#include <gtest/gtest.h>

#include <random>

#include "fusion/subop_eval.h"
#include "ruledb/database.h"
#include "runtime/graph_text.h"
#include "tests/fusion/fusion_test_util.h"

namespace verisub::fusion {
namespace {

const SubopRules& Shipped() {
  static const SubopRules* rules = [] {
    auto db = ruledb::LoadRuleDatabase("data/rules/subop.pb");
    EXPECT_TRUE(db.ok()) << db.status().message();
    return new SubopRules(db.ok() ? db->rules : std::vector<ruledb::Rule>{});
  }();
  return *rules;
}

std::vector<std::vector<double>> RandomInputs(const SubGraph& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  std::vector<std::vector<double>> in;
  for (const auto& d : g.input_dims) {
    std::vector<double> x(static_cast<size_t>(NumElements(d)));
    for (double& e : x) e = u(rng);
    in.push_back(std::move(x));
  }
  return in;
}

// Applies the shipped rules; the result checks, is no larger, and computes the same values.
SubGraph ExpectSameValues(const SubGraph& g, SubopRewriteStats* stats, uint64_t seed = 1) {
  SubGraph out = Shipped().Apply(g, stats);
  EXPECT_TRUE(CheckSubGraph(out).ok()) << SubGraphText(out);
  EXPECT_LE(out.nodes.size(), g.nodes.size());
  const auto inputs = RandomInputs(g, seed);
  auto before = EvaluateSubGraph(g, inputs);
  auto after = EvaluateSubGraph(out, inputs);
  EXPECT_TRUE(before.ok() && after.ok());
  if (before.ok() && after.ok()) {
    EXPECT_LT(testing::MaxRelDiff(*after, *before), 1e-9) << SubGraphText(g) << "\n=>\n"
                                                          << SubGraphText(out);
  }
  return out;
}

int Count(const SubGraph& g, SubOpKind kind) {
  int n = 0;
  for (const SubNode& s : g.nodes) n += s.kind == kind;
  return n;
}

TEST(SubopRulesTest, TheShippedDatabaseHasRulesThatShrinkKernels) {
  EXPECT_GT(Shipped().size(), 50);
  RecordProperty("rules", Shipped().size());
}

// exp(a) exp(b) = exp(a + b): three sub-operators become two. Twin: where exp(a) is read again,
// the rewrite would free two and add two, and is not made.
TEST(SubopRulesTest, ExponentialsMultipliedBecomeOneExponential) {
  SubGraph g;
  int a = g.Input({3, 5}), b = g.Input({3, 5});
  int ea = g.Unary(UnaryFn::kExp, a);
  g.output = g.Binary(BinaryFn::kMul, ea, g.Unary(UnaryFn::kExp, b));
  SubopRewriteStats st;
  SubGraph out = ExpectSameValues(g, &st);
  EXPECT_EQ(st.rewrites, 1);
  EXPECT_EQ(st.nodes_before, 5);
  EXPECT_EQ(st.nodes_after, 4);
  EXPECT_EQ(out.nodes[out.output].kind, SubOpKind::kUnary);
  EXPECT_EQ(out.nodes[out.output].unary, UnaryFn::kExp);

  SubGraph twin;
  a = twin.Input({3, 5});
  b = twin.Input({3, 5});
  ea = twin.Unary(UnaryFn::kExp, a);
  int prod = twin.Binary(BinaryFn::kMul, ea, twin.Unary(UnaryFn::kExp, b));
  twin.output = twin.Binary(BinaryFn::kAdd, prod, ea);
  SubopRewriteStats none;
  SubGraph kept = ExpectSameValues(twin, &none);
  EXPECT_EQ(none.rewrites, 0) << SubGraphText(kept);
  EXPECT_EQ(kept.nodes.size(), twin.nodes.size());
}

// Two transposes of a 4-D tensor compose into one (NCHW -> NHWC twice is NCHW -> NWCH... read as
// the one permutation [0,3,1,2]); a double reciprocal is its operand.
TEST(SubopRulesTest, ReindexesComposeAndReciprocalsCancel) {
  SubGraph g;
  const int x = g.Input({2, 3, 4, 5});
  auto transpose = [&g](int v) {
    const std::vector<int> perm = {0, 2, 3, 1};
    const std::vector<int64_t>& from = g.dims(v);
    std::vector<int64_t> to(4);
    std::vector<AxisMap> map(4);
    for (auto& m : map) m.coef.assign(4, 0);
    for (int i = 0; i < 4; ++i) {
      to[i] = from[perm[i]];
      map[perm[i]].coef[i] = 1;
    }
    const std::vector<int64_t> dims = to;
    return g.Reindex(v, dims, map);
  };
  g.output = g.Unary(UnaryFn::kExp, transpose(transpose(x)));
  SubopRewriteStats st;
  SubGraph out = ExpectSameValues(g, &st);
  EXPECT_EQ(st.rewrites, 1);
  EXPECT_EQ(Count(out, SubOpKind::kReindex), 1) << SubGraphText(out);

  SubGraph r;
  const int y = r.Input({4, 6});
  r.output = r.Unary(UnaryFn::kNeg, r.Unary(UnaryFn::kRecip, r.Unary(UnaryFn::kRecip, y)));
  SubopRewriteStats st2;
  SubGraph out2 = ExpectSameValues(r, &st2);
  EXPECT_EQ(st2.rewrites, 1);
  EXPECT_EQ(Count(out2, SubOpKind::kUnary), 1) << SubGraphText(out2);
}

// A rule applies only where its parameters are the node's: the row maximum of a column broadcast
// four times is the column (the rule's extent), not where it is broadcast seven times (no rule
// proved for that extent); and only at the ranks its proof needs: max over a row of x plus a
// broadcast column is max(x) plus the column on matrices (where ?a:2 ?b:2), not on 3-D tensors.
TEST(SubopRulesTest, RulesFireOnlyAtTheirParametersAndRanks) {
  auto max_of_broadcast_sum = [](std::vector<int64_t> x_dims, int64_t extent) {
    SubGraph g;
    std::vector<int64_t> col = x_dims;
    col[1] = 1;
    x_dims[1] = extent;
    const int x = g.Input(x_dims), c = g.Input(col);
    const int b = g.BroadcastTo(c, x_dims);
    g.output = g.Reduce(ReduceFn::kMax, g.Binary(BinaryFn::kAdd, x, b), {1});
    return g;
  };
  SubopRewriteStats matrix;
  SubGraph m = ExpectSameValues(max_of_broadcast_sum({3, 4}, 4), &matrix);
  EXPECT_EQ(matrix.rewrites, 1);
  EXPECT_EQ(Count(m, SubOpKind::kReindex), 0) << SubGraphText(m);  // the broadcast is gone
  SubopRewriteStats seven, cube;
  ExpectSameValues(max_of_broadcast_sum({3, 7}, 7), &seven);
  ExpectSameValues(max_of_broadcast_sum({3, 4, 2}, 4), &cube);
  EXPECT_EQ(seven.rewrites, 0);
  EXPECT_EQ(cube.rewrites, 0);
}

// Every lowering of the spec operators' random cases, rewritten: the same values, never larger.
TEST(SubopRulesTest, RewrittenLoweringsComputeTheSame) {
  int rewritten = 0, cases = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed)
    for (const std::string& text : testing::SpecOperatorCases(seed)) {
      SCOPED_TRACE(text);
      auto g = runtime::ParseGraphText(text);
      ASSERT_TRUE(g.ok()) << g.status().message();
      auto lowered = testing::LowerWhole(*g);
      ASSERT_TRUE(lowered.ok()) << lowered.status().message();
      SubopRewriteStats st;
      ExpectSameValues(lowered->graph, &st, seed);
      rewritten += st.rewrites > 0;
      ++cases;
    }
  EXPECT_GT(cases, 50);
  RecordProperty("rewritten", rewritten);
}

}  // namespace
}  // namespace verisub::fusion
