// A proof record the reader can check: the header's digest over the rules refuses a file edited
// after writing (a rule's proof status changed to "proved", a rule swapped), a file without a
// digest, and a version-2 file; `verisub-rules check` reports it and `check --reprove` re-proves
// the rules through the program's hook. Rule text nested 20,000 deep is an error, not a stack
// overflow.
#include <gtest/gtest.h>

#include "ruledb/database.h"
#include "ruledb/rule_list.h"
#include "ruledb/ruledb.pb.h"
#include "ruledb/rules_tool.h"
#include "specs/term.h"
#include "tests/ruledb/fixture.h"

namespace verisub::ruledb {
namespace {

std::vector<Rule> Fixture() {
  auto rules = testing::LoadFixtureRules();
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  return rules.ok() ? *rules : std::vector<Rule>();
}

TEST(IntegrityTest, WrittenFilesCarryADigestThatLoads) {
  auto bytes = SerializeRuleDatabase(testing::TestHeader(), Fixture());
  ASSERT_TRUE(bytes.ok());
  auto db = ParseRuleDatabaseBytes(*bytes, "ok.pb");
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ(db->header.digest.size(), 32u);
  EXPECT_TRUE(db->digest_ok);
}

TEST(IntegrityTest, AnUnprovedRuleEditedToProvedIsRefused) {
  std::vector<Rule> rules = Fixture();
  rules[0].proof = {ProofStatus::kNotProved, {}, 1, "countermodel"};
  auto bytes = SerializeRuleDatabase(testing::TestHeader(), rules);
  ASSERT_TRUE(bytes.ok());
  // The hand edit: the same file, the first rule now claims a proof.
  v2::RuleDatabase p;
  ASSERT_TRUE(p.ParseFromString(*bytes));
  bool edited = false;
  for (auto& r : *p.mutable_rules())
    if (r.proof().status() == v2::PROOF_STATUS_NOT_PROVED) {
      r.mutable_proof()->set_status(v2::PROOF_STATUS_PROVED);
      r.mutable_proof()->clear_reason();
      edited = true;
    }
  ASSERT_TRUE(edited);
  auto db = ParseRuleDatabaseBytes(p.SerializeAsString(), "edited.pb");
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(db.status().message().find("edited.pb: integrity digest mismatch"), std::string::npos)
      << db.status().message();
  EXPECT_NE(db.status().message().find("--reprove"), std::string::npos);
  // The text form is checked the same way.
  auto text = RuleDatabaseBytesToText(p.SerializeAsString(), "edited.pb");
  ASSERT_TRUE(text.ok());
  EXPECT_FALSE(ParseRuleDatabaseText(*text, "edited.txt").ok());
  // Inspection loads it with a warning and digest_ok false.
  LoadOptions inspect;
  inspect.check_digest = false;
  auto seen = ParseRuleDatabaseBytes(p.SerializeAsString(), "edited.pb", inspect);
  ASSERT_TRUE(seen.ok()) << seen.status().message();
  EXPECT_FALSE(seen->digest_ok);
}

TEST(IntegrityTest, AFileWithoutADigestIsRefused) {
  auto bytes = SerializeRuleDatabase(testing::TestHeader(), Fixture());
  ASSERT_TRUE(bytes.ok());
  v2::RuleDatabase p;
  ASSERT_TRUE(p.ParseFromString(*bytes));
  p.mutable_header()->clear_digest();
  auto db = ParseRuleDatabaseBytes(p.SerializeAsString(), "handmade.pb");
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("handmade.pb: no integrity digest"), std::string::npos)
      << db.status().message();
}

TEST(IntegrityTest, AVersion2FileSaysToRegenerate) {
  DatabaseHeader h = testing::TestHeader();
  h.schema_version = 2;
  auto bytes = SerializeRuleDatabase(h, Fixture());
  ASSERT_TRUE(bytes.ok());
  auto db = ParseRuleDatabaseBytes(*bytes, "v2.pb");
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("no integrity digest: regenerate"), std::string::npos)
      << db.status().message();
}

TEST(IntegrityTest, CheckReportsTheDigestAndReproveUsesTheHook) {
  std::vector<Rule> rules = Fixture();
  auto bytes = SerializeRuleDatabase(testing::TestHeader(), rules);
  ASSERT_TRUE(bytes.ok());
  LoadOptions inspect;
  inspect.proved_only = false;
  auto db = ParseRuleDatabaseBytes(*bytes, "db.pb", inspect);
  ASSERT_TRUE(db.ok());
  bool ok = false;
  std::string report = CheckRuleDatabase(*db, &ok);
  EXPECT_TRUE(ok) << report;
  EXPECT_NE(report.find("digest: "), std::string::npos);
  // A reprover that proves all but the second rule: check fails naming that rule.
  int calls = 0;
  ReproveFn reprove = [&](std::vector<Rule>* rs) -> StatusOr<std::string> {
    ++calls;
    for (size_t i = 0; i < rs->size(); ++i)
      (*rs)[i].proof.status = i == 1 ? ProofStatus::kNotProved : ProofStatus::kProved;
    return std::string("stub");
  };
  std::string out = ReproveRuleDatabase(*db, reprove, &ok);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(ok);
  EXPECT_NE(out.find("claims a proof but is not_proved: " + db->rules[1].Id()), std::string::npos)
      << out;
  // And through the tool: without a hook --reprove is refused, not ignored.
  std::string path = ::testing::TempDir() + "/integrity_db.pb";
  ASSERT_TRUE(WriteFileAtomically(path, *bytes).ok());
  std::string tool_out, err;
  EXPECT_EQ(RunRulesTool({"check", "--reprove", path}, &tool_out, &err), 1);
  EXPECT_NE(err.find("cannot re-prove"), std::string::npos) << err;
  tool_out.clear();
  err.clear();
  EXPECT_EQ(RunRulesTool({"check", "--reprove", path}, &tool_out, &err, reprove), 1);
  EXPECT_NE(tool_out.find("FAILED"), std::string::npos) << tool_out;
}

TEST(IntegrityTest, RuleNested20000DeepIsAnErrorNotAStackOverflow) {
  const int depth = 20000;
  std::string text;
  for (int i = 0; i < depth; ++i) text += "(relu ";
  text += "?a";
  text += std::string(depth, ')');
  auto term = specs::ParseTermString(text);
  ASSERT_FALSE(term.ok());
  EXPECT_NE(term.status().message().find("nested more than 256 deep"), std::string::npos)
      << term.status().message();
  auto list = ParseRuleList(text + " => ?a\n", "deep.txt");
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.status().message().find("deep.txt"), std::string::npos);
  // Twin: 200 deep is fine.
  std::string ok_text;
  for (int i = 0; i < 200; ++i) ok_text += "(relu ";
  ok_text += "?a" + std::string(200, ')');
  EXPECT_TRUE(specs::ParseTermString(ok_text).ok());
}

TEST(IntegrityTest, HugeOutputIndexIsAnErrorNotAnException) {
  auto term = specs::ParseTermString("(split.99999999999[axis=0] ?a)");
  ASSERT_FALSE(term.ok());
  EXPECT_NE(term.status().message().find("bad output index"), std::string::npos);
}

// Found by fuzzing (tests/fuzz/corpus/rules_proto/regress_non_hex_rule_id.pb): a protobuf rule
// id with a non-hex character was written as text the text parser refused.
TEST(IntegrityTest, ANonHexRuleIdIsRefusedInBothForms) {
  auto bytes = ReadFile("tests/fuzz/corpus/rules_proto/regress_non_hex_rule_id.pb");
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto text = RuleDatabaseBytesToText(*bytes, "crash.pb");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("bad rule id"), std::string::npos)
      << text.status().message();
  LoadOptions lenient;
  lenient.check_digest = false;
  lenient.proved_only = false;
  EXPECT_FALSE(ParseRuleDatabaseBytes(*bytes, "crash.pb", lenient).ok());
}

// Found by `make fuzz` (tests/fuzz/corpus/rules_proto/regress_colon_in_operator_name.pb): a
// protobuf operator named "ewad:" was written as text that the text parser refused (':' is a
// name character of the header, not of a term). Now the conversion refuses it; the decoder
// refuses the unknown operator as before.
TEST(IntegrityTest, AColonInAnOperatorNameIsNotWrittenAsText) {
  auto bytes = ReadFile("tests/fuzz/corpus/rules_proto/regress_colon_in_operator_name.pb");
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto text = RuleDatabaseBytesToText(*bytes, "crash.pb");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("operator name 'ewad:' cannot be written as text"),
            std::string::npos)
      << text.status().message();
  // Twin: the seed it was mutated from converts and parses back.
  auto seed = ReadFile("tests/fuzz/corpus/rules_proto/seed_ewadd_ewmul.pb");
  ASSERT_TRUE(seed.ok());
  auto seed_text = RuleDatabaseBytesToText(*seed, "seed.pb");
  ASSERT_TRUE(seed_text.ok()) << seed_text.status().message();
  EXPECT_TRUE(RuleDatabaseTextToBytes(*seed_text, "seed.txt").ok());
}

}  // namespace
}  // namespace verisub::ruledb
