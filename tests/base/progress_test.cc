// The progress reporter: silent when disabled; the final line says the label and the counts.
#include "base/progress.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <string>

namespace verisub::base {
namespace {

std::string ReadAll(std::FILE* f) {
  std::rewind(f);
  std::string s;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

TEST(ProgressTest, FinalLineCarriesTheLatestCounts) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  std::atomic<uint64_t> items{0};
  {
    Progress p(
        "phase", [&](double s) { return CountWithRate("items", items.load(), s); },
        ProgressOptions{true, std::chrono::milliseconds(3600000), f});
    items = 42;
  }
  const std::string out = ReadAll(f);
  std::fclose(f);
  EXPECT_EQ(out.rfind("phase: items 42 (", 0), 0u) << out;
  EXPECT_EQ(out.back(), '\n');
}

TEST(ProgressTest, DisabledPrintsNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p(
        "phase", [](double) { return "x"; }, ProgressOptions{false, {}, f});
  }
  EXPECT_EQ(ReadAll(f), "");
  std::fclose(f);
}

TEST(ProgressTest, RatesAreScaled) {
  EXPECT_EQ(CountWithRate("graphs", 3000000, 2.0), "graphs 3000000 (1.50 M/s)");
  EXPECT_EQ(CountWithRate("rules", 3000, 2.0), "rules 3000 (1.50 k/s)");
  EXPECT_EQ(CountWithRate("cases", 3, 2.0), "cases 3 (1.5/s)");
  EXPECT_EQ(CountWithRate("cases", 3, 0.0), "cases 3 (0.0/s)");
}

}  // namespace
}  // namespace verisub::base
