// Rule database files: round trips between rules, protobuf and text; golden text; loading
// options; version and op-set checks; unknown operators; writing.
#include "ruledb/database.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "ruledb/proto_rule.h"
#include "ruledb/ruledb.pb.h"
#include "tests/ruledb/fixture.h"

namespace verisub::ruledb {
namespace {

using testing::LoadFixtureRules;
using testing::TestHeader;

std::vector<Rule> Fixture() {
  auto rules = LoadFixtureRules();
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  return rules.ok() ? *rules : std::vector<Rule>{};
}

TEST(DatabaseTest, FixtureIsRealistic) {
  std::vector<Rule> rules = Fixture();
  EXPECT_GE(rules.size(), 40u);
}

TEST(DatabaseTest, ProtobufAndTextRoundTripLosslessly) {
  std::vector<Rule> rules = Fixture();
  auto bytes = SerializeRuleDatabase(TestHeader(), rules);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto text = FormatRuleDatabaseText(TestHeader(), rules);
  ASSERT_TRUE(text.ok()) << text.status().message();
  // protobuf -> text equals the text written directly; text -> protobuf -> text is identical.
  auto text2 = RuleDatabaseBytesToText(*bytes, "db.pb");
  ASSERT_TRUE(text2.ok()) << text2.status().message();
  EXPECT_EQ(*text2, *text);
  auto bytes2 = RuleDatabaseTextToBytes(*text, "db.txt");
  ASSERT_TRUE(bytes2.ok()) << bytes2.status().message();
  EXPECT_EQ(*bytes2, *bytes);
  auto text3 = RuleDatabaseBytesToText(*bytes2, "db.pb");
  ASSERT_TRUE(text3.ok());
  EXPECT_EQ(*text3, *text);

  // Both decode to the same rules, header and proof records included.
  auto from_bytes = ParseRuleDatabaseBytes(*bytes, "db.pb");
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status().message();
  auto from_text = ParseRuleDatabaseText(*text, "db.txt");
  ASSERT_TRUE(from_text.ok()) << from_text.status().message();
  std::vector<Rule> sorted = rules;
  SortRules(&sorted);
  ASSERT_EQ(from_bytes->rules.size(), sorted.size());
  ASSERT_EQ(from_text->rules.size(), sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    for (const RuleDatabase* db : {&*from_bytes, &*from_text}) {
      const Rule& r = db->rules[i];
      EXPECT_EQ(r.ToText(), sorted[i].ToText());
      EXPECT_EQ(r.src, sorted[i].src);
      EXPECT_EQ(r.dst, sorted[i].dst);
      EXPECT_EQ(r.proof.axioms_used, sorted[i].proof.axioms_used);
      EXPECT_EQ(r.proof.seconds, sorted[i].proof.seconds);  // exact: shortest round-trip form
    }
  }
  const DatabaseHeader& h = from_text->header;
  EXPECT_EQ(h.generator_config, TestHeader().generator_config);
  EXPECT_EQ(h.counts, TestHeader().counts);
  EXPECT_EQ(h.max_ops, 3u);
  EXPECT_EQ(h.z3_version, "4.12.2");
  EXPECT_EQ(from_bytes->skipped_unknown_operator + from_bytes->skipped_unproved, 0);
  EXPECT_TRUE(from_bytes->warnings.empty());
}

// The generator's own file decodes a rule at a time from its wire bytes; the same message in
// another wire order (the header after the rules, as another tool may write it) decodes whole
// and gives the same database, digest holding; a rule edited on the wire is caught.
TEST(DatabaseTest, WireOrderDoesNotChangeWhatLoads) {
  auto bytes = SerializeRuleDatabase(TestHeader(), Fixture());
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  v2::RuleDatabase p;
  ASSERT_TRUE(p.ParseFromString(*bytes));
  v2::RuleDatabase header_only, rules_only;
  *header_only.mutable_header() = p.header();
  *rules_only.mutable_rules() = p.rules();
  const std::string reordered = rules_only.SerializeAsString() + header_only.SerializeAsString();
  ASSERT_NE(reordered, *bytes);
  auto canonical = ParseRuleDatabaseBytes(*bytes, "db.pb");
  auto other = ParseRuleDatabaseBytes(reordered, "other.pb");
  ASSERT_TRUE(canonical.ok()) << canonical.status().message();
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_TRUE(canonical->digest_ok);
  EXPECT_TRUE(other->digest_ok);
  EXPECT_EQ(other->header.digest, canonical->header.digest);
  ASSERT_EQ(other->rules.size(), canonical->rules.size());
  for (size_t i = 0; i < canonical->rules.size(); ++i)
    EXPECT_EQ(other->rules[i].ToText(), canonical->rules[i].ToText());

  // A rule's proof seconds changed on the wire: no longer the digest's file.
  v2::RuleDatabase edited = p;
  edited.mutable_rules(0)->mutable_proof()->set_seconds(p.rules(0).proof().seconds() + 1);
  auto db = ParseRuleDatabaseBytes(edited.SerializeAsString(), "edited.pb");
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("integrity digest mismatch"), std::string::npos)
      << db.status().message();
}

TEST(DatabaseTest, GoldenText) {
  auto a = ParseRule(
      "(matmul[activation=none] (matmul[activation=none] ?x ?y) ?z) => "
      "(matmul[activation=none] ?x (matmul[activation=none] ?y ?z))");
  auto b = ParseRule(
      "(relu (matmul[activation=none] ?p ?q)) => (matmul[activation=relu] ?p ?q) where ?q:3 ?p:2");
  ASSERT_TRUE(a.ok() && b.ok());
  a->proof = {ProofStatus::kProved, {"matmul_assoc"}, 0.25, ""};
  b->proof = {ProofStatus::kTimeout, {}, 10, "solver \"timeout\""};
  DatabaseHeader h;
  h.op_set_fingerprint = "0123456789abcdef";
  h.generator_config = "max_ops = 2\n";
  h.max_ops = 2;
  h.tool_version = "t";
  h.counts = {{"proved", 1}};
  auto text = FormatRuleDatabaseText(h, {*a, *b});
  ASSERT_TRUE(text.ok()) << text.status().message();
  LoadOptions any;
  any.allow_op_set_mismatch = true;
  any.proved_only = false;
  auto parsed = ParseRuleDatabaseText(*text, "golden.txt", any);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->header.digest.size(), 32u);
  const std::string expected =
      "# verisub-ruledb\n"
      "# schema_version: 3\n"
      "# op_set_fingerprint: \"0123456789abcdef\"\n"
      "# max_ops: 2\n"
      "# tool_version: \"t\"\n"
      "# z3_version: \"\"\n"
      "# generator_config: \"max_ops = 2\\n\"\n"
      "# count: proved 1\n"
      "# num_rules: 2\n"
      "# digest: \"" +
      parsed->header.digest +
      "\"\n"
      "(relu (matmul[activation=none] ?a ?b)) => (matmul[activation=relu] ?a ?b) where ?a:2 "
      "?b:3  # " +
      b->Id() +
      " timeout seconds=10 reason=\"solver \\\"timeout\\\"\"\n"
      "(matmul[activation=none] (matmul[activation=none] ?a ?b) ?c) => (matmul[activation=none] "
      "?a (matmul[activation=none] ?b ?c))  # " +
      a->Id() + " proved axioms=matmul_assoc seconds=0.25\n";
  EXPECT_EQ(*text, expected);
  auto back = RuleDatabaseTextToBytes(*text, "golden.txt");
  ASSERT_TRUE(back.ok()) << back.status().message();
  auto again = RuleDatabaseBytesToText(*back, "golden.pb");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, expected);
}

TEST(DatabaseTest, ProvedOnlyIsTheDefault) {
  std::vector<Rule> rules = Fixture();
  rules[0].proof = {ProofStatus::kUnknown, {}, 1.5, "unknown"};
  rules[1].proof = {ProofStatus::kNotProved, {}, 0.5, "countermodel"};
  auto bytes = SerializeRuleDatabase(TestHeader(), rules);
  ASSERT_TRUE(bytes.ok());
  auto proved = ParseRuleDatabaseBytes(*bytes, "db.pb");
  ASSERT_TRUE(proved.ok()) << proved.status().message();
  EXPECT_EQ(proved->rules.size(), rules.size() - 2);
  EXPECT_EQ(proved->skipped_unproved, 2);
  LoadOptions all;
  all.proved_only = false;
  auto every = ParseRuleDatabaseBytes(*bytes, "db.pb", all);
  ASSERT_TRUE(every.ok());
  EXPECT_EQ(every->rules.size(), rules.size());
  EXPECT_EQ(every->skipped_unproved, 0);
}

TEST(DatabaseTest, OtherSchemaVersionIsAnError) {
  DatabaseHeader h = TestHeader();
  h.schema_version = 4;
  auto bytes = SerializeRuleDatabase(h, Fixture());
  ASSERT_TRUE(bytes.ok());
  auto db = ParseRuleDatabaseBytes(*bytes, "future.pb");
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(db.status().message(), "future.pb: schema version 4; this tool reads version 3");
  // Version 1 rules carry no ranks: refused with what to do, in either form.
  h.schema_version = 1;
  auto old = FormatRuleDatabaseText(h, Fixture());
  ASSERT_TRUE(old.ok());
  auto v1 = ParseRuleDatabaseText(*old, "taso.txt");
  ASSERT_FALSE(v1.ok());
  EXPECT_EQ(v1.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(v1.status().message(),
            "taso.txt: schema version 1; this tool reads version 3 (version 1 rules carry no "
            "input ranks and were proved without them: regenerate the file with verisub-gen)");
  // Twin: the current version loads.
  EXPECT_TRUE(ParseRuleDatabaseBytes(*SerializeRuleDatabase(TestHeader(), Fixture()), "f").ok());
}

TEST(DatabaseTest, InputRanksRoundTripThroughBothForms) {
  std::vector<Rule> rules = Fixture();
  for (size_t i = 0; i < rules.size(); i += 3)
    for (int k = 0; k < rules[i].num_inputs; ++k)
      rules[i].input_ranks.push_back(static_cast<int>((i + k) % 5));
  // A rule and its ranked twin are different rules.
  Rule twin = rules[1];
  twin.input_ranks.assign(twin.num_inputs, 2);
  rules.push_back(twin);
  auto bytes = SerializeRuleDatabase(TestHeader(), rules);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto text = RuleDatabaseBytesToText(*bytes, "db.pb");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_NE(text->find(" where ?a:"), std::string::npos);
  auto bytes2 = RuleDatabaseTextToBytes(*text, "db.txt");
  ASSERT_TRUE(bytes2.ok()) << bytes2.status().message();
  EXPECT_EQ(*bytes2, *bytes);
  auto from_bytes = ParseRuleDatabaseBytes(*bytes, "db.pb");
  auto from_text = ParseRuleDatabaseText(*text, "db.txt");
  ASSERT_TRUE(from_bytes.ok() && from_text.ok());
  SortRules(&rules);
  ASSERT_EQ(from_bytes->rules.size(), rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(from_bytes->rules[i].input_ranks, rules[i].input_ranks) << rules[i].ToText();
    EXPECT_EQ(from_text->rules[i].input_ranks, rules[i].input_ranks) << rules[i].ToText();
    EXPECT_EQ(from_text->rules[i].Id(), rules[i].Id());
  }
  // A rank dropped from the text no longer matches the stored id; a rank count that does not
  // match the inputs is an error.
  std::string edited = *text;
  size_t at = edited.find(" where ");
  size_t end = edited.find("  # ", at);
  edited.erase(at, end - at);
  auto loaded = ParseRuleDatabaseText(edited, "db.txt");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("does not match the rule's id"), std::string::npos)
      << loaded.status().message();
}

TEST(DatabaseTest, OtherOpSetIsAnErrorUnlessAllowed) {
  DatabaseHeader h = TestHeader();
  h.op_set_fingerprint = "00000000deadbeef";
  auto text = FormatRuleDatabaseText(h, Fixture());
  ASSERT_TRUE(text.ok());
  auto strict = ParseRuleDatabaseText(*text, "old.txt");
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(
      strict.status().message().find("old.txt: generated from operator set '00000000deadbeef'"),
      std::string::npos)
      << strict.status().message();
  LoadOptions lenient;
  lenient.allow_op_set_mismatch = true;
  auto loaded = ParseRuleDatabaseText(*text, "old.txt", lenient);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->rules.size(), Fixture().size());
  ASSERT_EQ(loaded->warnings.size(), 1u);
  EXPECT_NE(loaded->warnings[0].find("00000000deadbeef"), std::string::npos);
}

// Replaces the first occurrence of `from` after the header.
std::string ReplaceInRules(std::string text, const std::string& from, const std::string& to) {
  size_t start = text.find("# num_rules");
  size_t pos = text.find(from, start);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

// The same, then the digest of the new contents: a file written by a build of another operator
// set, not a hand edit.
std::string WrittenElsewhere(const std::string& text, const std::string& from,
                             const std::string& to) {
  auto bytes = RuleDatabaseTextToBytes(ReplaceInRules(text, from, to), "edited.txt");
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  v2::RuleDatabase p;
  EXPECT_TRUE(p.ParseFromString(*bytes));
  p.mutable_header()->set_digest(ComputeDatabaseDigest(p));
  auto sealed = RuleDatabaseBytesToText(p.SerializeAsString(), "edited.txt");
  EXPECT_TRUE(sealed.ok());
  return *sealed;
}

TEST(DatabaseTest, UnknownOperatorsAreSkippedWithAWarning) {
  auto text = FormatRuleDatabaseText(TestHeader(), Fixture());
  ASSERT_TRUE(text.ok());
  std::string edited = WrittenElsewhere(*text, "(relu ", "(mish ");
  auto db = ParseRuleDatabaseText(edited, "new.txt");
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ(db->skipped_unknown_operator, 1);
  EXPECT_EQ(db->rules.size(), Fixture().size() - 1);
  ASSERT_EQ(db->warnings.size(), 1u);
  EXPECT_NE(db->warnings[0].find("new.txt: rule "), std::string::npos);
  EXPECT_NE(db->warnings[0].find("unknown operator 'mish'"), std::string::npos) << db->warnings[0];
  // The protobuf form of the same file skips the same rule: conversion does not need the op.
  auto bytes = RuleDatabaseTextToBytes(edited, "new.txt");
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto from_bytes = ParseRuleDatabaseBytes(*bytes, "new.pb");
  ASSERT_TRUE(from_bytes.ok());
  EXPECT_EQ(from_bytes->skipped_unknown_operator, 1);
  // Unknown parameters and parameter values are skipped the same way.
  auto param = ParseRuleDatabaseText(WrittenElsewhere(*text, "[axis=1]", "[dim=1]"), "p.txt");
  ASSERT_TRUE(param.ok()) << param.status().message();
  EXPECT_EQ(param->skipped_unknown_operator, 1);
  auto value =
      ParseRuleDatabaseText(WrittenElsewhere(*text, "activation=relu", "activation=mish"), "v.txt");
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value->skipped_unknown_operator, 1);
}

TEST(DatabaseTest, EditedRuleTextIsCaughtByItsId) {
  auto text = FormatRuleDatabaseText(TestHeader(), Fixture());
  ASSERT_TRUE(text.ok());
  // A rule still well-formed, but no longer the rule whose id is stored.
  std::string edited = ReplaceInRules(*text, "(ewadd ?b ?a)", "(ewadd ?a ?b)");
  auto db = ParseRuleDatabaseText(edited, "edited.txt");
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(db.status().message().find("edited.txt: rule "), std::string::npos);
  EXPECT_NE(db.status().message().find("does not match the rule's id"), std::string::npos)
      << db.status().message();
}

TEST(DatabaseTest, MalformedTextGivesErrors) {
  auto good = FormatRuleDatabaseText(TestHeader(), Fixture());
  ASSERT_TRUE(good.ok());
  struct Case {
    std::string text;
    const char* message;
  } cases[] = {
      {"", "bad.txt: empty file"},
      {"hello\n", "bad.txt: line 1: not a verisub rule database"},
      {good->substr(0, good->size() - 1), "missing newline at the end (truncated file?)"},
      {ReplaceInRules(*good, "  # ", " # "), "expected '  # id status ...'"},
      {ReplaceInRules(*good, " proved", " maybe"), "unknown proof status 'maybe'"},
      {ReplaceInRules(*good, "seconds=", "secs="), "expected seconds=..."},
      {ReplaceInRules(*good, " => ", " -> "), "expected 'source => target'"},
      {ReplaceInRules(*good, "?a", "a"), "must be written ?name"},
      {"# verisub-ruledb\n# schema_version: 1\n", "header field 'op_set_fingerprint' missing"},
      {"# verisub-ruledb\n# schema_version: x\n", "line 2: bad schema_version 'x'"},
      {"# verisub-ruledb\n# colour: blue\n", "unknown header field 'colour'"},
      {"# verisub-ruledb\n# tool_version: \"a\\q\"\n", "unknown escape '\\q'"},
  };
  for (const Case& c : cases) {
    auto db = ParseRuleDatabaseText(c.text, "bad.txt");
    ASSERT_FALSE(db.ok()) << c.message;
    EXPECT_NE(db.status().message().find(c.message), std::string::npos)
        << c.message << " -> " << db.status().message();
    EXPECT_EQ(db.status().message().rfind("bad.txt", 0), 0u) << db.status().message();
  }
}

TEST(DatabaseTest, EveryTruncationIsRejected) {
  auto bytes = SerializeRuleDatabase(TestHeader(), Fixture());
  auto text = FormatRuleDatabaseText(TestHeader(), Fixture());
  ASSERT_TRUE(bytes.ok() && text.ok());
  for (size_t n = 0; n < bytes->size(); ++n) {
    auto db = ParseRuleDatabaseBytes(std::string_view(*bytes).substr(0, n), "cut.pb");
    ASSERT_FALSE(db.ok()) << "prefix " << n;
    ASSERT_EQ(db.status().message().rfind("cut.pb: ", 0), 0u) << db.status().message();
  }
  for (size_t n = 0; n < text->size(); ++n) {
    auto db = ParseRuleDatabaseText(std::string_view(*text).substr(0, n), "cut.txt");
    ASSERT_FALSE(db.ok()) << "prefix " << n;
  }
}

TEST(DatabaseTest, DuplicateRulesAreRejectedWhenWriting) {
  std::vector<Rule> rules = Fixture();
  rules.push_back(rules[3]);
  auto bytes = SerializeRuleDatabase(TestHeader(), rules);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("duplicate rule"), std::string::npos);
}

TEST(DatabaseTest, WriteThenLoadBothForms) {
  const std::string dir = ::testing::TempDir() + "/ruledb_write_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/rules.pb";
  ASSERT_TRUE(WriteRuleDatabase(path, TestHeader(), Fixture()).ok());
  EXPECT_EQ(TextPathFor(path), dir + "/rules.txt");
  auto pb = LoadRuleDatabase(path);
  ASSERT_TRUE(pb.ok()) << pb.status().message();
  auto txt = LoadRuleDatabase(TextPathFor(path));
  ASSERT_TRUE(txt.ok()) << txt.status().message();
  ASSERT_EQ(pb->rules.size(), Fixture().size());
  ASSERT_EQ(txt->rules.size(), pb->rules.size());
  for (size_t i = 0; i < pb->rules.size(); ++i)
    EXPECT_EQ(pb->rules[i].ToText(), txt->rules[i].ToText());
  // No temporary files are left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 2);
  auto missing = LoadRuleDatabase(dir + "/none.pb");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), dir + "/none.pb: cannot open");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace verisub::ruledb
