// Fusion by reductions: which nodes share a kernel. Every "fuses" case has a "must not fuse"
// twin (a value read twice, a second reduction domain, a node another kernel took).
#include "fusion/partition.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "runtime/graph_text.h"

namespace verisub::fusion {
namespace {

using runtime::Graph;

Graph Parse(const std::string& text) {
  auto g = runtime::ParseGraphText(text);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? *g : Graph();
}

// The clusters as lists of node kinds.
std::vector<std::vector<std::string>> Kinds(const Graph& g, const std::vector<char>& taken = {}) {
  std::vector<std::vector<std::string>> out;
  for (const runtime::KernelCluster& c : PlanClusters(g, taken)) {
    std::vector<std::string> k;
    for (int n : c.nodes) k.push_back(g.node(n).KindName());
    out.push_back(k);
  }
  return out;
}

using K = std::vector<std::vector<std::string>>;

TEST(PartitionTest, AChainOfElementwiseOperatorsIsOneKernel) {
  const Graph g = Parse("input x [2,8]\ninput y [2,8]\noutput (tanh (ewmul (sigmoid x) y))\n");
  EXPECT_EQ(Kinds(g), (K{{"sigmoid", "ewmul", "tanh"}}));
  const auto clusters = PlanClusters(g, {});
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(clusters[0].inputs.size(), 2u);
  EXPECT_EQ(clusters[0].output, g.outputs()[0]);
}

TEST(PartitionTest, AValueReadTwiceEndsAKernel) {
  // s is read by the ewmul and is a graph output: it is written, and its readers start anew.
  const Graph g =
      Parse("input x [2,8]\nlet s = (sigmoid x)\noutput (tanh (ewmul s s))\noutput s\n");
  EXPECT_EQ(Kinds(g), (K{{"sigmoid"}, {"ewmul", "tanh"}}));
}

TEST(PartitionTest, AValueReadTwiceInsideOneKernelStaysInside) {
  // c is read by the ewmul and the ewadd; both join the tanh's kernel.
  const Graph g =
      Parse("input x [2,8]\nlet c = (sigmoid x)\noutput (tanh (ewadd (ewmul c c) c))\n");
  EXPECT_EQ(Kinds(g), (K{{"sigmoid", "ewmul", "ewadd", "tanh"}}));
  // Its twin: c is also read by a node no kernel computes with it (a graph output here).
  const Graph h =
      Parse("input x [2,8]\nlet c = (sigmoid x)\noutput (tanh (ewadd (ewmul c c) c))\noutput c\n");
  EXPECT_EQ(Kinds(h), (K{{"sigmoid"}, {"ewmul", "ewadd", "tanh"}}));
}

TEST(PartitionTest, ReductionsOverOneDomainShareAKernel) {
  // softmax's max and sum, and the layer norm's two means: one domain each.
  const Graph g = Parse(
      "input x [4,16]\nweight s [16]\nweight b [16]\n"
      "output (relu (layer_norm[axis=1,epsilon=1e-5] (ewadd x x) s b))\n");
  EXPECT_EQ(Kinds(g), (K{{"ewadd", "layer_norm", "relu"}}));
}

TEST(PartitionTest, TwoReductionDomainsAreTwoKernels) {
  const Graph g = Parse("input x [4,16]\noutput (softmax[axis=0] (softmax[axis=1] x))\n");
  EXPECT_EQ(Kinds(g), (K{{"softmax"}, {"softmax"}}));
}

TEST(PartitionTest, TakenNodesAndViewsStayOut) {
  const Graph g = Parse("input x [2,8]\noutput (tanh (sigmoid (relu x)))\n");
  EXPECT_EQ(Kinds(g, {0, 1, 0}), (K{{"relu"}, {"tanh"}}));
  // A reshape or transpose alone is no kernel (the backend aliases or copies it); after a
  // computing node it joins.
  EXPECT_TRUE(Kinds(Parse("input x [2,8]\noutput (reshape[shape=[16]] x)\n")).empty());
  EXPECT_TRUE(Kinds(Parse("input x [2,8]\noutput (reshape[shape=[16]] "
                          "(transpose[perm=[1,0]] x))\n"))
                  .empty());
  EXPECT_EQ(Kinds(Parse("input x [2,8]\noutput (reshape[shape=[16]] (relu x))\n")),
            (K{{"relu", "reshape"}}));
}

// Data movement alone is a kernel where the library would copy twice: a concatenation and the
// channel shuffle after it (ShuffleNet's) become one pass; a transpose between views stays out.
TEST(PartitionTest, MovementThatCopiesTwiceIsOneKernel) {
  EXPECT_EQ(Kinds(Parse("input x [1,3,4,4]\ninput y [1,3,4,4]\n"
                        "output (reshape[shape=[1,6,4,4]] (transpose[perm=[0,2,1,3,4]] "
                        "(reshape[shape=[1,2,3,4,4]] (concat[axis=1] x y))))\n")),
            (K{{"concat", "reshape", "transpose", "reshape"}}));
  EXPECT_TRUE(Kinds(Parse("input x [1,6,4,4]\n"
                          "output (reshape[shape=[1,6,4,4]] (transpose[perm=[0,2,1,3,4]] "
                          "(reshape[shape=[1,2,3,4,4]] x)))\n"))
                  .empty());
  // Attention's heads out of a fused projection: values as [heads, tokens, 4] (rows copied
  // whole), keys as [heads, 4, tokens] (tokens innermost, read at a stride: left to the
  // library's reorder).
  const std::string heads =
      "input x [5,1,24]\noutput (transpose[perm=PERM] (reshape[shape=[5,2,4]] "
      "(slice[axis=2,start=8,end=16] x)))\n";
  auto with = [&](const std::string& perm) {
    std::string t = heads;
    t.replace(t.find("PERM"), 4, perm);
    return Parse(t);
  };
  EXPECT_EQ(Kinds(with("[1,0,2]")), (K{{"slice", "reshape", "transpose"}}));
  EXPECT_TRUE(Kinds(with("[1,2,0]")).empty());
}

TEST(PartitionTest, OperatorsThatDoNotLowerSplitKernels) {
  const Graph g = Parse(
      "input x [1,4,8,8]\nweight w [4,4,3,3]\n"
      "output (relu (conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] "
      "(sigmoid (tanh x)) w))\n");
  EXPECT_EQ(Kinds(g), (K{{"tanh", "sigmoid"}, {"relu"}}));
}

// The cheapest valid partition by enumerating every set partition (restricted growth strings).
int64_t BruteForceCost(const FusionProblem& p) {
  const int n = static_cast<int>(p.nodes.size());
  std::vector<int> kernel_of(n, 0);
  int64_t best = std::numeric_limits<int64_t>::max();
  std::function<void(int, int)> visit = [&](int i, int used) {
    if (i == n) {
      if (std::optional<int64_t> c = PartitionCost(p, kernel_of)) best = std::min(best, *c);
      return;
    }
    for (int k = 0; k <= used; ++k) {
      kernel_of[i] = k;
      visit(i + 1, std::max(used, k + 1));
    }
  };
  visit(0, 0);
  return best;
}

// Random DAGs of up to 8 nodes: reads of earlier nodes and of outside values, some values read
// outside, two reduction domains, sizes from a scalar to a megabyte.
FusionProblem RandomProblem(std::mt19937* rng) {
  auto pick = [&](int n) { return static_cast<int>((*rng)() % n); };
  const int n = 1 + pick(8), outside = 1 + pick(3);
  FusionProblem p;
  const int64_t sizes[] = {4, 64, 1024, 16 << 10, 64 << 10, 1 << 20};
  for (int v = 0; v < n + outside; ++v) p.bytes.push_back(sizes[pick(6)]);
  for (int i = 0; i < n; ++i) {
    FusionProblem::Node node;
    const int reads = 1 + pick(3);
    for (int r = 0; r < reads; ++r) {
      const int v = i > 0 && pick(3) > 0 ? pick(i) : n + pick(outside);
      if (std::find(node.reads.begin(), node.reads.end(), v) == node.reads.end())
        node.reads.push_back(v);
    }
    node.domain = pick(5) < 3 ? 0 : 1 + pick(2);
    node.escapes = pick(5) == 0;
    p.nodes.push_back(node);
  }
  return p;
}

TEST(PartitionSolverTest, EqualsBruteForceOnRandomGraphs) {
  std::mt19937 rng(20261129);
  int differs_from_first_branch = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const FusionProblem p = RandomProblem(&rng);
    const FusionPartition part = SolvePartition(p);
    ASSERT_TRUE(part.exact);
    const std::optional<int64_t> cost = PartitionCost(p, part.kernel_of);
    ASSERT_TRUE(cost.has_value()) << "trial " << trial << ": the solver's partition is invalid";
    EXPECT_EQ(*cost, part.cost) << "trial " << trial;
    EXPECT_EQ(part.cost, BruteForceCost(p)) << "trial " << trial;
    // The first branch alone (a budget of one state per node) is what a greedy would find.
    const FusionPartition first = SolvePartition(p, 1);
    ASSERT_TRUE(PartitionCost(p, first.kernel_of).has_value());
    differs_from_first_branch += first.cost != part.cost;
  }
  // The search earns its keep: on some graphs joining wherever possible is not the cheapest.
  EXPECT_GT(differs_from_first_branch, 0);
}

TEST(PartitionSolverTest, TwoDomainsFuseTheLargerValue) {
  // q reads p (domain 1, 1 MB) and i (domain 2, 1 KB): only one of them can join q's kernel.
  FusionProblem p;
  p.bytes = {1 << 20, 1 << 10, 4096, 4096};  // p, i, q, the outside input x
  p.nodes = {{{3}, 1, false}, {{3}, 2, false}, {{0, 1}, 0, true}};
  const FusionPartition part = SolvePartition(p);
  EXPECT_EQ(part.kernel_of[0], part.kernel_of[2]);
  EXPECT_NE(part.kernel_of[1], part.kernel_of[2]);
  // The same with the sizes swapped.
  std::swap(p.bytes[0], p.bytes[1]);
  const FusionPartition swapped = SolvePartition(p);
  EXPECT_EQ(swapped.kernel_of[1], swapped.kernel_of[2]);
  EXPECT_NE(swapped.kernel_of[0], swapped.kernel_of[2]);
}

TEST(PartitionSolverTest, CostRejectsWhatAKernelCannotHold) {
  FusionProblem p;
  p.bytes = {64, 64, 64, 64};
  // a = f(x), b = g(a), c = h(a, b); a escapes.
  p.nodes = {{{3}, 0, true}, {{0}, 0, false}, {{0, 1}, 0, true}};
  EXPECT_FALSE(PartitionCost(p, {0, 0, 0}).has_value());  // a and c both leave one kernel
  EXPECT_TRUE(PartitionCost(p, {0, 1, 1}).has_value());
  p.nodes[0].escapes = false;
  EXPECT_EQ(PartitionCost(p, {0, 0, 0}), kKernelCostBytes + 64 + 64);  // writes c, reads x
  p.nodes[0].domain = 1;
  p.nodes[2].domain = 2;
  EXPECT_FALSE(PartitionCost(p, {0, 0, 0}).has_value());  // two reduction domains
  EXPECT_FALSE(PartitionCost(p, {0, 0}).has_value());     // not a kernel per node
}

TEST(PartitionSolverTest, LargeComponentsTakeTheFirstBranch) {
  // A chain longer than the search's recursion cap: one kernel, said to be not proven optimal.
  FusionProblem p;
  const int n = 5000;
  for (int i = 0; i < n; ++i) p.nodes.push_back({{i == 0 ? n : i - 1}, 0, i == n - 1});
  p.bytes.assign(n + 1, 4096);
  const FusionPartition part = SolvePartition(p);
  EXPECT_FALSE(part.exact);
  EXPECT_EQ(part.kernels, 1);
  EXPECT_EQ(PartitionCost(p, part.kernel_of), part.cost);
}

TEST(PartitionSolverTest, ABudgetKeepsAValidPartition) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const FusionProblem p = RandomProblem(&rng);
    const FusionPartition part = SolvePartition(p, 2);
    EXPECT_EQ(PartitionCost(p, part.kernel_of), part.cost) << "trial " << trial;
  }
}

}  // namespace
}  // namespace verisub::fusion
