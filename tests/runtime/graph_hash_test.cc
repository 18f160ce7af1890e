// The structural graph hash: what it ignores, what it sees, and its two options (operand order
// of commutative operators, weights by value or by identity).
#include "runtime/graph_hash.h"

#include <gtest/gtest.h>

#include <string>

#include "runtime/graph_text.h"

namespace verisub::runtime {
namespace {

Graph Parse(const std::string& text) {
  auto g = ParseGraphText(text);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? std::move(*g) : Graph();
}

constexpr char kDiamond[] =
    "input x [2,3]\n"
    "let a = (relu x)\n"
    "let b = (sigmoid x)\n"
    "output (ewadd a b)\n";

TEST(GraphHashTest, IgnoresNamesAndTheOrderOfIndependentNodes) {
  uint64_t h = StructuralHash(Parse(kDiamond));
  EXPECT_EQ(h, StructuralHash(Parse(kDiamond)));  // deterministic
  EXPECT_EQ(h, StructuralHash(Parse("input other [2,3]\n"
                                    "let s = (sigmoid other)\n"
                                    "let r = (relu other)\n"
                                    "output (ewadd r s)\n")));
}

TEST(GraphHashTest, SeesOperatorsParametersWiringAndShapes) {
  uint64_t h = StructuralHash(Parse(kDiamond));
  EXPECT_NE(h, StructuralHash(Parse("input x [2,3]\noutput (ewadd (tanh x) (sigmoid x))\n")));
  EXPECT_NE(h, StructuralHash(Parse("input x [2,3]\noutput (ewadd (relu x) (relu x))\n")));
  EXPECT_NE(h, StructuralHash(Parse("input x [3,2]\noutput (ewadd (relu x) (sigmoid x))\n")));
  EXPECT_NE(StructuralHash(Parse("input x [2,2]\noutput (concat[axis=0] x x)\n")),
            StructuralHash(Parse("input x [2,2]\noutput (concat[axis=1] x x)\n")));
  EXPECT_NE(StructuralHash(Parse("input x [2,3]\noutput (onnx-Neg x)\n")),
            StructuralHash(Parse("input x [2,3]\noutput (onnx-Abs x)\n")));
}

TEST(GraphHashTest, CommutativeOperandOrderOnlyWhenAsked) {
  Graph ab = Parse(kDiamond);
  Graph ba = Parse("input x [2,3]\noutput (ewadd (sigmoid x) (relu x))\n");
  EXPECT_NE(StructuralHash(ab), StructuralHash(ba));
  const GraphHashOptions commutative{.commutative = true};
  EXPECT_EQ(StructuralHash(ab, commutative), StructuralHash(ba, commutative));
  // matmul is not commutative: its operand order always counts.
  Graph xy = Parse("input x [3,3]\ninput y [3,3]\noutput (matmul[activation=none] x y)\n");
  Graph yx = Parse("input x [3,3]\ninput y [3,3]\noutput (matmul[activation=none] y x)\n");
  EXPECT_NE(StructuralHash(xy, commutative), StructuralHash(yx, commutative));
}

TEST(GraphHashTest, WeightsByValueOrByIdentity) {
  // Two parses give equal weight contents (seeded by name) in different tensors.
  const std::string text = "input x [2,3]\nweight w [2,3]\noutput (ewadd x w)\n";
  Graph a = Parse(text), b = Parse(text), copy = a;
  const GraphHashOptions by_identity{.weights = GraphHashOptions::Weights::kByIdentity};
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
  EXPECT_NE(StructuralHash(a, by_identity), StructuralHash(b, by_identity));
  EXPECT_EQ(StructuralHash(a, by_identity), StructuralHash(copy, by_identity));
  // Other contents of the same shape: a new hash by value.
  Graph other = Parse("input x [2,3]\nweight v [2,3]\noutput (ewadd x v)\n");
  EXPECT_NE(StructuralHash(a), StructuralHash(other));
}

// One hasher for many graphs (the search's use): its caches never change a result.
TEST(GraphHashTest, ReusedHasherGivesFreshHashes) {
  GraphHasher hasher({.commutative = true});
  Graph a = Parse("input x [2,3]\nweight w [2,3]\noutput (ewadd x w)\n");
  const uint64_t first = hasher.Hash(a);
  EXPECT_EQ(hasher.Hash(a), first);
  EXPECT_EQ(first, StructuralHash(a, {.commutative = true}));
  Graph other = Parse("input x [2,3]\nweight v [2,3]\noutput (ewadd x v)\n");
  EXPECT_EQ(hasher.Hash(other), StructuralHash(other, {.commutative = true}));
}

}  // namespace
}  // namespace verisub::runtime
