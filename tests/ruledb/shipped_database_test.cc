// The shipped databases (data/rules/: the operator level's taso.pb and the sub-operator level's
// subop.pb): their two committed forms convert into each other byte for byte, they load under the
// current op set, every rule in them is proved, and subop.pb holds the rules issue 26 names.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ruledb/database.h"
#include "specs/registry.h"

namespace verisub::ruledb {
namespace {

struct Shipped {
  const char* proto;
  const char* text;
  size_t min_rules;
};
constexpr Shipped kShipped[] = {{"data/rules/taso.pb", "data/rules/taso.txt", 1000},
                                {"data/rules/subop.pb", "data/rules/subop.txt", 300}};

TEST(ShippedDatabaseTest, BothFormsRoundTripByteForByte) {
  for (const Shipped& db : kShipped) {
    auto bytes = ReadFile(db.proto);
    auto text = ReadFile(db.text);
    ASSERT_TRUE(bytes.ok()) << bytes.status().message();
    ASSERT_TRUE(text.ok()) << text.status().message();
    auto as_text = RuleDatabaseBytesToText(*bytes, db.proto);
    ASSERT_TRUE(as_text.ok()) << as_text.status().message();
    EXPECT_TRUE(*as_text == *text) << "protobuf -> text differs from " << db.text;
    auto as_bytes = RuleDatabaseTextToBytes(*text, db.text);
    ASSERT_TRUE(as_bytes.ok()) << as_bytes.status().message();
    EXPECT_TRUE(*as_bytes == *bytes) << "text -> protobuf differs from " << db.proto;
  }
}

TEST(ShippedDatabaseTest, LoadsUnderThisOpSetWithEveryRuleProved) {
  for (const Shipped& db : kShipped)
    for (const char* path : {db.proto, db.text}) {
      auto loaded = LoadRuleDatabase(path);
      ASSERT_TRUE(loaded.ok()) << loaded.status().message();
      EXPECT_EQ(loaded->header.op_set_fingerprint, specs::OpSetFingerprintHex()) << path;
      EXPECT_EQ(loaded->skipped_unproved, 0) << path;
      EXPECT_EQ(loaded->skipped_unknown_operator, 0) << path;
      EXPECT_GT(loaded->rules.size(), db.min_rules) << path;
      for (const Rule& r : loaded->rules) {
        ASSERT_EQ(r.proof.status, ProofStatus::kProved) << r.ToText();
        ASSERT_TRUE(ValidateRule(r).ok()) << r.ToText();
      }
    }
}

// Issue 26's examples, by their canonical text: exp(a) exp(b) = exp(a + b) (a candidate the
// config states: no modular fingerprint sees it), the reduction of a broadcast, merged
// reciprocals, two transposes composed into one; and, as their must-not-fire twins, the false
// neighbours are absent.
TEST(ShippedDatabaseTest, SubopDatabaseHoldsTheIssueExamples) {
  auto db = LoadRuleDatabase("data/rules/subop.pb");
  ASSERT_TRUE(db.ok()) << db.status().message();
  std::set<std::string> texts;
  for (const Rule& r : db->rules) texts.insert(r.ToText());
  for (const char* rule : {
           "(ewmul (exp ?a) (exp ?b)) => (exp (ewadd ?a ?b))",
           "(recip (exp ?a)) => (exp (neg ?a))",
           "(reduce_max[axis=1] (broadcast[axis=1,extent=4] ?a)) => ?a",
           "(ewadd (ewadd ?a ?a) (ewadd ?a ?a)) => (reduce_sum[axis=1] (broadcast[axis=1,extent=4] "
           "?a))",
           "(ewmul (recip ?a) (recip ?b)) => (recip (ewmul ?a ?b))",
           "(recip (recip ?a)) => ?a",
           "(ewmax ?a ?a) => ?a",
           "(transpose[perm=[0,2,3,1]] (transpose[perm=[0,2,3,1]] ?a)) => "
           "(transpose[perm=[0,3,1,2]] ?a)",
           "(reduce_max[axis=1] (ewadd ?a (broadcast[axis=1,extent=4] ?b))) => "
           "(ewadd (reduce_max[axis=1] ?a) ?b) where ?a:2 ?b:2",
       })
    EXPECT_EQ(texts.count(rule), 1u) << rule;
  for (const char* rule : {
           "(ewadd (exp ?a) (exp ?b)) => (exp (ewadd ?a ?b))",
           "(ewadd (recip ?a) (recip ?b)) => (recip (ewadd ?a ?b))",
           "(reduce_sum[axis=1] (broadcast[axis=1,extent=4] ?a)) => ?a",
       })
    EXPECT_EQ(texts.count(rule), 0u) << rule;
}

}  // namespace
}  // namespace verisub::ruledb
