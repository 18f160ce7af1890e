// Symbolic split trees: a split's left part is tied to the concat its input's tree records (through
// an elementwise operator where two trees met), and concatenations in another order have other
// trees.
#include "verify/split_trees.h"

#include <gtest/gtest.h>

#include "ruledb/rule.h"
#include "tests/verify/rule_text.h"

namespace verisub::verify {
namespace {

using testing::Rule;

// Builds both sides' trees to a fixed point; false with `error` where a split undoes no concat.
bool Settle(const ruledb::Rule& rule, const std::vector<int>& ranks, SplitTrees* trees,
            std::string* error) {
  const ruledb::PatternRanks src(rule.src, ranks), dst(rule.dst, ranks);
  for (int round = 0; round < 8; ++round) {
    trees->StartRound();
    if (!trees->Build(rule.src, src, 's', error) || !trees->Build(rule.dst, dst, 'd', error))
      return false;
    if (!trees->changed()) return true;
  }
  return false;
}

TEST(SplitTreesTest, ASplitsLeftPartIsItsConcatsLeftOperand) {
  // ewadd met the trees of two concatenations; the split ties their left parts (?a and ?c have
  // equal rows wherever it type-checks).
  ruledb::Rule rule = Rule(
      "(split.0[axis=0] (ewadd (concat[axis=0] ?a ?b) (concat[axis=0] ?c ?d))) => (ewadd ?a ?c)");
  Dims dims;
  SplitTrees trees(&dims);
  std::string error;
  ASSERT_TRUE(Settle(rule, {2, 2, 2, 2}, &trees, &error)) << error;
  EXPECT_EQ(dims.Find(DimName(ruledb::ValueRef{ruledb::ValueRef::kInput, 0}, 0, 's')),
            dims.Find(DimName(ruledb::ValueRef{ruledb::ValueRef::kInput, 2}, 0, 's')));
  EXPECT_TRUE(trees.SameEverywhere(rule.src.outputs[0], rule.dst.outputs[0], &error)) << error;
}

TEST(SplitTreesTest, ASplitOfNoConcatOrAnotherOrderDecidesNothing) {
  Dims dims;
  SplitTrees trees(&dims);
  std::string error;
  EXPECT_FALSE(Settle(Rule("(split.0[axis=0] (ewadd ?a ?b)) => ?a"), {2, 2}, &trees, &error));
  // Associativity: equal elements, other trees.
  ruledb::Rule assoc = Rule(
      "(concat[axis=0] (concat[axis=0] ?a ?b) ?c) => (concat[axis=0] ?a (concat[axis=0] ?b ?c))");
  Dims dims2;
  SplitTrees trees2(&dims2);
  ASSERT_TRUE(Settle(assoc, {2, 2, 2}, &trees2, &error)) << error;
  EXPECT_FALSE(trees2.SameEverywhere(assoc.src.outputs[0], assoc.dst.outputs[0], &error));
}

}  // namespace
}  // namespace verisub::verify
