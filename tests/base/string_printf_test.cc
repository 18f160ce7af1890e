// StringAppendF appends (never replaces) and is not cut at any buffer size.
#include "base/string_printf.h"

#include <gtest/gtest.h>

#include <string>

namespace verisub::base {
namespace {

TEST(StringPrintfTest, AppendsFormattedText) {
  std::string s = "nodes: ";
  StringAppendF(&s, "%d, %s %.2f\n", 42, "ms", 1.5);
  EXPECT_EQ(s, "nodes: 42, ms 1.50\n");
  StringAppendF(&s, "%s", "");
  EXPECT_EQ(s, "nodes: 42, ms 1.50\n");
}

TEST(StringPrintfTest, LongTextIsWhole) {
  const std::string long_name(5000, 'x');
  std::string s;
  StringAppendF(&s, "output %s sum=%d\n", long_name.c_str(), 7);
  EXPECT_EQ(s, "output " + long_name + " sum=7\n");
}

}  // namespace
}  // namespace verisub::base
