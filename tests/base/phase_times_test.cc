#include "base/phase_times.h"

#include <gtest/gtest.h>

namespace verisub::base {
namespace {

TEST(PhaseTimesTest, PhasesKeepTheirOrderAndARepeatedNameAddsUp) {
  PhaseTimes t;
  t.Add("import", 0.25);
  t.Add("search", 0.5);
  t.Add("import", 0.125);
  ASSERT_EQ(t.phases().size(), 2u);
  EXPECT_EQ(t.phases()[0].first, "import");
  EXPECT_DOUBLE_EQ(t.Seconds("import"), 0.375);
  EXPECT_DOUBLE_EQ(t.Seconds("never"), 0);
  EXPECT_DOUBLE_EQ(t.Total(), 0.875);
  EXPECT_EQ(t.ToString(), "import 0.375 s, search 0.500 s");
}

TEST(PhaseTimesTest, MarkEndsThePhaseSinceTheLastMark) {
  PhaseTimes t;
  t.Mark("first");
  t.Mark("second");
  ASSERT_EQ(t.phases().size(), 2u);
  EXPECT_GE(t.Seconds("first"), 0);
  EXPECT_GE(t.Seconds("second"), 0);
  EXPECT_LT(t.Total(), 60);
}

TEST(PhaseTimesTest, PhasesBesideOthersAreListedButNotInTheWallTotal) {
  PhaseTimes t;
  t.Add("import", 1.0);
  t.AddBeside("rules", 0.75);
  EXPECT_DOUBLE_EQ(t.Total(), 1.0);
  EXPECT_DOUBLE_EQ(t.Seconds("rules"), 0.75);
  EXPECT_EQ(t.ToString(), "import 1.000 s; beside: rules 0.750 s");
  PhaseTimes outer;
  outer.AddAll(t, "load ");
  EXPECT_DOUBLE_EQ(outer.Total(), 1.0);
}

TEST(PhaseTimesTest, AddAllPrefixesAndTinyPhasesAreNotPrinted) {
  PhaseTimes inner, outer;
  inner.Add("search", 1.0);
  inner.Add("fold", 1e-5);
  outer.Add("import", 2.0);
  outer.AddAll(inner, "joint ");
  EXPECT_DOUBLE_EQ(outer.Seconds("joint search"), 1.0);
  EXPECT_EQ(outer.ToString(), "import 2.000 s, joint search 1.000 s");
}

}  // namespace
}  // namespace verisub::base
