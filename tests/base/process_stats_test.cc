// Process statistics: the peak grows with what the process touches; reading it changes nothing;
// thread counts are bounded by the machine.
#include "base/process_stats.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

namespace verisub::base {
namespace {

TEST(ProcessStatsTest, PeakCoversMemoryTouched) {
  const int64_t before = PeakRssBytes();
  EXPECT_GT(before, 0);
  constexpr size_t kBytes = 64 << 20;
  auto block = std::make_unique<char[]>(kBytes);
  std::memset(block.get(), 1, kBytes);
  EXPECT_GE(PeakRssBytes(), static_cast<int64_t>(kBytes));
  EXPECT_GE(PeakRssBytes(), before);
  EXPECT_EQ(block[kBytes - 1], 1);
}

TEST(ProcessStatsTest, CpuTimeIsMonotonic) {
  const double a = ProcessCpuSeconds();
  volatile double x = 0;
  for (int i = 0; i < 1000000; ++i) x = x + i;
  EXPECT_GE(ProcessCpuSeconds(), a);
  EXPECT_GE(a, 0.0);
}

TEST(ProcessStatsTest, ThreadCountsAreCheckedAgainstTheMachine) {
  EXPECT_GE(MaxThreads(), 4);
  EXPECT_TRUE(CheckThreadCount(0, "threads").ok());
  EXPECT_TRUE(CheckThreadCount(MaxThreads(), "threads").ok());
  Status st = CheckThreadCount(100000, "Options::threads");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("Options::threads"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("hardware threads"), std::string::npos) << st.message();
  EXPECT_FALSE(CheckThreadCount(-1, "threads").ok());
}

}  // namespace
}  // namespace verisub::base
