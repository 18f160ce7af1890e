// EnumerationOrder recomputes the order in which the enumeration built its graphs.
#include "gen/enumeration_order.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "gen/enumerator.h"
#include "gen/pair_tester.h"

namespace verisub::gen {
namespace {

// Constants, enlarge, split trees, multi-output and commutative operators, inputs of several
// shapes: everything that shapes the enumeration's loop.
constexpr const char* kSpace = R"(
max_ops 3
input x0 [2,4]
input x1 [2,4]
input y [4,4]
input a [1,4,3,3]
input w [4,4,1,3] consumers=conv2d.1,enlarge,ewadd
input s []
constant const_imatmul x0 consumers=matmul
constant const_iconv a kernel_h=3 kernel_w=3 consumers=conv2d.1
op matmul activation=none input_rank=2
op ewadd
op smul
op relu
op conv2d stride_h=1 stride_w=1 padding=same activation=none group=1
op enlarge kernel_h=3 kernel_w=3
op concat axis=0,1 input_rank=2
op split axis=0,1 input_rank=2
op transpose perm=[1,0]
)";

struct Space {
  GenConfig config;
  SearchSpace space;
};

std::unique_ptr<Space> MakeSpace(const char* text) {
  auto s = std::make_unique<Space>();
  auto config = ParseConfig(text, "test.cfg");
  EXPECT_TRUE(config.ok()) << config.status().message();
  s->config = *config;
  auto space = BuildSearchSpace(s->config);
  EXPECT_TRUE(space.ok()) << space.status().message();
  s->space = std::move(*space);
  return s;
}

TEST(EnumerationOrderTest, KeysIncreaseInEnumerationOrder) {
  auto s = MakeSpace(kSpace);
  // Arena codes are (task, offset): sorting them gives the order the graphs were built in.
  Enumeration e = Enumerate(s->space, 2, nullptr, /*pack_codes=*/false);
  std::vector<uint64_t> codes;
  for (const GraphEntry& g : e.graphs) codes.push_back(g.code);
  std::sort(codes.begin(), codes.end());
  ASSERT_GT(codes.size(), 10000u);
  EnumerationOrder order(s->space);
  EnumerationOrder::Key previous{};
  for (size_t i = 0; i < codes.size(); ++i) {
    EnumerationOrder::Key key = order.KeyOf(e.codec.Decode(codes[i], e.arenas));
    if (i > 0) {
      ASSERT_LT(previous, key) << "graph " << i;
    }
    previous = key;
  }
}

TEST(EnumerationOrderTest, PackedAndArenaCodesGiveTheSameCandidates) {
  auto s = MakeSpace(kSpace);
  Enumeration packed = Enumerate(s->space, 2, nullptr);
  Enumeration arena = Enumerate(s->space, 1, nullptr, /*pack_codes=*/false);
  ASSERT_TRUE(packed.codec.packed());
  ASSERT_FALSE(arena.codec.packed());
  EXPECT_EQ(packed.graphs.size(), arena.graphs.size());
  CandidateTexts a = TestPairs(s->space, packed, 2, nullptr);
  CandidateTexts b = TestPairs(s->space, arena, 1, nullptr);
  EXPECT_FALSE(a.texts.empty());
  EXPECT_EQ(a.texts, b.texts);
  EXPECT_EQ(a.stats.classes, b.stats.classes);
  EXPECT_EQ(a.stats.pairs, b.stats.pairs);
}

}  // namespace
}  // namespace verisub::gen
