// Quoted strings of the text form: every byte round-trips; malformed quoting is an error.
#include "ruledb/text_escape.h"

#include <gtest/gtest.h>

namespace verisub::ruledb {
namespace {

TEST(TextEscapeTest, EveryByteRoundTrips) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  std::string quoted = QuoteString(all);
  EXPECT_EQ(quoted.find('\n'), std::string::npos);  // one line, always
  auto back = UnquoteString(quoted);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, all);
  EXPECT_EQ(QuoteString("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\x01\"");
}

TEST(TextEscapeTest, MalformedQuotingIsAnError) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"abc", "expected a quoted string"}, {"\"abc", "expected a quoted string"},
      {"\"", "expected a quoted string"},  {"\"a\"b\"", "unescaped '\"'"},
      {"\"a\\\"", "dangling '\\'"},        {"\"\\x4\"", "short \\x escape"},
      {"\"\\xzz\"", "bad \\x escape"},     {"\"\\q\"", "unknown escape '\\q'"},
  };
  for (const Case& c : cases) {
    auto r = UnquoteString(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos)
        << c.text << " -> " << r.status().message();
  }
}

}  // namespace
}  // namespace verisub::ruledb
