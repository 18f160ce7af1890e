// The layout DP against brute force on random problems (exact with the inexact prunings off,
// never below the optimum with them on), its report counts, the beam, and its errors.
#include "rewriter/layout_dp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "rewriter/layout_order.h"
#include "tests/rewriter/layout_test_problems.h"

namespace verisub::rewriter {
namespace {

using specs::Layout;
using testing::BruteForceOptimum;
using testing::RandomLayoutProblem;

constexpr int kRandomProblems = 400;

LayoutDpOptions ExactOptions() {
  LayoutDpOptions o;
  o.prune_dominated = false;
  o.threshold = 0;
  o.pareto = false;
  o.max_states = 0;
  return o;
}

bool Near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

// Every node's choice is one of its own, and the reported cost is the assignment's.
void ExpectValid(const LayoutProblem& p, const LayoutSolution& s) {
  ASSERT_EQ(s.choice.size(), p.nodes.size());
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    EXPECT_GE(s.choice[i], 0);
    EXPECT_LT(s.choice[i], static_cast<int>(p.nodes[i].choices.size()));
  }
  EXPECT_TRUE(Near(s.cost_us, EvaluateChoices(p, s.choice)));
}

TEST(LayoutDpTest, RandomProblemsAreValid) {
  for (int seed = 0; seed < kRandomProblems; ++seed) {
    LayoutProblem p = RandomLayoutProblem(seed);
    ASSERT_TRUE(CheckLayoutProblem(p).ok()) << seed << ": " << CheckLayoutProblem(p).message();
  }
}

TEST(LayoutDpTest, ExactWithoutPruningEqualsBruteForce) {
  int multi_output = 0, opaque_like = 0, joins = 0;
  for (int seed = 0; seed < kRandomProblems; ++seed) {
    LayoutProblem p = RandomLayoutProblem(seed);
    for (const auto& n : p.nodes) {
      multi_output += n.outputs.size() > 1;
      opaque_like += n.choices.size() == 1 && PlainChoice(n) == 0;
      joins += n.inputs.size() > 1;
    }
    const double exact = BruteForceOptimum(p);
    for (bool narrow : {false, true}) {
      LayoutDpOptions o = ExactOptions();
      o.narrow_order = narrow;
      LayoutDpReport r;
      auto s = SolveLayoutProblem(p, o, &r);
      ASSERT_TRUE(s.ok()) << s.status().message();
      ExpectValid(p, *s);
      EXPECT_TRUE(Near(s->cost_us, exact)) << "seed " << seed << " narrow " << narrow << ": dp "
                                           << s->cost_us << " brute force " << exact;
      EXPECT_TRUE(r.exact);
      EXPECT_EQ(r.pruned_dominated + r.pruned_threshold + r.pruned_pareto + r.pruned_beam, 0);
      EXPECT_LE(r.lower_bound_us, s->cost_us * (1 + 1e-12));
    }
    // The dominated rule is exact too.
    LayoutDpOptions o = ExactOptions();
    o.prune_dominated = true;
    LayoutDpReport r;
    auto s = SolveLayoutProblem(p, o, &r);
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(Near(s->cost_us, exact)) << "seed " << seed << " with the dominated rule";
    EXPECT_TRUE(r.exact);
  }
  // The generator does produce the structures the property is about.
  EXPECT_GT(multi_output, 50);
  EXPECT_GT(opaque_like, 50);
  EXPECT_GT(joins, 200);
}

TEST(LayoutDpTest, PruningNeverBeatsTheOptimumAndReportsItsGap) {
  for (double threshold : {0.0, 1.2}) {
    double worst_gap = 0, gap_sum = 0;
    int inexact_reports = 0, off_optimum = 0;
    int64_t pruned = 0;
    for (int seed = 0; seed < kRandomProblems; ++seed) {
      LayoutProblem p = RandomLayoutProblem(seed);
      const double exact = BruteForceOptimum(p);
      LayoutDpOptions o;  // defaults: dominated and pareto on
      o.threshold = threshold;
      LayoutDpReport r;
      auto s = SolveLayoutProblem(p, o, &r);
      ASSERT_TRUE(s.ok());
      ExpectValid(p, *s);
      EXPECT_GE(s->cost_us, exact * (1 - 1e-12)) << "seed " << seed;
      const double gap = s->cost_us / exact - 1;
      if (r.exact) {
        EXPECT_TRUE(Near(s->cost_us, exact)) << "seed " << seed << " claims exact";
      }
      inexact_reports += !r.exact;
      off_optimum += gap > 1e-9;
      worst_gap = std::max(worst_gap, gap);
      gap_sum += gap;
      pruned += r.pruned_threshold + r.pruned_pareto + r.pruned_dominated;
      if (threshold == 0) {
        EXPECT_EQ(r.pruned_threshold, 0);
      }
    }
    EXPECT_GT(pruned, 0);
    EXPECT_GE(inexact_reports, off_optimum);  // never off the optimum while claiming exactness
    std::printf(
        "pruned DP (threshold %g) on %d random problems: %d not proven exact, %d off the "
        "optimum, mean gap %.4f%%, worst %.3f%%\n",
        threshold, kRandomProblems, inexact_reports, off_optimum, 100 * gap_sum / kRandomProblems,
        100 * worst_gap);
  }
}

TEST(LayoutDpTest, BeamKeepsTheBudgetAndSaysSo) {
  int cut_somewhere = 0;
  for (int seed = 0; seed < kRandomProblems; ++seed) {
    LayoutProblem p = RandomLayoutProblem(seed);
    const double exact = BruteForceOptimum(p);
    LayoutDpOptions o = ExactOptions();
    o.max_states = 2;
    LayoutDpReport r;
    auto s = SolveLayoutProblem(p, o, &r);
    ASSERT_TRUE(s.ok());
    ExpectValid(p, *s);
    EXPECT_LE(r.peak_states, 2);
    EXPECT_GE(s->cost_us, exact * (1 - 1e-12));
    EXPECT_EQ(r.beam_cuts > 0, r.pruned_beam > 0);
    if (r.pruned_beam > 0) {
      EXPECT_FALSE(r.exact);
      ++cut_somewhere;
    }
  }
  EXPECT_GT(cut_somewhere, kRandomProblems / 4);
}

// in -> a -> b -> out, where node a writes plain (cost 1) or nchw8c (cost 10); conversions
// cost 1.
LayoutProblem TwoNodeChain() {
  LayoutProblem p;
  for (const char* name : {"in", "x", "out"}) {
    LayoutProblemValue v;
    v.name = name;
    v.candidates = {Layout::kPlain, Layout::kNCHW8c};
    for (auto& row : v.conversion_us) row.fill(kInfiniteCost);
    for (int a : {0, 2})
      for (int b : {0, 2}) v.conversion_us[a][b] = a == b ? 0 : 1;
    p.values.push_back(v);
  }
  p.values[0].graph_input = true;
  p.values[2].graph_output = true;
  LayoutProblemNode a{"a", -1, {0}, {1}, {}};
  a.choices = {{{Layout::kPlain}, {Layout::kPlain}, 1}, {{Layout::kPlain}, {Layout::kNCHW8c}, 10}};
  LayoutProblemNode b{"b", -1, {1}, {2}, {}};
  b.choices = {{{Layout::kPlain}, {Layout::kPlain}, 5}, {{Layout::kNCHW8c}, {Layout::kNCHW8c}, 2}};
  p.nodes = {a, b};
  return p;
}

TEST(LayoutDpTest, ReportCountsEachRule) {
  LayoutProblem p = TwoNodeChain();
  // Optimum: a plain (1), convert x to 8c (1), b blocked (2), out back to plain (1) = 5.
  EXPECT_DOUBLE_EQ(BruteForceOptimum(p), 5);
  {
    LayoutDpReport r;
    auto s = SolveLayoutProblem(p, ExactOptions(), &r);
    ASSERT_TRUE(s.ok());
    EXPECT_DOUBLE_EQ(s->cost_us, 5);
    EXPECT_EQ(r.nodes, 2);
    EXPECT_EQ(r.peak_states, 2);  // x plain / x nchw8c
    EXPECT_EQ(r.max_cut_width, 1);
    EXPECT_EQ(r.transitions, 1 * 2 + 2 * 2);
    EXPECT_DOUBLE_EQ(r.cost_plain_us, 6);
    EXPECT_DOUBLE_EQ(r.cost_us, 5);
    EXPECT_TRUE(r.exact);
  }
  {  // Threshold 2 drops "x nchw8c" (10 > 2 x 1) after node a.
    LayoutDpOptions o = ExactOptions();
    o.threshold = 2;
    LayoutDpReport r;
    ASSERT_TRUE(SolveLayoutProblem(p, o, &r).ok());
    EXPECT_EQ(r.pruned_threshold, 1);
    EXPECT_FALSE(r.exact);
  }
  {  // Pareto: "x plain" (1) plus one conversion (1) reaches "x nchw8c" (10); after b,
     // "out nchw8c" (4) plus one conversion reaches "out plain" (6).
    LayoutDpOptions o = ExactOptions();
    o.pareto = true;
    LayoutDpReport r;
    auto s = SolveLayoutProblem(p, o, &r);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(r.pruned_pareto, 2);
    EXPECT_EQ(r.pruned_threshold, 0);
    EXPECT_DOUBLE_EQ(s->cost_us, 5);
  }
  {  // Beam of one state: each cut keeps its cheapest.
    LayoutDpOptions o = ExactOptions();
    o.max_states = 1;
    LayoutDpReport r;
    ASSERT_TRUE(SolveLayoutProblem(p, o, &r).ok());
    EXPECT_EQ(r.pruned_beam, 2);
    EXPECT_EQ(r.beam_cuts, 2);
    EXPECT_EQ(r.peak_states, 1);
    EXPECT_FALSE(r.exact);
  }
}

TEST(LayoutDpTest, ConvertedCopyIsSharedByReaders) {
  // x (plain) is read in nchw8c by two nodes: one conversion, not two.
  LayoutProblem p = TwoNodeChain();
  p.nodes[0].choices.pop_back();  // a writes plain only
  LayoutProblemNode c{"c", -1, {1}, {}, {}};
  c.choices = {{{Layout::kNCHW8c}, {}, 2}};
  p.nodes.push_back(c);
  // a 1 + b 2 (blocked) + c 2 + one conversion of x + out back to plain = 7.
  auto s = SolveLayoutProblem(p, ExactOptions(), nullptr);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->cost_us, 7);
  EXPECT_DOUBLE_EQ(BruteForceOptimum(p), 7);
}

TEST(LayoutDpTest, RejectsMalformedProblems) {
  {
    LayoutProblem p = TwoNodeChain();
    p.nodes[1].choices.clear();
    auto s = SolveLayoutProblem(p, {}, nullptr);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find("'b' has no admissible layouts"), std::string::npos);
  }
  {
    LayoutProblem p = TwoNodeChain();
    std::swap(p.nodes[0], p.nodes[1]);
    auto s = SolveLayoutProblem(p, {}, nullptr);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find("before it is produced"), std::string::npos);
  }
  {
    LayoutProblem p = TwoNodeChain();
    p.nodes[0].choices[0].outputs[0] = Layout::kNHWC;  // not a candidate of x
    EXPECT_FALSE(SolveLayoutProblem(p, {}, nullptr).ok());
  }
  {
    LayoutDpOptions o;
    o.threshold = 0.5;
    EXPECT_FALSE(SolveLayoutProblem(TwoNodeChain(), o, nullptr).ok());
  }
}

TEST(LayoutOrderTest, GreedyOrderIsTopologicalAndCutsAreRight) {
  for (int seed = 0; seed < kRandomProblems; ++seed) {
    LayoutProblem p = RandomLayoutProblem(seed);
    std::vector<int> greedy = GreedyNarrowOrder(p);
    EXPECT_TRUE(IsTopologicalOrder(p, greedy)) << seed;
    EXPECT_LE(MaxCutWidth(p, NarrowestOrder(p)), MaxCutWidth(p, GivenOrder(p)));
  }
  LayoutProblem p = TwoNodeChain();
  auto cuts = CutValues(p, GivenOrder(p));
  ASSERT_EQ(cuts.size(), 3u);
  EXPECT_EQ(cuts[0], std::vector<int>({0}));
  EXPECT_EQ(cuts[1], std::vector<int>({1}));
  EXPECT_EQ(cuts[2], std::vector<int>({2}));
  EXPECT_FALSE(IsTopologicalOrder(p, {1, 0}));
  EXPECT_FALSE(IsTopologicalOrder(p, {0, 0}));
}

TEST(LayoutOrderTest, GreedyFinishesBranchesBeforeOpeningNew) {
  // Four branches off one input, each a chain of three nodes ending in a graph output. Given
  // order: breadth first (all first steps, then all second steps, ...): width 4. Greedy
  // follows each chain to its end: width 2 (the input and one chain value).
  LayoutProblem p;
  auto value = [&](const std::string& name) {
    LayoutProblemValue v;
    v.name = name;
    p.values.push_back(v);
    return static_cast<int>(p.values.size()) - 1;
  };
  int in = value("in");
  p.values[in].graph_input = true;
  std::vector<int> last(4, in);
  for (int step = 0; step < 3; ++step)
    for (int b = 0; b < 4; ++b) {
      int out = value("b" + std::to_string(b) + "_" + std::to_string(step));
      LayoutProblemNode n{"n", -1, {last[b]}, {out}, {{{Layout::kPlain}, {Layout::kPlain}, 1}}};
      p.nodes.push_back(n);
      last[b] = out;
    }
  // Graph outputs are live to the end; reduce them with a chain of joins instead.
  int acc = last[0];
  for (int b = 1; b < 4; ++b) {
    int out = value("j" + std::to_string(b));
    p.nodes.push_back(LayoutProblemNode{
        "j", -1, {acc, last[b]}, {out}, {{{Layout::kPlain, Layout::kPlain}, {Layout::kPlain}, 1}}});
    acc = out;
  }
  p.values[acc].graph_output = true;
  ASSERT_TRUE(CheckLayoutProblem(p).ok());
  EXPECT_EQ(MaxCutWidth(p, GivenOrder(p)), 4);
  EXPECT_LE(MaxCutWidth(p, GreedyNarrowOrder(p)), 3);
}

}  // namespace
}  // namespace verisub::rewriter
