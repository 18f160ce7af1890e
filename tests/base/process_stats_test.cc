// Process statistics: the peak grows with what the process touches; reading it changes nothing.
#include "base/process_stats.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

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

}  // namespace
}  // namespace verisub::base
