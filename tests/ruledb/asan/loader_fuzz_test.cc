// The rules-file loader on hostile input, built with AddressSanitizer and UBSan: every
// truncation, random byte mutations of both file forms, and crafted protobuf messages (cycles,
// out-of-range references, exponential sharing) give an error naming the file, never a crash.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "ruledb/database.h"
#include "ruledb/proto_rule.h"
#include "ruledb/ruledb.pb.h"
#include "tests/ruledb/fixture.h"

namespace verisub::ruledb {
namespace {

struct Files {
  std::string bytes, text;
};

// The fixture's first `max_rules` rules as both file forms.
Files FixtureFiles(size_t max_rules = 1000) {
  auto rules = testing::LoadFixtureRules();
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  Files f;
  if (!rules.ok()) return f;
  if (rules->size() > max_rules) rules->resize(max_rules);
  rules->front().proof = {ProofStatus::kUnknown, {}, 2.5, "solver said \"unknown\"\n"};
  f.bytes = *SerializeRuleDatabase(testing::TestHeader(), *rules);
  f.text = *FormatRuleDatabaseText(testing::TestHeader(), *rules);
  return f;
}

// Loads `contents` every way a user can; checks errors name the file. Returns how many loads
// succeeded.
int LoadAllWays(const std::string& contents, bool text) {
  int ok = 0;
  LoadOptions strict, lenient;
  lenient.allow_op_set_mismatch = true;
  lenient.proved_only = false;
  for (const LoadOptions& o : {strict, lenient}) {
    auto db = text ? ParseRuleDatabaseText(contents, "fuzz.file", o)
                   : ParseRuleDatabaseBytes(contents, "fuzz.file", o);
    if (db.ok()) {
      ++ok;
      for (const Rule& r : db->rules) EXPECT_EQ(r.Id().size(), 16u);
    } else {
      EXPECT_EQ(db.status().message().rfind("fuzz.file: ", 0), 0u) << db.status().message();
    }
  }
  auto converted = text ? RuleDatabaseTextToBytes(contents, "fuzz.file")
                        : RuleDatabaseBytesToText(contents, "fuzz.file");
  ok += converted.ok();
  return ok;
}

std::string Mutate(std::string s, std::mt19937_64& rng) {
  int edits = 1 + static_cast<int>(rng() % 6);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    size_t pos = rng() % s.size();
    switch (rng() % 4) {
      case 0:
        s[pos] = static_cast<char>(rng());
        break;
      case 1:
        s[pos] ^= static_cast<char>(1 << (rng() % 8));
        break;
      case 2:
        s.erase(pos, 1 + rng() % 8);
        break;
      case 3:
        s.insert(pos, std::string(1 + rng() % 4, static_cast<char>(rng())));
        break;
    }
  }
  return s;
}

TEST(LoaderAsanTest, EveryTruncationIsAnError) {
  // Every prefix is one parse, so the file is kept small (the full fixture is cut at every byte,
  // without sanitizers, in database_test).
  Files f = FixtureFiles(12);
  for (size_t n = 0; n < f.bytes.size(); ++n) {
    auto db = ParseRuleDatabaseBytes(f.bytes.substr(0, n), "fuzz.file");
    ASSERT_FALSE(db.ok()) << n;
  }
  for (size_t n = 0; n < f.text.size(); ++n) {
    auto db = ParseRuleDatabaseText(f.text.substr(0, n), "fuzz.file");
    ASSERT_FALSE(db.ok()) << n;
  }
}

TEST(LoaderAsanTest, MutatedFilesNeverCrash) {
  Files f = FixtureFiles();
  ASSERT_EQ(LoadAllWays(f.bytes, false), 3);  // twin: the intact files load every way
  ASSERT_EQ(LoadAllWays(f.text, true), 3);
  std::mt19937_64 rng(12345);
  int loaded = 0;
  for (int i = 0; i < 1500; ++i) {
    loaded += LoadAllWays(Mutate(f.bytes, rng), false);
    loaded += LoadAllWays(Mutate(f.text, rng), true);
  }
  // Most mutations are caught (ids hash the rule text); some, e.g. in a proof time, are benign.
  EXPECT_LT(loaded, 1500 * 6);
}

v2::RuleDatabase FixtureProto() {
  v2::RuleDatabase p;
  EXPECT_TRUE(p.ParseFromString(FixtureFiles().bytes));
  return p;
}

TEST(LoaderAsanTest, CraftedMessagesAreErrors) {
  using Edit = void (*)(v2::Rule*);
  const Edit edits[] = {
      [](v2::Rule* r) { r->mutable_src()->mutable_outputs(0)->set_node(1000); },
      [](v2::Rule* r) { r->mutable_src()->mutable_outputs(0)->set_node(-7); },
      [](v2::Rule* r) { r->mutable_src()->mutable_outputs(0)->set_index(1u << 31); },
      [](v2::Rule* r) { r->set_num_inputs(0); },
      [](v2::Rule* r) { r->set_num_inputs(4000000000u); },
      [](v2::Rule* r) {  // a node that reads itself
        v2::Node* n = r->mutable_src()->mutable_nodes(0);
        if (n->inputs_size() > 0) {
          n->mutable_inputs(0)->set_node(0);
          n->mutable_inputs(0)->set_index(0);
        }
      },
      [](v2::Rule* r) { r->mutable_dst()->clear_outputs(); },
      [](v2::Rule* r) { r->mutable_src()->mutable_nodes(0)->clear_inputs(); },
      [](v2::Rule* r) { r->mutable_proof()->set_status(static_cast<v2::ProofStatus>(99)); },
      [](v2::Rule* r) { r->set_id("not an id"); },
      [](v2::Rule* r) {  // one input rank more than inputs
        for (uint32_t i = 0; i <= r->num_inputs(); ++i) r->add_input_ranks(2);
      },
      [](v2::Rule* r) {  // ranks no tensor has
        for (uint32_t i = 0; i < r->num_inputs(); ++i) r->add_input_ranks(4000000000u);
      },
      [](v2::Rule* r) {  // 60 relus each reading the previous twice: 2^60 as a tree
        v2::Graph* g = r->mutable_src();
        g->clear_nodes();
        g->clear_outputs();
        for (int i = 0; i < 60; ++i) {
          v2::Node* n = g->add_nodes();
          n->set_op("ewadd");
          for (int k = 0; k < 2; ++k) {
            v2::Value* v = n->add_inputs();
            v->set_node(i - 1);
            v->set_index(0);
          }
        }
        g->add_outputs()->set_node(59);
      },
  };
  v2::RuleDatabase base = FixtureProto();
  ASSERT_GT(base.rules_size(), 5);
  int e = 0;
  for (Edit edit : edits) {
    for (int which : {0, 5, base.rules_size() - 1}) {
      v2::RuleDatabase p = base;
      edit(p.mutable_rules(which));
      std::string bytes = p.SerializeAsString();
      auto db = ParseRuleDatabaseBytes(bytes, "fuzz.file");
      EXPECT_FALSE(db.ok()) << "edit " << e << " rule " << which;
      if (!db.ok()) {
        EXPECT_NE(db.status().message().find("fuzz.file: rule " + std::to_string(which)),
                  std::string::npos)
            << db.status().message();
      }
      LoadAllWays(bytes, false);
    }
    ++e;
  }
}

}  // namespace
}  // namespace verisub::ruledb
