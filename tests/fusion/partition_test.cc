// Fusion by reductions: which nodes share a kernel. Every "fuses" case has a "must not fuse"
// twin (a value read twice, a second reduction domain, a node another kernel took).
#include "fusion/partition.h"

#include <gtest/gtest.h>

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

TEST(PartitionTest, OperatorsThatDoNotLowerSplitKernels) {
  const Graph g = Parse(
      "input x [1,4,8,8]\nweight w [4,4,3,3]\n"
      "output (relu (conv2d[stride_h=1,stride_w=1,padding=same,activation=none,group=1] "
      "(sigmoid (tanh x)) w))\n");
  EXPECT_EQ(Kinds(g), (K{{"tanh", "sigmoid"}, {"relu"}}));
}

}  // namespace
}  // namespace verisub::fusion
