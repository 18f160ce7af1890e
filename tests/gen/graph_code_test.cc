// Graph codes: packed and arena forms decode to the graph that was encoded.
#include "gen/graph_code.h"

#include <gtest/gtest.h>

#include <random>

namespace verisub::gen {
namespace {

bool SameGraph(const Graph& a, const Graph& b) {
  if (a.identity_of != b.identity_of || a.ops.size() != b.ops.size()) return false;
  for (size_t k = 0; k < a.ops.size(); ++k)
    if (a.ops[k].inst != b.ops[k].inst || a.ops[k].in[0] != b.ops[k].in[0] ||
        a.ops[k].in[1] != b.ops[k].in[1] || a.ops[k].in[2] != b.ops[k].in[2])
      return false;
  return true;
}

Graph RandomGraph(std::mt19937_64* rng, int num_insts, int num_initial, int max_ops,
                  bool ternary = false) {
  Graph g;
  int n = static_cast<int>((*rng)() % (max_ops + 1));
  if (n == 0) {
    g.identity_of = static_cast<int>((*rng)() % num_initial);
    return g;
  }
  for (int k = 0; k < n; ++k) {
    const int tensors = num_initial + 2 * k;
    GraphOp op;
    op.inst = static_cast<uint16_t>((*rng)() % num_insts);
    op.in[0] = static_cast<uint8_t>((*rng)() % tensors);
    op.in[1] = (*rng)() % 2 ? kNoTensor : static_cast<uint8_t>((*rng)() % tensors);
    if (ternary && op.in[1] != kNoTensor && (*rng)() % 2)
      op.in[2] = static_cast<uint8_t>((*rng)() % tensors);
    g.ops.push_back(op);
  }
  return g;
}

uint64_t Pack(const GraphCodec& codec, const Graph& g) {
  if (g.ops.empty()) return codec.IdentityCode(g.identity_of);
  uint64_t code = 0;
  for (size_t k = 0; k < g.ops.size(); ++k) code |= codec.Field(static_cast<int>(k), g.ops[k]);
  return code;
}

TEST(GraphCodeTest, PackedCodesRoundTrip) {
  // TASO's space: 17 operator instances, 19 initial tensors, 3 operators.
  GraphCodec codec(17, 19 + 6, 3);
  ASSERT_TRUE(codec.packed());
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    Graph g = RandomGraph(&rng, 17, 19, 3);
    EXPECT_TRUE(SameGraph(codec.Decode(Pack(codec, g), {}), g)) << i;
  }
}

TEST(GraphCodeTest, ThreeInputCodesRoundTrip) {
  // The shipped space with conv2d_bias: 33 instances, 21 initial tensors, 3 operators: 63 bits,
  // the identity graphs' tensor under their zero first field.
  GraphCodec codec(33, 21 + 6, 3, true, 3);
  ASSERT_TRUE(codec.packed());
  std::mt19937_64 rng(9);
  for (int i = 0; i < 10000; ++i) {
    Graph g = RandomGraph(&rng, 33, 21, 3, true);
    EXPECT_TRUE(SameGraph(codec.Decode(Pack(codec, g), {}), g)) << i;
  }
  GraphCodec arena(33, 27, 3, false, 3);
  std::vector<std::vector<uint8_t>> arenas(1);
  std::vector<std::pair<uint64_t, Graph>> coded;
  for (int i = 0; i < 1000; ++i) {
    Graph g = RandomGraph(&rng, 33, 21, 3, true);
    coded.emplace_back(arenas[0].size(), g);
    AppendGraph(g, &arenas[0]);
  }
  for (const auto& [code, g] : coded) EXPECT_TRUE(SameGraph(arena.Decode(code, arenas), g));
}

TEST(GraphCodeTest, APrefixCodeIsSmallerThanItsExtensions) {
  GraphCodec codec(17, 25, 3);
  std::mt19937_64 rng(8);
  for (int i = 0; i < 1000; ++i) {
    Graph g = RandomGraph(&rng, 17, 19, 3);
    if (g.ops.size() < 2) continue;
    Graph prefix = g;
    prefix.ops.resize(g.ops.size() - 1);
    EXPECT_LT(Pack(codec, prefix), Pack(codec, g));
  }
}

TEST(GraphCodeTest, ArenaCodesRoundTrip) {
  GraphCodec codec(17, 25, 3, /*allow_packed=*/false);
  EXPECT_FALSE(codec.packed());
  std::mt19937_64 rng(9);
  std::vector<std::vector<uint8_t>> arenas(3);
  std::vector<std::pair<uint64_t, Graph>> coded;
  for (int i = 0; i < 3000; ++i) {
    Graph g = RandomGraph(&rng, 17, 19, 3);
    uint64_t task = i % 3;
    coded.emplace_back((task << 32) | arenas[task].size(), g);
    AppendGraph(g, &arenas[task]);
  }
  for (const auto& [code, g] : coded) EXPECT_TRUE(SameGraph(codec.Decode(code, arenas), g));
}

TEST(GraphCodeTest, LargeSpacesFallBackToArenas) {
  EXPECT_TRUE(GraphCodec(9, 16, 4).packed());      // the reduced N=4 space
  EXPECT_FALSE(GraphCodec(17, 35, 8).packed());    // 8 operators need more than 64 bits
  EXPECT_FALSE(GraphCodec(300, 250, 3).packed());  // many instances and tensors
  GraphCodec big(300, 250, 3);
  std::vector<std::vector<uint8_t>> arenas(1);
  Graph g;
  g.ops.push_back(GraphOp{299, {249, kNoTensor}});
  g.ops.push_back(GraphOp{7, {0, 250}});
  AppendGraph(g, &arenas[0]);
  EXPECT_TRUE(SameGraph(big.Decode(0, arenas), g));
}

}  // namespace
}  // namespace verisub::gen
