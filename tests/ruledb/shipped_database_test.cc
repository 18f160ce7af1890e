// The shipped database (data/rules/): its two committed forms convert into each other byte for
// byte, it loads under the current op set, and every rule in it is proved.
#include <gtest/gtest.h>

#include "ruledb/database.h"
#include "specs/registry.h"

namespace verisub::ruledb {
namespace {

constexpr const char* kProto = "data/rules/taso.pb";
constexpr const char* kText = "data/rules/taso.txt";

TEST(ShippedDatabaseTest, BothFormsRoundTripByteForByte) {
  auto bytes = ReadFile(kProto);
  auto text = ReadFile(kText);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  ASSERT_TRUE(text.ok()) << text.status().message();
  auto as_text = RuleDatabaseBytesToText(*bytes, kProto);
  ASSERT_TRUE(as_text.ok()) << as_text.status().message();
  EXPECT_TRUE(*as_text == *text) << "protobuf -> text differs from " << kText;
  auto as_bytes = RuleDatabaseTextToBytes(*text, kText);
  ASSERT_TRUE(as_bytes.ok()) << as_bytes.status().message();
  EXPECT_TRUE(*as_bytes == *bytes) << "text -> protobuf differs from " << kProto;
}

TEST(ShippedDatabaseTest, LoadsUnderThisOpSetWithEveryRuleProved) {
  for (const char* path : {kProto, kText}) {
    auto db = LoadRuleDatabase(path);
    ASSERT_TRUE(db.ok()) << db.status().message();
    EXPECT_EQ(db->header.op_set_fingerprint, specs::OpSetFingerprintHex()) << path;
    EXPECT_EQ(db->skipped_unproved, 0) << path;
    EXPECT_EQ(db->skipped_unknown_operator, 0) << path;
    EXPECT_GT(db->rules.size(), 1000u) << path;
    for (const Rule& r : db->rules) {
      ASSERT_EQ(r.proof.status, ProofStatus::kProved) << r.ToText();
      ASSERT_TRUE(ValidateRule(r).ok()) << r.ToText();
    }
  }
}

}  // namespace
}  // namespace verisub::ruledb
