// Layout assignment on random graphs with a random cost source: the problem built from the
// graph, solved without the inexact prunings, reaches the brute-force optimum of that problem,
// and its translation back to the graph is a valid assignment.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "rewriter/layout_assign.h"
#include "tests/rewriter/layout_test_problems.h"
#include "tests/rewriter/test_graphs.h"

namespace verisub::rewriter {
namespace {

using specs::Layout;

constexpr int kGraphs = 150;
constexpr const char* kConv1x1 =
    "conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1]";

// Deterministic pseudo-random costs: a kernel combination is refused about one time in three
// (all-plain never, opaque nodes anything else always), times in [1, 20) us, conversions in
// [0.5, 5) us, all drawn from a hash of (seed, node, layouts).
class RandomCosts : public LayoutCostSource {
 public:
  explicit RandomCosts(uint64_t seed) : seed_(seed) {}
  std::string Name() const override { return "random"; }
  std::optional<double> KernelCostUs(const runtime::Graph& g, const runtime::Node& n,
                                     std::span<const Layout> in,
                                     std::span<const Layout> out) const override {
    bool plain = true;
    uint64_t h = Mix(seed_, std::hash<std::string>()(n.name));
    for (size_t k = 0; k < in.size(); ++k) {
      const bool weight = n.inputs[k] != runtime::kNoValue && g.value(n.inputs[k]).constant;
      if (weight) continue;
      plain &= in[k] == Layout::kPlain;
      h = Mix(h, static_cast<uint64_t>(in[k]) + 1);
    }
    for (Layout l : out) {
      plain &= l == Layout::kPlain;
      h = Mix(h, static_cast<uint64_t>(l) + 11);
    }
    if (!plain && (n.opaque() || h % 3 == 0)) return std::nullopt;
    return 1 + static_cast<double>(h % 1900) / 100;
  }
  double ConversionCostUs(const runtime::Value& v, Layout from, Layout to) const override {
    uint64_t h = Mix(Mix(seed_ ^ 0x5bd1e995, std::hash<std::string>()(v.name)),
                     static_cast<uint64_t>(from) * 8 + static_cast<uint64_t>(to));
    return 0.5 + static_cast<double>(h % 450) / 100;
  }

 private:
  static uint64_t Mix(uint64_t h, uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
  }
  uint64_t seed_;
};

// A random graph of 3 to 6 nodes over [1, 8, 4, 4] feature maps: relu, 1x1 convolutions,
// elementwise sums, channel concats (a split after one, two outputs), and an opaque Neg.
runtime::Graph RandomGraph(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  testing::GraphBuilder b;
  std::vector<int> live{b.Input("x", {1, 8, 4, 4})};
  std::vector<int> unread;
  const int nodes = 3 + pick(4);
  for (int i = 0; i < nodes; ++i) {
    int a = live[pick(static_cast<int>(live.size()))];
    int c = live[pick(static_cast<int>(live.size()))];
    switch (pick(6)) {
      case 0:
        live.push_back(b.Op("relu", {a}));
        break;
      case 1:
        live.push_back(b.Op(kConv1x1, {a, b.Weight("w" + std::to_string(i), {8, 8, 1, 1}, i)}));
        break;
      case 2:
        live.push_back(b.Op("ewadd", {a, c}));
        break;
      case 3: {  // concat, then split it back: a two-output node
        int cat = b.Op("concat[axis=1]", {a, c});
        std::vector<int> parts = b.Ops("split[axis=1]", {cat});
        live.insert(live.end(), parts.begin(), parts.end());
        ++i;
        break;
      }
      case 4:
        live.push_back(b.Opaque("Neg", a));
        break;
      default:
        live.push_back(b.Op("sigmoid", {a}));
        break;
    }
  }
  b.Output(live.back());
  if (live.size() > 3) b.Output(live[live.size() / 2]);
  return b.Finish();
}

TEST(LayoutGraphFuzzTest, ExactOnRandomGraphsAndValid) {
  int compared = 0, conversions = 0, two_outputs = 0, opaque = 0;
  for (int seed = 0; seed < kGraphs; ++seed) {
    runtime::Graph g = RandomGraph(seed);
    RandomCosts costs(seed);
    auto p = BuildLayoutProblem(g, costs);
    ASSERT_TRUE(p.ok()) << seed << ": " << p.status().message();
    for (const auto& n : g.nodes()) {
      two_outputs += n->outputs.size() == 2;
      opaque += n->opaque();
    }
    LayoutDpOptions exact;
    exact.threshold = 0;
    exact.pareto = false;
    exact.max_states = 0;
    LayoutDpReport r;
    auto a = AssignLayouts(g, costs, exact, &r);
    ASSERT_TRUE(a.ok()) << seed << ": " << a.status().message();
    testing::ExpectValidAssignment("graph " + std::to_string(seed), g, costs, *a);
    EXPECT_TRUE(r.exact);
    double assignments = 1;
    for (const auto& n : p->nodes) assignments *= static_cast<double>(n.choices.size());
    if (assignments <= 200000) {
      EXPECT_NEAR(a->cost_us, testing::BruteForceOptimum(*p), 1e-9 * a->cost_us) << seed;
      ++compared;
    }
    conversions += static_cast<int>(a->conversions.size());
    // With the default prunings: valid, never below the optimum.
    auto d = AssignLayouts(g, costs, LayoutDpOptions(), nullptr);
    ASSERT_TRUE(d.ok());
    testing::ExpectValidAssignment("graph " + std::to_string(seed) + " pruned", g, costs, *d);
    EXPECT_GE(d->cost_us, a->cost_us * (1 - 1e-12));
  }
  EXPECT_GT(compared, kGraphs / 2);
  EXPECT_GT(two_outputs, 20);
  EXPECT_GT(opaque, 20);
  EXPECT_GT(conversions, 0);  // the random costs do make conversions worth their price
}

}  // namespace
}  // namespace verisub::rewriter
